//===- Planner.cpp - Request checking, replay and the public entry --------===//

#include "dist/Planner/Planner.h"
#include "LowerBound.h"
#include "ReportedBound.h"
#include "Search.h"
#include "SearchSpace.h"

#include "llvm/ADT/StringExtras.h"

using namespace dist::planner;
using llvm::createStringError;
using llvm::Error;
using llvm::Expected;
using llvm::inconvertibleErrorCode;

static Error fail(const llvm::Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

Error dist::planner::verifyRequest(const PlanRequest &request) {
  const Mesh &mesh = request.mesh;
  size_t rank = request.globalShape.size();
  if (Error e = verifyShape(request.globalShape, request.elementBytes))
    return e;
  if (rank > detail::kMaxSearchRank)
    return fail("tensors of rank " + llvm::Twine(rank) +
                " are not supported (the planner handles rank <= " +
                llvm::Twine(detail::kMaxSearchRank) + ")");
  if (Error e = verifyLayout(mesh, request.source, rank))
    return fail("source layout: " + llvm::toString(std::move(e)));
  if (Error e = verifyLayout(mesh, request.target, rank))
    return fail("target layout: " + llvm::toString(std::move(e)));
  if (request.costModel && request.costModel->getMesh() != mesh)
    return fail("the cost model is for mesh " +
                request.costModel->getMesh().str() +
                " but the request is for mesh " + mesh.str());
  if (request.maxPeakBytes && *request.maxPeakBytes < 0)
    return fail("max_peak_bytes must be >= 0, got " +
                llvm::Twine(*request.maxPeakBytes));
  return Error::success();
}

/// The request's model, or the SPEC default one (kept alive by `storage`).
static const CostModel &modelFor(const PlanRequest &request,
                                 std::optional<AlphaBetaCostModel> &storage) {
  if (request.costModel)
    return *request.costModel;
  // Cannot fail: the default topology names no axis.
  storage.emplace(cantFail(AlphaBetaCostModel::create(request.mesh)));
  return *storage;
}

/// The bound a plan reports (ReportedBound.h), not the search's heuristic:
/// the report follows a definition anyone can recompute.
static double lowerBoundOf(const PlanRequest &request, const CostModel &model) {
  Layout source = request.source, target = request.target;
  source.canonicalize();
  target.canonicalize();
  return detail::reportedLowerBound(request.mesh, source, target,
                                    request.globalShape, request.elementBytes,
                                    model);
}

Expected<double> dist::planner::planLowerBound(const PlanRequest &request) {
  if (Error e = verifyRequest(request))
    return std::move(e);
  std::optional<AlphaBetaCostModel> storage;
  return lowerBoundOf(request, modelFor(request, storage));
}

static Error replayWith(const PlanRequest &request, const CostModel &model,
                        Plan &plan) {
  const Mesh &mesh = request.mesh;
  llvm::ArrayRef<int64_t> shape = request.globalShape;
  Layout cur = request.source;
  cur.canonicalize();
  int64_t bytes = localBytes(mesh, cur, shape, request.elementBytes);
  plan.cost = 0;
  plan.peakBytes = plan.steps.empty() ? bytes : 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    PlanStep &step = plan.steps[i];
    Expected<Layout> next = applyMove(mesh, cur, step.move, shape);
    if (!next)
      return fail("step " + llvm::Twine(i + 1) + ": " +
                  llvm::toString(next.takeError()));
    step.bytesBefore = bytes;
    step.bytesAfter = localBytes(mesh, *next, shape, request.elementBytes);
    step.cost = model.stepCost(step.move, bytes);
    step.layout = *next;
    plan.cost += step.cost;
    plan.peakBytes =
        std::max(plan.peakBytes, step.bytesBefore + step.bytesAfter);
    bytes = step.bytesAfter;
    cur = std::move(*next);
  }
  Layout target = request.target;
  target.canonicalize();
  if (cur != target)
    return fail("the plan ends at " + printLayout(mesh, cur) +
                ", not at the target " + printLayout(mesh, target));
  if (request.maxPeakBytes && plan.peakBytes > *request.maxPeakBytes)
    return fail("the plan needs " + llvm::Twine(plan.peakBytes) +
                " bytes per device at its peak, more than max_peak_bytes = " +
                llvm::Twine(*request.maxPeakBytes));
  plan.lowerBound = lowerBoundOf(request, model);
  return Error::success();
}

