//===- Planner.cpp - C API of the dist planner (dist-c/Planner.h) ---------===//
//
// Reads the JSON request, builds the same PlanRequest dist-plan builds from
// its flags, and answers planToJSON's text or {"error": ...}. Every failure
// becomes an error object: nothing here may abort the caller's process.
//
//===----------------------------------------------------------------------===//

#include "dist-c/Planner.h"

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Planner.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

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

constexpr const char *kKnownKeys[] = {
    "mesh",     "to_mesh", "shape",         "from", "to", "topology",
    "strategy", "moves",   "max_peak_bytes"};

/// The request's keys, checked for presence and type as they are read.
class RequestReader {
public:
  explicit RequestReader(const llvm::json::Object &object) : object(object) {}

  /// A misspelt key must not silently fall back to a default.
  llvm::Error checkKeys() const {
    for (const auto &entry : object) {
      llvm::StringRef key = entry.first;
      if (!llvm::is_contained(kKnownKeys, key))
        return fail(key, "unknown key (expected mesh, to_mesh, shape, from, "
                         "to, topology, strategy, moves or max_peak_bytes)");
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

/// Plans the request; the answer's text either way.
llvm::Expected<std::string> answer(llvm::StringRef requestText) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(requestText);
  if (!parsed)
    return llvm::createStringError("request is not valid JSON: " +
                                   llvm::toString(parsed.takeError()));
  const llvm::json::Object *object = parsed->getAsObject();
  if (!object)
    return llvm::createStringError("request must be a JSON object");
  RequestReader reader(*object);
  if (llvm::Error error = reader.checkKeys())
    return std::move(error);

  llvm::Expected<std::string> meshText = reader.requiredString("mesh");
  if (!meshText)
    return meshText.takeError();
  llvm::Expected<Mesh> mesh = Mesh::parse(*meshText);
  if (!mesh)
    return atKey("mesh", mesh.takeError());

  llvm::Expected<std::string> shapeText = reader.requiredString("shape");
  if (!shapeText)
    return shapeText.takeError();
  llvm::Expected<TensorSpec> tensor = parseTensorSpec(*shapeText);
  if (!tensor)
    return atKey("shape", tensor.takeError());

  std::optional<Mesh> targetMesh;
  llvm::Expected<std::optional<std::string>> toMeshText =
      reader.optionalString("to_mesh");
  if (!toMeshText)
    return toMeshText.takeError();
  if (*toMeshText) {
    llvm::Expected<Mesh> parsedMesh = Mesh::parse(**toMeshText);
    if (!parsedMesh)
      return atKey("to_mesh", parsedMesh.takeError());
    targetMesh = std::move(*parsedMesh);
  }

  llvm::Expected<Layout> from = layoutAt(reader, "from", *mesh, *tensor);
  if (!from)
    return from.takeError();
  llvm::Expected<Layout> to =
      layoutAt(reader, "to", targetMesh ? *targetMesh : *mesh, *tensor);
  if (!to)
    return to.takeError();

  // The topology is the object a topology file holds (SPEC §3); the
  // planner's reader gives it the same checks as dist-plan --topology.
  Topology topology;
  if (const llvm::json::Value *value = reader.get("topology")) {
    if (!value->getAsObject())
      return RequestReader::fail("topology", "must be an object");
    std::string text;
    llvm::raw_string_ostream os(text);
    os << *value;
    llvm::Expected<Topology> parsedTopology = Topology::parseJSON(text);
    if (!parsedTopology)
      return atKey("topology", parsedTopology.takeError());
    topology = std::move(*parsedTopology);
  }
  for (const auto &[name, params] : topology.axes)
    if (targetMesh && !mesh->findAxis(name) && !targetMesh->findAxis(name))
      return RequestReader::fail("topology",
                                 "axis \"" + name + "\" is in neither mesh");
  if (topology.transfer && !targetMesh)
    return RequestReader::fail("topology",
                               "a \"transfer\" link needs \"to_mesh\"");
  llvm::Expected<AlphaBetaCostModel> model = AlphaBetaCostModel::create(
      *mesh, targetMesh ? topology.restrictedTo(*mesh) : topology);
  if (!model)
    return atKey("topology", model.takeError());
  std::optional<AlphaBetaCostModel> targetModel;
  if (targetMesh) {
    llvm::Expected<AlphaBetaCostModel> created = AlphaBetaCostModel::create(
        *targetMesh, topology.restrictedTo(*targetMesh));
    if (!created)
      return atKey("topology", created.takeError());
    targetModel.emplace(std::move(*created));
  }

  Strategy strategy = Strategy::Optimal;
  llvm::Expected<std::optional<std::string>> strategyText =
      reader.optionalString("strategy");
  if (!strategyText)
    return strategyText.takeError();
  if (*strategyText) {
    std::optional<Strategy> value = parseStrategy(**strategyText);
    if (!value)
      return RequestReader::fail("strategy", "'" + **strategyText +
                                                 "' is not one of optimal, "
                                                 "greedy");
    strategy = *value;
  }
  MoveSet moves = MoveSet::All;
  llvm::Expected<std::optional<std::string>> movesText =
      reader.optionalString("moves");
  if (!movesText)
    return movesText.takeError();
  if (*movesText) {
    std::optional<MoveSet> value = parseMoveSet(**movesText);
    if (!value)
      return RequestReader::fail("moves", "'" + **movesText +
                                              "' is not one of all, "
                                              "collective");
    moves = *value;
  }

  std::optional<int64_t> maxPeakBytes;
  if (const llvm::json::Value *value = reader.get("max_peak_bytes")) {
    std::optional<int64_t> limit = value->getAsInteger();
    if (!limit || *limit < 0)
      return RequestReader::fail("max_peak_bytes",
                                 "must be a non-negative integer");
    maxPeakBytes = *limit;
  }

  PlanRequest request(*mesh, tensor->shape, tensor->elementBytes, *from, *to);
  request.strategy = strategy;
  request.costModel = &*model;
  request.moves = moves;
  request.maxPeakBytes = maxPeakBytes;
  if (targetMesh) {
    request.targetMesh = *targetMesh;
    request.targetCostModel = &*targetModel;
    request.transfer = topology.transfer;
  }
  llvm::Expected<Plan> plan = planReshard(request);
  if (!plan)
    return llvm::createStringError("no plan: " +
                                   llvm::toString(plan.takeError()));
  return planToJSON(*mesh, *plan, targetMesh ? &*targetMesh : nullptr);
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

extern "C" void distFreeString(char *string) { std::free(string); }
