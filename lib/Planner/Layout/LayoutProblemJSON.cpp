//===- LayoutProblemJSON.cpp - the layout solver from JSON ----------------===//

#include "dist/Planner/LayoutProblemJSON.h"
#include "dist/Planner/BoundedJSON.h"
#include "dist/Planner/CostModel.h"
#include "dist/Planner/LayoutSolver.h"

#include "llvm/ADT/Twine.h"
#include "llvm/Support/JSON.h"

#include <cmath>
#include <limits>
#include <vector>

using namespace dist::planner;
using namespace dist::planner::layout;

namespace {

llvm::Error fail(const llvm::Twine &path, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "\"" + path + "\": " + message);
}

/// Reads one JSON object's keys by name, each at most once, and says which
/// keys it did not know.
class ObjectReader {
public:
  ObjectReader(const llvm::json::Object &object, std::string path)
      : object(object), path(std::move(path)) {}

  /// An array of numbers (null: +infinity where `nullIsInfinity`), each
  /// finite or infinite, never negative or NaN. Absent: empty.
  llvm::Error numbers(llvm::StringRef key, std::vector<double> &out,
                      bool nullIsInfinity = false) {
    known.push_back(key.str());
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return llvm::Error::success();
    const llvm::json::Array *array = value->getAsArray();
    std::string at = path + "." + key.str();
    if (!array)
      return fail(at, "must be an array of numbers");
    if (int64_t(array->size()) > kMaxProblemTableEntries)
      return fail(at, "has more than " + llvm::Twine(kMaxProblemTableEntries) +
                          " entries");
    for (const llvm::json::Value &entry : *array) {
      if (nullIsInfinity && entry.getAsNull()) {
        out.push_back(std::numeric_limits<double>::infinity());
        continue;
      }
      std::optional<double> number = entry.getAsNumber();
      if (!number || std::isnan(*number) || *number < 0)
        return fail(at, nullIsInfinity
                            ? "must hold numbers >= 0 (null: impossible)"
                            : "must hold numbers >= 0");
      out.push_back(*number);
    }
    return llvm::Error::success();
  }
  /// An array of indices below `bound`.
  llvm::Error indices(llvm::StringRef key, int64_t bound,
                      std::vector<unsigned> &out) {
    std::vector<double> values;
    if (llvm::Error error = numbers(key, values))
      return error;
    for (double v : values)
      if (v != std::floor(v) || v >= double(bound))
        return fail(path + "." + key.str(),
                    "must hold integers below " + llvm::Twine(bound));
      else
        out.push_back(unsigned(v));
    return llvm::Error::success();
  }
  /// An integer in [0, bound); required.
  llvm::Error index(llvm::StringRef key, int64_t bound, unsigned &out) {
    known.push_back(key.str());
    std::string at = path + "." + key.str();
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return fail(at, "is required");
    std::optional<int64_t> v = value->getAsInteger();
    if (!v || *v < 0 || *v >= bound)
      return fail(at, "must be an integer from 0 to " + llvm::Twine(bound - 1));
    out = unsigned(*v);
    return llvm::Error::success();
  }
  llvm::Error number(llvm::StringRef key, std::optional<double> &out) {
    known.push_back(key.str());
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return llvm::Error::success();
    std::optional<double> v = value->getAsNumber();
    if (!v || !std::isfinite(*v) || *v < 0)
      return fail(path + "." + key.str(), "must be a finite number >= 0");
    out = *v;
    return llvm::Error::success();
  }
  llvm::Error flag(llvm::StringRef key, bool &out) {
    known.push_back(key.str());
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return llvm::Error::success();
    std::optional<bool> v = value->getAsBoolean();
    if (!v)
      return fail(path + "." + key.str(), "must be true or false");
    out = *v;
    return llvm::Error::success();
  }
  llvm::Error string(llvm::StringRef key, std::optional<std::string> &out) {
    known.push_back(key.str());
    const llvm::json::Value *value = object.get(key);
    if (!value)
      return llvm::Error::success();
    std::optional<llvm::StringRef> v = value->getAsString();
    if (!v)
      return fail(path + "." + key.str(), "must be a string");
    out = v->str();
    return llvm::Error::success();
  }
  /// After every key was read: an unknown key is an error (a typo would
  /// otherwise be ignored silently).
  llvm::Error noOthers() const {
    for (const auto &entry : object)
      if (!llvm::is_contained(known, entry.first.str()))
        return fail(path + "." + entry.first.str(), "is not a known key");
    return llvm::Error::success();
  }

private:
  const llvm::json::Object &object;
  std::string path;
  std::vector<std::string> known;
};

const llvm::json::Object *objectAt(const llvm::json::Value &value) {
  return value.getAsObject();
}