Error dist::planner::replayPlan(const PlanRequest &request, Plan &plan) {
  if (Error e = verifyRequest(request))
    return e;
  std::optional<AlphaBetaCostModel> storage;
  return replayWith(request, modelFor(request, storage), plan);
}

Expected<Plan> dist::planner::planReshard(const PlanRequest &request,
                                          SearchStats *stats) {
  if (Error e = verifyRequest(request))
    return std::move(e);
  std::optional<AlphaBetaCostModel> storage;
  const CostModel &model = modelFor(request, storage);

  Plan plan;
  plan.strategy = request.strategy;
  if (request.maxPeakBytes) {
    int64_t sourceBytes = localBytes(request.mesh, request.source,
                                     request.globalShape, request.elementBytes);
    if (sourceBytes > *request.maxPeakBytes)
      return fail("no plan fits max_peak_bytes = " +
                  llvm::Twine(*request.maxPeakBytes) +
                  ": the source alone holds " + llvm::Twine(sourceBytes) +
                  " bytes per device");
  }
  Expected<std::vector<Move>> moves =
      request.strategy == Strategy::Optimal
          ? detail::searchOptimal(request, model, stats)
          : detail::searchGreedy(request, model, stats);
  if (!moves)
    return moves.takeError();
  for (Move &move : *moves) {
    PlanStep step;
    step.move = std::move(move);
    plan.steps.push_back(std::move(step));
  }
  // Replaying through the public applyMove re-derives every number from the
  // SPEC rules; a search bug surfaces here as an error, not a wrong plan.
  if (Error e = replayWith(request, model, plan))
    return fail("internal planner error (please report): " +
                llvm::toString(std::move(e)));
  return plan;
}

std::string dist::planner::planCacheKey(const PlanRequest &request) {
  std::optional<AlphaBetaCostModel> storage;
  std::string key = "dist-planner v" + std::to_string(kPlannerVersion);
  key += "\nstrategy=" + stringifyStrategy(request.strategy).str();
  key += "\ncost_model=";
  // An invalid request has no meaningful key; it never reaches a cache
  // because planReshard rejects it first, but do not crash on it either.
  if (!request.costModel || request.costModel->getMesh() == request.mesh)
    modelFor(request, storage).appendFingerprint(key);
  key += "\nmesh=" + request.mesh.str();
  key += "\nshape=";
  for (size_t d = 0; d < request.globalShape.size(); ++d)
    key += (d ? "x" : "") + std::to_string(request.globalShape[d]);
  key += "\nelement_bytes=" + std::to_string(request.elementBytes);
  Layout source = request.source, target = request.target;
  source.canonicalize();
  target.canonicalize();
  key += "\nsource=" + printLayout(request.mesh, source);
  key += "\ntarget=" + printLayout(request.mesh, target);
  key += "\nmax_peak_bytes=" + (request.maxPeakBytes
                                    ? std::to_string(*request.maxPeakBytes)
                                    : std::string("none"));
  return key;
}

Expected<TensorSpec> dist::planner::parseTensorSpec(llvm::StringRef text) {
  static const std::pair<const char *, int64_t> kTypes[] = {
      {"f16", 2}, {"bf16", 2}, {"f32", 4}, {"f64", 8}, {"i1", 1},
      {"i8", 1},  {"i16", 2},  {"i32", 4}, {"i64", 8}};
  llvm::SmallVector<llvm::StringRef> parts;
  text.trim().split(parts, 'x');
  TensorSpec spec;
  llvm::StringRef element = parts.back();
  for (auto [name, bytes] : kTypes)
    if (element == name) {
      spec.elementType = name;
      spec.elementBytes = bytes;
    }
  if (spec.elementBytes == 0)
    return fail("'" + text + "': unknown element type '" + element +
                "' (expected f16, bf16, f32, f64, i1, i8, i16, i32 or i64)");
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    int64_t extent;
    if (parts[i] == "?")
      return fail("'" + text + "': dim " + llvm::Twine(i) +
                  " is dynamic; the planner needs static extents");
    if (parts[i].getAsInteger(10, extent) || extent < 1)
      return fail("'" + text + "': dim " + llvm::Twine(i) + " ('" + parts[i] +
                  "') is not a positive integer");
    spec.shape.push_back(extent);
  }
  if (Error e = verifyShape(spec.shape, spec.elementBytes))
    return fail("'" + text + "': " + llvm::toString(std::move(e)));
  return spec;
}
