//===- Planner.cpp - C API of the dist planner (dist-c/Planner.h) ---------===//
//
// Reads the JSON request, builds the same PlanRequest dist-plan builds from
// its flags, and answers planToJSON's text or {"error": ...}. Every failure
// becomes an error object: nothing here may abort the caller's process.
//
//===----------------------------------------------------------------------===//

#include "dist-c/Planner.h"
#include "dist/Planner/LayoutProblemJSON.h"

#include "dist/Planner/BoundedJSON.h"
#include "dist/Planner/CostModel.h"
#include "dist/Planner/Planner.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

using namespace dist::planner;

namespace {

/// Copies `text` into a malloc'd C string (what distFreeString frees).
char *toCString(llvm::StringRef text) {
  char *out = static_cast<char *>(std::malloc(text.size() + 1));
  if (!out)
    return nullptr;
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return out;
}

std::string errorObject(llvm::StringRef message) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(llvm::json::Object{{"error", message.str()}});
  return text;
}

/// The request's keys (PlanRequestKeys.def: the rows the C API takes).
const std::vector<llvm::StringRef> &knownKeys() {
  static const std::vector<llvm::StringRef> keys = [] {
    std::vector<llvm::StringRef> all;
#define DIST_PLAN_REQUEST_KEY(Flag, Key, Keyword)                              \
  if (llvm::StringRef(Key).size())                                             \
    all.push_back(Key);
#include "dist/Planner/PlanRequestKeys.def"
    return all;
  }();
  return keys;
}

/// "a, b or c".
std::string listOf(const std::vector<llvm::StringRef> &words) {
  std::string text;
  for (size_t i = 0; i < words.size(); ++i)
    text += (i == 0                  ? ""
             : i + 1 == words.size() ? " or "
                                     : ", ") +
            words[i].str();
  return text;
}

/// The request's keys, checked for presence and type as they are read.
class RequestReader {
public:
  explicit RequestReader(const llvm::json::Object &object) : object(object) {}

  /// A misspelt key must not silently fall back to a default.
  llvm::Error checkKeys() const {
    for (const auto &entry : object) {
      llvm::StringRef key = entry.first;
      if (!llvm::is_contained(knownKeys(), key))
        return fail(key, "unknown key (expected " + listOf(knownKeys()) + ")");
    }
    return llvm::Error::success();
  }

  /// The string value of `key`; nullopt when absent.
  llvm::Expected<std::optional<std::string>>
  optionalString(llvm::StringRef key) const {
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return std::nullopt;
    std::optional<llvm::StringRef> text = value->getAsString();
    if (!text)
      return fail(key, "must be a string");
    return text->str();
  }

  llvm::Expected<std::string> requiredString(llvm::StringRef key) const {
    llvm::Expected<std::optional<std::string>> value = optionalString(key);
    if (!value)
      return value.takeError();
    if (!*value)
      return fail(key, "is required");
    return **value;
  }

  const llvm::json::Value *get(llvm::StringRef key) const {
    return object.get(key);
  }

  static llvm::Error fail(llvm::StringRef key, const llvm::Twine &message) {
    return llvm::createStringError("\"" + key + "\": " + message);
  }

private:
  const llvm::json::Object &object;
};

/// Prefixes an error from the planner's parsers with the key it came from.
llvm::Error atKey(llvm::StringRef key, llvm::Error error) {
  return RequestReader::fail(key, llvm::toString(std::move(error)));
}

llvm::Expected<Layout> layoutAt(const RequestReader &reader,
                                llvm::StringRef key, const Mesh &mesh,
                                const TensorSpec &tensor) {
  llvm::Expected<std::string> text = reader.requiredString(key);
  if (!text)
    return text.takeError();
  llvm::Expected<Layout> layout = parseLayout(mesh, *text);
  if (!layout)
    return atKey(key, layout.takeError());
  if (llvm::Error e = verifyLayout(mesh, *layout, tensor.shape.size()))
    return atKey(key, std::move(e));
  if (llvm::Error e = verifyLayoutShape(*layout, tensor.shape))
    return atKey(key, std::move(e));
  return *layout;
}

/// A mesh given as text under `key`; nullopt when absent.
llvm::Expected<std::optional<Mesh>> meshAt(const RequestReader &reader,
                                           llvm::StringRef key) {
  llvm::Expected<std::optional<std::string>> text = reader.optionalString(key);
  if (!text)
    return text.takeError();
  if (!*text)
    return std::nullopt;
  llvm::Expected<Mesh> mesh = Mesh::parse(**text);
  if (!mesh)
    return atKey(key, mesh.takeError());
  return std::optional<Mesh>(std::move(*mesh));
}

/// "topology": the object a topology file holds (semantics §3), given the same
/// checks as dist-plan --topology. Across meshes it may name the axes of
/// both; on one mesh it may not give a transfer link.
llvm::Expected<Topology> topologyAt(const RequestReader &reader,
                                    const Mesh &mesh,
                                    const std::optional<Mesh> &targetMesh) {
  Topology topology;
  if (const llvm::json::Value *value = reader.get("topology")) {
    if (!value->getAsObject())
      return RequestReader::fail("topology", "must be an object");
    std::string text;
    llvm::raw_string_ostream os(text);
    os << *value;
    llvm::Expected<Topology> parsed = Topology::parseJSON(text);
    if (!parsed)
      return atKey("topology", parsed.takeError());
    topology = std::move(*parsed);
  }
  for (const auto &[name, params] : topology.axes)
    if (targetMesh && !mesh.findAxis(name) && !targetMesh->findAxis(name))
      return RequestReader::fail("topology",
                                 "axis \"" + name + "\" is in neither mesh");
  if (topology.transfer && !targetMesh)
    return RequestReader::fail("topology",
                               "a \"transfer\" link needs \"to_mesh\"");
  return topology;
}