llvm::Error readNode(const llvm::json::Value &value, unsigned i,
                     NodeSpec &spec) {
  std::string path = "nodes[" + std::to_string(i) + "]";
  const llvm::json::Object *object = objectAt(value);
  if (!object)
    return fail(path, "must be an object");
  ObjectReader reader(*object, path);
  if (llvm::Error error = reader.numbers("work", spec.work))
    return error;
  if (llvm::Error error = reader.numbers("seconds", spec.seconds))
    return error;
  if (llvm::Error error = reader.numbers("bytes", spec.bytes))
    return error;
  if (llvm::Error error = reader.flag("argument", spec.argument))
    return error;
  if (llvm::Error error = reader.flag("held_to_end", spec.heldToEnd))
    return error;
  if (llvm::Error error = reader.noOthers())
    return error;
  const size_t n = spec.work.size();
  if (n == 0)
    return fail(path + ".work", "must give every strategy's work (at least "
                                "one strategy)");
  if (int64_t(n) > kMaxNodeStrategies)
    return fail(path + ".work", "has more than " +
                                    llvm::Twine(kMaxNodeStrategies) +
                                    " strategies");
  if (!spec.seconds.empty() && spec.seconds.size() != n)
    return fail(path + ".seconds",
                "must have one entry per strategy (" + llvm::Twine(n) + ")");
  if (!spec.bytes.empty() && spec.bytes.size() != n)
    return fail(path + ".bytes",
                "must have one entry per strategy (" + llvm::Twine(n) + ")");
  return llvm::Error::success();
}

llvm::Error readEdge(const llvm::json::Value &value, unsigned i,
                     LayoutProblem &problem, int64_t &entries) {
  std::string path = "edges[" + std::to_string(i) + "]";
  const llvm::json::Object *object = objectAt(value);
  if (!object)
    return fail(path, "must be an object");
  ObjectReader reader(*object, path);
  const int64_t numNodes = problem.numNodes();
  unsigned from = 0, to = 0;
  if (llvm::Error error = reader.index("from", numNodes, from))
    return error;
  if (llvm::Error error = reader.index("to", numNodes, to))
    return error;
  if (from >= to)
    return fail(path, "must go from a lower node to a higher one (nodes are "
                      "in program order)");
  const unsigned fromStrategies = problem.numStrategies(from);
  const unsigned toStrategies = problem.numStrategies(to);
  // Layouts: by default strategy i gives (needs) layout i.
  std::vector<unsigned> fromLayout, toLayout;
  if (llvm::Error error =
          reader.indices("from_layout", kMaxNodeStrategies, fromLayout))
    return error;
  if (llvm::Error error =
          reader.indices("to_layout", kMaxNodeStrategies, toLayout))
    return error;
  auto identity = [](unsigned n) {
    std::vector<unsigned> ids(n);
    for (unsigned k = 0; k < n; ++k)
      ids[k] = k;
    return ids;
  };
  if (fromLayout.empty())
    fromLayout = identity(fromStrategies);
  if (toLayout.empty())
    toLayout = identity(toStrategies);
  if (fromLayout.size() != fromStrategies)
    return fail(path + ".from_layout",
                "must have one entry per strategy of node " +
                    llvm::Twine(from) + " (" + llvm::Twine(fromStrategies) +
                    ")");
  if (toLayout.size() != toStrategies)
    return fail(path + ".to_layout",
                "must have one entry per strategy of node " + llvm::Twine(to) +
                    " (" + llvm::Twine(toStrategies) + ")");
  unsigned rows = 0, columns = 0;
  for (unsigned l : fromLayout)
    rows = std::max(rows, l + 1);
  for (unsigned l : toLayout)
    columns = std::max(columns, l + 1);
  std::vector<double> table;
  if (llvm::Error error = reader.numbers("table", table,
                                         /*nullIsInfinity=*/true))
    return error;
  if (table.size() != size_t(rows) * columns)
    return fail(
        path + ".table",
        "must hold " + llvm::Twine(rows) + " x " + llvm::Twine(columns) +
            " seconds (from layout i to layout j at i * " +
            llvm::Twine(columns) + " + j), got " + llvm::Twine(table.size()));
  entries += table.size();
  if (entries > kMaxProblemTableEntries)
    return fail(path + ".table", "passes the problem's limit of " +
                                     llvm::Twine(kMaxProblemTableEntries) +
                                     " table entries");
  std::optional<double> bytes;
  std::vector<double> movedBytes;
  if (llvm::Error error = reader.number("bytes", bytes))
    return error;
  if (llvm::Error error = reader.numbers("moved_bytes", movedBytes))
    return error;
  if (!movedBytes.empty() && movedBytes.size() != columns)
    return fail(path + ".moved_bytes",
                "must have one entry per layout of node " + llvm::Twine(to) +
                    " (" + llvm::Twine(columns) + ")");
  if (llvm::Error error = reader.noOthers())
    return error;
  problem.addEdge(from, to, std::move(fromLayout), std::move(toLayout), columns,
                  std::move(table), bytes.value_or(0), std::move(movedBytes));
  return llvm::Error::success();
}

