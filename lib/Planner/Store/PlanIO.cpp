//===- PlanIO.cpp - semantics §4 JSON and the text table ------------------===//

#include "Model/Syntax.h"
#include "dist/Planner/BoundedJSON.h"
#include "dist/Planner/CostModel.h"
#include "dist/Planner/Plan.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace dist::planner;
using llvm::createStringError;
using llvm::Error;
using llvm::Expected;
using llvm::inconvertibleErrorCode;

llvm::StringRef dist::planner::stringifyStrategy(Strategy strategy) {
  return strategy == Strategy::Greedy ? "greedy" : "optimal";
}
std::optional<Strategy> dist::planner::parseStrategy(llvm::StringRef text) {
  if (text == "optimal")
    return Strategy::Optimal;
  if (text == "greedy")
    return Strategy::Greedy;
  return std::nullopt;
}
llvm::StringRef dist::planner::stringifyCacheStatus(CacheStatus status) {
  switch (status) {
  case CacheStatus::Hit:
    return "hit";
  case CacheStatus::Miss:
    return "miss";
  case CacheStatus::Off:
    return "off";
  }
  return "off";
}
std::optional<CacheStatus>
dist::planner::parseCacheStatus(llvm::StringRef text) {
  for (CacheStatus s : {CacheStatus::Off, CacheStatus::Hit, CacheStatus::Miss})
    if (stringifyCacheStatus(s) == text)
      return s;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// JSON out: hand-written so that the key order and the number format are
// exactly semantics §4's.
//===----------------------------------------------------------------------===//

static void writeString(std::string &out, llvm::StringRef text) {
  out += '"';
  for (char c : text) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char buf[8];
        snprintf(buf, sizeof(buf), "\\u%04x", c);
        out += buf;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

std::string dist::planner::planToJSON(const Mesh &sourceMesh, const Plan &plan,
                                      const Mesh *targetMesh) {
  std::string out = "{\"strategy\": ";
  writeString(out, stringifyStrategy(plan.strategy));
  out += ", \"cost\": " + formatDouble(plan.cost);
  out += ", \"peak_bytes\": " + std::to_string(plan.peakBytes);
  out += ", \"lower_bound\": " + formatDouble(plan.lowerBound);
  out += ", \"cache\": ";
  writeString(out, stringifyCacheStatus(plan.cache));
  out += ", \"steps\": [";
  // Steps after the transfer of a cross-mesh plan are on the target mesh.
  const Mesh *current = &sourceMesh;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &step = plan.steps[i];
    const Move &move = step.move;
    if (move.kind == MoveKind::Redistribute && move.crossMesh && targetMesh)
      current = targetMesh;
    const Mesh &mesh = *current;
    out += i ? ", {\"op\": " : "{\"op\": ";
    writeString(out, stringifyMoveKind(move.kind));
    out += ", \"axes\": [";
    for (size_t j = 0; j < move.axes.size(); ++j) {
      out += j ? ", " : "";
      writeString(out, move.axes[j] < mesh.getNumAxes()
                           ? mesh.getAxis(move.axes[j]).name
                           : "#" + std::to_string(move.axes[j]));
    }
    out += "], \"dim\": ";
    out += moveHasDim(move.kind) ? std::to_string(move.dim) : "null";
    if (move.kind == MoveKind::AllToAll)
      out += ", \"to_dim\": " + std::to_string(move.toDim);
    if (!move.segments.empty()) {
      out += ", \"segments\": [";
      for (size_t j = 0; j < move.segments.size(); ++j)
        out += (j ? ", " : "") + std::to_string(move.segments[j]);
      out += "]";
    }
    if (moveHasReduction(move.kind)) {
      out += ", \"reduction\": ";
      writeString(out, stringifyReductionKind(move.reduction));
    }
    if (move.kind == MoveKind::Redistribute && move.crossMesh)
      out += ", \"cross_mesh\": true";
    out += ", \"bytes\": " + std::to_string(step.bytesBefore);
    out += ", \"recv_bytes\": " + std::to_string(step.recvBytes);
    out += ", \"cost\": " + formatDouble(step.cost);
    out += ", \"layout\": ";
    writeString(out, printLayout(mesh, step.layout));
    out += "}";
  }
  out += "]}";
  return out;
}

//===----------------------------------------------------------------------===//
// JSON in
//===----------------------------------------------------------------------===//

namespace {
struct Reader {
  const Mesh *mesh;       // the mesh of the step being read
  const Mesh *targetMesh; // null: same-mesh plans only
  // The moves alone are required (planMovesFromJSON): numbers and the
  // layouts of moves without a target may be absent.
  bool movesOnly = false;
  std::optional<Layout> statedLayout; // the last step's layout, if given
  Error fail(const llvm::Twine &msg) {
    return createStringError(inconvertibleErrorCode(), "plan JSON: " + msg);
  }
  Error number(const llvm::json::Object &obj, llvm::StringRef key,
               llvm::StringRef where, double &out) {
    const llvm::json::Value *v = obj.get(key);
    std::optional<double> d = v ? v->getAsNumber() : std::nullopt;
    if (!d)
      return fail(where + " needs a number \"" + key + "\"");
    out = *d;
    return Error::success();
  }
  Error integer(const llvm::json::Object &obj, llvm::StringRef key,
                llvm::StringRef where, int64_t &out) {
    const llvm::json::Value *v = obj.get(key);
    std::optional<int64_t> i = v ? v->getAsInteger() : std::nullopt;
    if (!i)
      return fail(where + " needs an integer \"" + key + "\"");
    out = *i;
    return Error::success();
  }
  Error string(const llvm::json::Object &obj, llvm::StringRef key,
               llvm::StringRef where, llvm::StringRef &out) {
    const llvm::json::Value *v = obj.get(key);
    std::optional<llvm::StringRef> s = v ? v->getAsString() : std::nullopt;
    if (!s)
      return fail(where + " needs a string \"" + key + "\"");
    out = *s;
    return Error::success();
  }

  Error step(const llvm::json::Value &value, size_t index, PlanStep &step) {
    std::string where = "step " + std::to_string(index + 1);
    const llvm::json::Object *obj = value.getAsObject();
    if (!obj)
      return fail(where + " is not an object");
    const Mesh &mesh = *this->mesh;
    llvm::StringRef op, layoutText;
    if (Error e = string(*obj, "op", where, op))
      return e;
    std::optional<MoveKind> kind = parseMoveKind(op);
    if (!kind)
      return fail(where + ": unknown op \"" + op + "\"");
    Move &move = step.move;
    move.kind = *kind;
    const llvm::json::Array *axes = obj->getArray("axes");
    if (!axes)
      return fail(where + " needs an array \"axes\"");
    for (const llvm::json::Value &axis : *axes) {
      std::optional<llvm::StringRef> name = axis.getAsString();
      std::optional<unsigned> index =
          name ? mesh.findAxis(*name) : std::nullopt;
      if (!index)
        return fail(
            where + ": axis " +
            (name ? detail::quoteName(*name) : std::string("(non-string)")) +
            " is not in mesh " + mesh.str());
      move.axes.push_back(*index);
    }
    if (moveHasDim(move.kind))
      if (Error e = integer(*obj, "dim", where, move.dim))
        return e;
    if (move.kind == MoveKind::AllToAll)
      if (Error e = integer(*obj, "to_dim", where, move.toDim))
        return e;
    if (const llvm::json::Value *segments = obj->get("segments")) {
      const llvm::json::Array *list = segments->getAsArray();
      if (!list || !moveSplitsDim(move.kind))
        return fail(where + ": \"segments\" is an array of integers on an "
                            "all_slice, reduce_scatter or all_to_all");
      for (const llvm::json::Value &n : *list) {
        std::optional<int64_t> length = n.getAsInteger();
        if (!length)
          return fail(where + ": \"segments\" holds a non-integer");
        move.segments.push_back(*length);
      }
    }
    if (moveHasReduction(move.kind)) {
      llvm::StringRef red;
      if (Error e = string(*obj, "reduction", where, red))
        return e;
      std::optional<ReductionKind> r = parseReductionKind(red);
      if (!r)
        return fail(where + ": unknown reduction \"" + red + "\"");
      move.reduction = *r;
    }
    if (const llvm::json::Value *cross = obj->get("cross_mesh")) {
      if (move.kind != MoveKind::Redistribute || cross->getAsBoolean() != true)
        return fail(where + ": \"cross_mesh\" is only `true` on a "
                            "redistribute");
      if (!targetMesh)
        return fail(where + " moves to another mesh, but no target mesh "
                            "was given");
      move.crossMesh = true;
      this->mesh = targetMesh;
    }
    if (!movesOnly || obj->get("bytes"))
      if (Error e = integer(*obj, "bytes", where, step.bytesBefore))
        return e;
    if (obj->get("recv_bytes"))
      if (Error e = integer(*obj, "recv_bytes", where, step.recvBytes))
        return e;
    if (!movesOnly || obj->get("cost"))
      if (Error e = number(*obj, "cost", where, step.cost))
        return e;
    statedLayout.reset();
    if (movesOnly && !moveHasTarget(move.kind) && !obj->get("layout"))
      return Error::success();
    if (Error e = string(*obj, "layout", where, layoutText))
      return e;
    Expected<Layout> layout = parseLayout(*this->mesh, layoutText);
    if (!layout)
      return fail(where + ": " + llvm::toString(layout.takeError()));
    step.layout = *layout;
    statedLayout = *layout;
    if (moveHasTarget(move.kind))
      move.permuteTarget = *layout;
    return Error::success();
  }
};
} // namespace

/// The steps of a plan object, read by `reader`.
static Error readSteps(Reader &reader, const llvm::json::Object &obj,
                       Plan &plan,
                       std::vector<std::optional<Layout>> *statedLayouts) {
  const llvm::json::Array *steps = obj.getArray("steps");
  if (!steps)
    return reader.fail("the plan needs an array \"steps\"");
  int64_t previousBytes = -1;
  for (size_t i = 0; i < steps->size(); ++i) {
    PlanStep step;
    if (Error e = reader.step((*steps)[i], i, step))
      return e;
    // bytesAfter is not in the JSON: it is the next step's bytesBefore, and
    // replayPlan recomputes all of them anyway.
    if (previousBytes >= 0)
      plan.steps.back().bytesAfter = step.bytesBefore;
    previousBytes = step.bytesBefore;
    plan.steps.push_back(std::move(step));
    if (statedLayouts)
      statedLayouts->push_back(reader.statedLayout);
  }
  return Error::success();
}

/// The plan's JSON, parsed and checked to be an object.
static Expected<llvm::json::Value> parsePlanObject(Reader &reader,
                                                   llvm::StringRef json) {
  Expected<llvm::json::Value> root = parseBoundedJSON(json);
  if (!root)
    return reader.fail(llvm::toString(root.takeError()));
  if (!root->getAsObject())
    return reader.fail("the top level is not an object");
  return root;
}

static Error readStrategy(Reader &reader, const llvm::json::Object &obj,
                          Plan &plan) {
  llvm::StringRef strategy;
  if (Error e = reader.string(obj, "strategy", "the plan", strategy))
    return e;
  std::optional<Strategy> s = parseStrategy(strategy);
  if (!s)
    return reader.fail("unknown strategy \"" + strategy + "\"");
  plan.strategy = *s;
  return Error::success();
}

Expected<Plan> dist::planner::planFromJSON(const Mesh &mesh,
                                           llvm::StringRef json,
                                           const Mesh *targetMesh) {
  Reader reader{&mesh, targetMesh, /*movesOnly=*/false, std::nullopt};
  Expected<llvm::json::Value> root = parsePlanObject(reader, json);
  if (!root)
    return root.takeError();
  const llvm::json::Object *obj = root->getAsObject();
  Plan plan;
  llvm::StringRef cache;
  if (Error e = readStrategy(reader, *obj, plan))
    return std::move(e);
  if (Error e = reader.number(*obj, "cost", "the plan", plan.cost))
    return std::move(e);
  if (Error e = reader.integer(*obj, "peak_bytes", "the plan", plan.peakBytes))
    return std::move(e);
  if (Error e = reader.number(*obj, "lower_bound", "the plan", plan.lowerBound))
    return std::move(e);
  if (obj->get("cache")) {
    if (Error e = reader.string(*obj, "cache", "the plan", cache))
      return std::move(e);
    std::optional<CacheStatus> c = parseCacheStatus(cache);
    if (!c)
      return reader.fail("unknown cache status \"" + cache + "\"");
    plan.cache = *c;
  }
  if (Error e = readSteps(reader, *obj, plan, nullptr))
    return std::move(e);
  return plan;
}

Expected<Plan> dist::planner::planMovesFromJSON(
    const Mesh &mesh, llvm::StringRef json, const Mesh *targetMesh,
    Strategy defaultStrategy,
    std::vector<std::optional<Layout>> &statedLayouts) {
  Reader reader{&mesh, targetMesh, /*movesOnly=*/true, std::nullopt};
  Expected<llvm::json::Value> root = parsePlanObject(reader, json);
  if (!root)
    return root.takeError();
  const llvm::json::Object *obj = root->getAsObject();
  Plan plan;
  plan.strategy = defaultStrategy;
  if (obj->get("strategy"))
    if (Error e = readStrategy(reader, *obj, plan))
      return std::move(e);
  statedLayouts.clear();
  if (Error e = readSteps(reader, *obj, plan, &statedLayouts))
    return std::move(e);
  return plan;
}

//===----------------------------------------------------------------------===//
// Text table
//===----------------------------------------------------------------------===//

std::string dist::planner::printPlanTable(const Mesh &sourceMesh,
                                          const Plan &plan,
                                          const Mesh *targetMesh,
                                          llvm::StringRef title) {
  std::string text;
  llvm::raw_string_ostream os(text);
  const Mesh *current = &sourceMesh;
  auto axesOf = [&](const Move &move) {
    const Mesh &mesh = *current;
    std::string out = "{";
    for (size_t i = 0; i < move.axes.size(); ++i)
      out += (i ? ", " : "") +
             (move.axes[i] < mesh.getNumAxes()
                  ? detail::quoteName(mesh.getAxis(move.axes[i]).name)
                  : "#" + std::to_string(move.axes[i]));
    return out + "}";
  };
  auto dimsOf = [&](const Move &move) -> std::string {
    if (move.kind == MoveKind::AllToAll)
      return std::to_string(move.dim) + " -> " + std::to_string(move.toDim);
    if (moveHasDim(move.kind))
      return std::to_string(move.dim);
    return "-";
  };
  constexpr int kColumns = 8;
  struct Row {
    std::string cells[kColumns];
  };
  std::vector<Row> rows;
  rows.push_back({{"step", "op", "axes", "dims", "bytes", "recv", "cost (us)",
                   "layout after"}});
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &step = plan.steps[i];
    std::string op = stringifyMoveKind(step.move.kind).str();
    if (moveHasReduction(step.move.kind))
      op += " " + stringifyReductionKind(step.move.reduction).str();
    if (step.move.kind == MoveKind::Redistribute && step.move.crossMesh) {
      op += " (to target mesh)";
      if (targetMesh)
        current = targetMesh;
    }
    char cost[32];
    snprintf(cost, sizeof(cost), "%.3f", step.cost * 1e6);
    rows.push_back(
        {{std::to_string(i + 1), op, axesOf(step.move), dimsOf(step.move),
          std::to_string(step.bytesBefore), std::to_string(step.recvBytes),
          cost, printLayout(*current, step.layout)}});
  }
  size_t width[kColumns] = {};
  for (const Row &row : rows)
    for (int c = 0; c < kColumns; ++c)
      width[c] = std::max(width[c], row.cells[c].size());
  for (const Row &row : rows) {
    std::string line;
    for (int c = 0; c < kColumns; ++c) {
      const std::string &cell = row.cells[c];
      // Numbers right-aligned, text left-aligned; no padding at line end.
      bool right = c == 0 || c == 4 || c == 5 || c == 6;
      std::string pad(width[c] - cell.size(), ' ');
      line += c ? "  " : "";
      line += right ? pad + cell : (c == kColumns - 1 ? cell : cell + pad);
    }
    os << line << "\n";
  }
  char summary[256];
  snprintf(
      summary, sizeof(summary),
      "%s plan: %zu step%s, cost %.3f us, peak %lld bytes per device, "
      "lower bound %.3f us\n",
      (title.empty() ? stringifyStrategy(plan.strategy) : title).str().c_str(),
      plan.steps.size(), plan.steps.size() == 1 ? "" : "s", plan.cost * 1e6,
      static_cast<long long>(plan.peakBytes), plan.lowerBound * 1e6);
  os << summary;
  if (plan.cache != CacheStatus::Off)
    os << "cache: " << stringifyCacheStatus(plan.cache) << "\n";
  return text;
}