/// An optional key naming one of a few choices (`parse` reads it); the
/// default when absent.
template <typename T>
llvm::Expected<T>
choiceAt(const RequestReader &reader, llvm::StringRef key, T defaultValue,
         std::optional<T> (*parse)(llvm::StringRef), llvm::StringRef choices) {
  llvm::Expected<std::optional<std::string>> text = reader.optionalString(key);
  if (!text)
    return text.takeError();
  if (!*text)
    return defaultValue;
  std::optional<T> value = parse(**text);
  if (!value)
    return RequestReader::fail(key,
                               "'" + **text + "' is not one of " + choices);
  return *value;
}

/// Plans the request; the answer's text either way.
llvm::Expected<std::string> answer(llvm::StringRef requestText) {
  // Bounded: llvm::json::parse recurses once per level of nesting.
  llvm::Expected<llvm::json::Value> parsed = parseBoundedJSON(requestText);
  if (!parsed)
    return llvm::createStringError("request is not valid JSON: " +
                                   llvm::toString(parsed.takeError()));
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return llvm::createStringError("request must be a JSON object");
  RequestReader reader(*object);
  if (llvm::Error error = reader.checkKeys())
    return std::move(error);

  llvm::Expected<std::optional<Mesh>> mesh = meshAt(reader, "mesh");
  if (!mesh)
    return mesh.takeError();
  if (!*mesh)
    return RequestReader::fail("mesh", "is required");
  llvm::Expected<std::optional<Mesh>> targetMesh = meshAt(reader, "to_mesh");
  if (!targetMesh)
    return targetMesh.takeError();

  llvm::Expected<std::string> shapeText = reader.requiredString("shape");
  if (!shapeText)
    return shapeText.takeError();
  llvm::Expected<TensorSpec> tensor = parseTensorSpec(*shapeText);
  if (!tensor)
    return atKey("shape", tensor.takeError());

  const Mesh &source = **mesh;
  const Mesh *target = *targetMesh ? &**targetMesh : nullptr;
  llvm::Expected<Layout> from = layoutAt(reader, "from", source, *tensor);
  if (!from)
    return from.takeError();
  llvm::Expected<Layout> to =
      layoutAt(reader, "to", target ? *target : source, *tensor);
  if (!to)
    return to.takeError();

  llvm::Expected<Topology> topology = topologyAt(reader, source, *targetMesh);
  if (!topology)
    return topology.takeError();
  llvm::Expected<AlphaBetaCostModel> model = AlphaBetaCostModel::create(
      source, target ? topology->restrictedTo(source) : *topology);
  if (!model)
    return atKey("topology", model.takeError());
  std::optional<AlphaBetaCostModel> targetModel;
  if (target) {
    llvm::Expected<AlphaBetaCostModel> created =
        AlphaBetaCostModel::create(*target, topology->restrictedTo(*target));
    if (!created)
      return atKey("topology", created.takeError());
    targetModel.emplace(std::move(*created));
  }

  llvm::Expected<Strategy> strategy = choiceAt(
      reader, "strategy", Strategy::Optimal, parseStrategy, "optimal, greedy");
  if (!strategy)
    return strategy.takeError();
  llvm::Expected<MoveSet> moves =
      choiceAt(reader, "moves", MoveSet::All, parseMoveSet, "all, collective");
  if (!moves)
    return moves.takeError();

  std::optional<int64_t> maxPeakBytes;
  if (const llvm::json::Value *value = reader.get("max_peak_bytes")) {
    std::optional<int64_t> limit = value->getAsInteger();
    if (!limit || *limit < 0)
      return RequestReader::fail("max_peak_bytes",
                                 "must be a non-negative integer");
    maxPeakBytes = *limit;
  }

  PlanRequest request(source, tensor->shape, tensor->elementBytes, *from, *to);
  request.strategy = *strategy;
  request.costModel = &*model;
  request.moves = *moves;
  request.maxPeakBytes = maxPeakBytes;
  if (target) {
    request.targetMesh = *target;
    request.targetCostModel = &*targetModel;
    request.transfer = topology->transfer;
  }
  llvm::Expected<Plan> plan = planReshard(request);
  if (!plan)
    return llvm::createStringError("no plan: " +
                                   llvm::toString(plan.takeError()));
  return planToJSON(source, *plan, target);
}

} // namespace

extern "C" char *distPlanJSON(const char *request) {
  if (!request)
    return toCString(errorObject("request is NULL"));
  llvm::Expected<std::string> text = answer(request);
  if (!text)
    return toCString(errorObject(llvm::toString(text.takeError())));
  return toCString(*text);
}

extern "C" char *distSolveLayoutsJSON(const char *problem) {
  if (!problem)
    return toCString(errorObject("problem is NULL"));
  llvm::Expected<std::string> text =
      dist::planner::layout::solveLayoutProblemJSON(problem);
  if (!text)
    return toCString(errorObject(llvm::toString(text.takeError())));
  return toCString(*text);
}

extern "C" void distFreeString(char *string) { std::free(string); }