llvm::Error readOptions(const llvm::json::Value *value, SolveOptions &options) {
  if (!value)
    return llvm::Error::success();
  const llvm::json::Object *object = value->getAsObject();
  if (!object)
    return fail("options", "must be an object");
  ObjectReader reader(*object, "options");
  std::optional<std::string> chooser;
  std::optional<double> budget, timeLimit;
  if (llvm::Error error = reader.string("chooser", chooser))
    return error;
  if (llvm::Error error = reader.number("memory_budget", budget))
    return error;
  if (llvm::Error error = reader.number("time_limit", timeLimit))
    return error;
  if (llvm::Error error = reader.noOthers())
    return error;
  if (chooser) {
    std::optional<LayoutChooser> parsed = parseLayoutChooser(*chooser);
    if (!parsed)
      return fail("options.chooser", "'" + *chooser +
                                         "' is not one of optimal, greedy, "
                                         "keep-larger");
    options.chooser = *parsed;
  }
  if (budget && *budget > 0)
    options.budget = *budget;
  if (timeLimit)
    options.timeLimitSeconds = *timeLimit;
  return llvm::Error::success();
}

llvm::json::Value numberOrNull(double value) {
  if (std::isfinite(value))
    return value;
  return nullptr;
}

} // namespace

llvm::Expected<std::string>
dist::planner::layout::solveLayoutProblemJSON(llvm::StringRef json) {
  llvm::Expected<llvm::json::Value> parsed = parseBoundedJSON(json);
  if (!parsed)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "not JSON: " +
                                       llvm::toString(parsed.takeError()));
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return fail("", "the problem must be a JSON object");
  for (const auto &entry : *root)
    if (!llvm::is_contained({"nodes", "edges", "options"}, entry.first.str()))
      return fail(entry.first.str(), "is not a known key (nodes, edges, "
                                     "options)");
  const llvm::json::Array *nodes = root->getArray("nodes");
  if (!nodes || nodes->empty())
    return fail("nodes", "must be a non-empty array of nodes");
  if (int64_t(nodes->size()) > kMaxProblemNodes)
    return fail("nodes",
                "has more than " + llvm::Twine(kMaxProblemNodes) + " nodes");
  LayoutProblem problem;
  for (auto [i, value] : llvm::enumerate(*nodes)) {
    NodeSpec spec;
    if (llvm::Error error = readNode(value, i, spec))
      return std::move(error);
    problem.addNode(std::move(spec));
  }
  int64_t entries = 0;
  if (const llvm::json::Value *edges = root->get("edges")) {
    const llvm::json::Array *array = edges->getAsArray();
    if (!array)
      return fail("edges", "must be an array of edges");
    for (auto [i, value] : llvm::enumerate(*array))
      if (llvm::Error error = readEdge(value, i, problem, entries))
        return std::move(error);
  }
  SolveOptions options;
  if (llvm::Error error = readOptions(root->get("options"), options))
    return std::move(error);

  Solution solution = problem.solve(options);
  if (!solution.fits) {
    bool exact = false;
    double least = problem.minimumPeakBytes(options, exact);
    return llvm::createStringError(
        std::make_error_code(std::errc::result_out_of_range),
        "\"options.memory_budget\": no choice of layouts fits %s bytes per "
        "device (%s %s)",
        formatDouble(*options.budget).c_str(),
        exact ? "the least any needs is" : "the least the search found is",
        formatDouble(least).c_str());
  }
  if (solution.choice.empty() || std::isinf(solution.total.time))
    return fail("edges", "every choice of strategies has an impossible move "
                         "(a null table entry)");
  llvm::json::Array choice;
  for (unsigned s : solution.choice)
    choice.push_back(int64_t(s));
  llvm::json::Object answer{{"choice", std::move(choice)},
                            {"time", numberOrNull(solution.total.time)},
                            {"compute", numberOrNull(solution.compute)},
                            {"communication", numberOrNull(solution.comm)},
                            {"peak_bytes", numberOrNull(solution.peakBytes)},
                            {"optimal", solution.optimal},
                            {"lower_bound", numberOrNull(solution.lowerBound)},
                            {"fallback_reason", solution.fallbackReason}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(answer));
  return text;
}

LayoutProblemFailure
dist::planner::layout::describeLayoutProblemError(llvm::Error error) {
  LayoutProblemFailure failure;
  llvm::handleAllErrors(std::move(error), [&](const llvm::ErrorInfoBase &info) {
    failure.message = info.message();
    failure.noChoiceFits =
        info.convertToErrorCode() == std::errc::result_out_of_range;
  });
  return failure;
}
