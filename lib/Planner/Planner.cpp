//===- Planner.cpp - Request checking, replay and the public entry --------===//

#include "dist/Planner/Planner.h"
#include "Moves/ReportedLowerBound.h"
#include "Search/AdmissibleHeuristic.h"
#include "Search/CrossMesh.h"
#include "Search/Search.h"
#include "Search/SearchSpace.h"
#include "dist/Planner/Redistribute.h"

#include "llvm/ADT/StringExtras.h"

#include <memory>

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
  for (const Mesh *m : {&mesh, &request.getTargetMesh()})
    if (m->getNumDevices() > kMaxPlannedDevices)
      return fail("mesh " + m->str() + " has " +
                  llvm::Twine(m->getNumDevices()) +
                  " devices; the planner plans on meshes of at most 2^24 (" +
                  llvm::Twine(kMaxPlannedDevices) +
                  ") devices, since its bounds and exchanges enumerate them");
  if (rank > detail::kMaxSearchRank)
    return fail("tensors of rank " + llvm::Twine(rank) +
                " are not supported (the planner handles rank <= " +
                llvm::Twine(detail::kMaxSearchRank) + ")");
  if (Error e = verifyLayout(mesh, request.source, rank))
    return fail("source layout: " + llvm::toString(std::move(e)));
  if (Error e = verifyLayout(request.getTargetMesh(), request.target, rank))
    return fail("target layout: " + llvm::toString(std::move(e)));
  if (Error e = verifyLayoutShape(request.source, request.globalShape))
    return fail("source layout: " + llvm::toString(std::move(e)));
  if (Error e = verifyLayoutShape(request.target, request.globalShape))
    return fail("target layout: " + llvm::toString(std::move(e)));
  if (request.costModel && request.costModel->getMesh() != mesh)
    return fail("the cost model is for mesh " +
                request.costModel->getMesh().str() +
                " but the request is for mesh " + mesh.str());
  if (request.targetCostModel &&
      (!request.targetMesh ||
       request.targetCostModel->getMesh() != *request.targetMesh))
    return fail("the target cost model is for mesh " +
                request.targetCostModel->getMesh().str() +
                (request.targetMesh
                     ? " but the target mesh is " + request.targetMesh->str()
                     : std::string(" but the request has no target mesh")));
  if (request.transfer &&
      (!(request.transfer->alpha >= 0) || !(request.transfer->beta >= 0) ||
       !std::isfinite(request.transfer->alpha) ||
       !std::isfinite(request.transfer->beta)))
    return fail("the transfer link's alpha and beta must be finite and >= 0");
  if (request.maxPeakBytes && *request.maxPeakBytes < 0)
    return fail("max_peak_bytes must be >= 0, got " +
                llvm::Twine(*request.maxPeakBytes));
  return Error::success();
}

/// Keeps a default model alive while a request uses it.
using ModelStorage = std::shared_ptr<const AlphaBetaCostModel>;

/// The default model of semantics §3 for `mesh`. Building one copies the
/// mesh and fills per-axis tables, a tenth of an easy plan; callers plan
/// many reshards on one mesh, so the last one built on this thread is kept
/// and reused for an equal mesh (shared: a caller still holding it is not
/// affected when another mesh replaces it).
static ModelStorage defaultModelOf(const Mesh &mesh) {
  // Cannot fail: the default topology names no axis.
  auto build = [&] {
    return std::make_shared<const AlphaBetaCostModel>(
        cantFail(AlphaBetaCostModel::create(mesh)));
  };
  // A model copies the mesh, whose device list may be huge: such a mesh is
  // not kept after its plan.
  if (mesh.getNumDevices() > (int64_t(1) << 16))
    return build();
  thread_local ModelStorage last;
  if (!last || !(last->getMesh() == mesh))
    last = build();
  return last;
}

/// The request's model, or the default one of semantics §3 (kept alive by
/// `storage`).
static const CostModel &modelFor(const PlanRequest &request,
                                 ModelStorage &storage) {
  if (request.costModel)
    return *request.costModel;
  storage = defaultModelOf(request.mesh);
  return *storage;
}

/// The target mesh's model, or the default one of semantics §3. (A
/// same-mesh request never prices anything on a target mesh: its own
/// model stands in, and no default is built per request.)
static const CostModel &targetModelFor(const PlanRequest &request,
                                       ModelStorage &storage,
                                       const CostModel &sourceModel) {
  if (request.targetCostModel)
    return *request.targetCostModel;
  if (!request.isCrossMesh())
    return sourceModel;
  storage = defaultModelOf(request.getTargetMesh());
  return *storage;
}

AxisCostParams
dist::planner::detail::transferParamsOf(const PlanRequest &request,
                                        const CostModel &srcModel,
                                        const CostModel &dstModel) {
  return request.transfer ? *request.transfer
                          : defaultTransferParams(srcModel, dstModel);
}

/// The bound a plan reports (ReportedLowerBound.h), not the search's heuristic:
/// the report follows a definition anyone can recompute.
static double lowerBoundOf(const PlanRequest &request, const CostModel &model,
                           const CostModel &targetModel) {
  Layout source = request.source, target = request.target;
  source.canonicalize();
  target.canonicalize();
  if (request.isCrossMesh())
    return detail::crossMeshLowerBound(
        request.mesh, source, *request.targetMesh, target, request.globalShape,
        request.elementBytes,
        detail::transferParamsOf(request, model, targetModel));
  return detail::reportedLowerBound(request.mesh, source, target,
                                    request.globalShape, request.elementBytes,
                                    model);
}

Expected<double> dist::planner::planLowerBound(const PlanRequest &request) {
  if (Error e = verifyRequest(request))
    return std::move(e);
  ModelStorage storage, targetStorage;
  const CostModel &model = modelFor(request, storage);
  return lowerBoundOf(request, model,
                      targetModelFor(request, targetStorage, model));
}

/// Bytes the busiest device receives in a collective step over the product
/// group of the move's axes (the ring schedule semantics §3 prices), where
/// every device holds `bytes` before it.
static int64_t collectiveRecvBytes(const Mesh &mesh, const Move &move,
                                   int64_t bytes) {
  double p = 1;
  for (unsigned axis : move.axes)
    p *= double(mesh.getAxisSize(axis));
  double n = double(bytes), received = 0;
  switch (move.kind) {
  case MoveKind::AllGather:
    received = (p - 1) * n;
    break;
  case MoveKind::AllToAll:
  case MoveKind::ReduceScatter:
    received = (p - 1) / p * n;
    break;
  case MoveKind::AllReduce:
    received = 2 * (p - 1) / p * n;
    break;
  case MoveKind::Permute:
    received = p > 1 ? n : 0;
    break;
  default:
    break;
  }
  return received >= 9.2e18 ? INT64_MAX : int64_t(received);
}

/// `exchange`, when given, is an evaluator for srcModel and the request's
/// shape, maybe the one the search priced its exchanges with (it remembers
/// them).
static Error replayWith(const PlanRequest &request, const CostModel &srcModel,
                        const CostModel &dstModel, Plan &plan,
                        ExchangeCostEvaluator *exchange = nullptr) {
  const Mesh *mesh = &request.mesh;
  const CostModel *model = &srcModel;
  llvm::ArrayRef<int64_t> shape = request.globalShape;
  Layout cur = request.source;
  cur.canonicalize();
  int64_t bytes = localBytes(*mesh, cur, shape, request.elementBytes);
  plan.cost = 0;
  plan.peakBytes = plan.steps.empty() ? bytes : 0;
  bool transferred = false;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    PlanStep &step = plan.steps[i];
    auto stepError = [&](const llvm::Twine &why) {
      return fail("step " + llvm::Twine(i + 1) + ": " + why);
    };
    const Move &move = step.move;
    Expected<Layout> next = std::move(cur); // replaced below
    double cost = 0;
    int64_t recvBytes = 0;
    if (move.kind == MoveKind::Redistribute) {
      // The one step whose cost depends on the data, not on the axes: price
      // it from the exact exchange the lowering will perform.
      const Mesh *toMesh = mesh;
      Layout from = std::move(*next);
      if (move.crossMesh) {
        if (!request.isCrossMesh())
          return stepError("a redistribute onto another mesh, but the "
                           "request has a single mesh");
        if (transferred)
          return stepError("a second transfer between the meshes");
        toMesh = &*request.targetMesh;
        Layout to = move.permuteTarget;
        if (Error e = verifyLayout(*toMesh, to, shape.size()))
          return stepError("redistribute: the target layout is invalid: " +
                           llvm::toString(std::move(e)));
        to.canonicalize();
        next = std::move(to);
      } else {
        next = applyMove(*mesh, from, move, shape);
        if (!next)
          return stepError(llvm::toString(next.takeError()));
      }
      std::optional<TransferLinks> transfer;
      std::optional<SameMeshLinks> same;
      const LinkCosts *links;
      if (move.crossMesh) {
        transfer.emplace(detail::transferParamsOf(request, srcModel, dstModel),
                         transferLocalRate(srcModel, dstModel));
        links = &*transfer;
      } else {
        same.emplace(*model);
        links = &*same;
      }
      if (move.crossMesh) {
        Expected<Exchange> ex =
            computeExchange(*mesh, from, *toMesh, *next, shape,
                            request.elementBytes, /*sameMesh=*/false, *links);
        if (!ex)
          return stepError("redistribute: " + llvm::toString(ex.takeError()));
        cost = ex->cost;
        recvBytes = ex->maxRecvBytes;
      } else if (from.hasSegments() || next->hasSegments()) {
        SameMeshLinks same(*model);
        Expected<Exchange> ex =
            computeExchange(*mesh, from, *toMesh, *next, shape,
                            request.elementBytes, /*sameMesh=*/true, same);
        if (!ex)
          return stepError("redistribute: " + llvm::toString(ex.takeError()));
        cost = ex->cost;
        recvBytes = ex->maxRecvBytes;
      } else {
        // The same numbers as computeExchange's (the tests check they
        // agree), without building the transfer list.
        std::optional<ExchangeCostEvaluator> own;
        ExchangeCostEvaluator &evaluator =
            exchange ? *exchange
                     : own.emplace(*model, shape, request.elementBytes);
        ExchangeCostEvaluator::Result ex;
        if (!evaluator.evaluate(from, *next, ex))
          return stepError("redistribute: the point-to-point exchange is too "
                           "large to plan");
        cost = ex.cost;
        recvBytes = ex.maxRecvBytes;
      }
      if (move.crossMesh) {
        mesh = toMesh;
        model = &dstModel;
        transferred = true;
      }
    } else {
      Layout from = std::move(*next);
      next = applyMove(*mesh, from, move, shape);
      if (!next)
        return stepError(llvm::toString(next.takeError()));
      int64_t moved = collectiveInputBytes(*mesh, from, *next, move, shape,
                                           request.elementBytes);
      // What crosses the links, then the local copying (semantics §3b).
      double wire = model->stepCost(move, moved, /*localBytes=*/0);
      cost = wire + model->localCost(localStepBytes(
                        *mesh, from, *next, move, shape, request.elementBytes));
      recvBytes = wire > 0 ? collectiveRecvBytes(*mesh, move, moved) : 0;
    }
    step.bytesBefore = bytes;
    step.bytesAfter = localBytes(*mesh, *next, shape, request.elementBytes);
    step.cost = cost;
    step.recvBytes = recvBytes;
    step.layout = *next;
    plan.cost += step.cost;
    plan.peakBytes =
        std::max(plan.peakBytes, step.bytesBefore + step.bytesAfter);
    bytes = step.bytesAfter;
    cur = std::move(*next);
  }
  Layout target = request.target;
  target.canonicalize();
  if (request.isCrossMesh() && !transferred)
    return fail("the plan never moves the tensor onto the target mesh");
  if (cur != target)
    return fail("the plan ends at " + printLayout(*mesh, cur) +
                ", not at the target " + printLayout(*mesh, target));
  if (request.maxPeakBytes && plan.peakBytes > *request.maxPeakBytes)
    return fail("the plan needs " + llvm::Twine(plan.peakBytes) +
                " bytes per device at its peak, more than max_peak_bytes = " +
                llvm::Twine(*request.maxPeakBytes));
  if (request.moves == MoveSet::Collective)
    for (const PlanStep &step : plan.steps)
      if (step.move.kind == MoveKind::Redistribute && !step.move.crossMesh)
        return fail("the plan uses redistribute, but the request allows "
                    "collectives only");
  plan.lowerBound = lowerBoundOf(request, srcModel, dstModel);
  return Error::success();
}

Error dist::planner::replayPlan(const PlanRequest &request, Plan &plan) {
  if (Error e = verifyRequest(request))
    return e;
  ModelStorage storage, targetStorage;
  const CostModel &model = modelFor(request, storage);
  return replayWith(request, model,
                    targetModelFor(request, targetStorage, model), plan);
}

Expected<Plan> dist::planner::planReshard(const PlanRequest &request,
                                          SearchStats *stats) {
  if (Error e = verifyRequest(request))
    return std::move(e);
  ModelStorage storage, targetStorage;
  const CostModel &model = modelFor(request, storage);
  const CostModel &targetModel = targetModelFor(request, targetStorage, model);

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
  Layout canonicalSource = request.source, canonicalTarget = request.target;
  canonicalSource.canonicalize();
  canonicalTarget.canonicalize();
  const bool segmented =
      canonicalSource.hasSegments() || canonicalTarget.hasSegments();
  detail::SearchFunction search = request.strategy == Strategy::Optimal
                                      ? detail::searchOptimal
                                      : detail::searchGreedy;
  std::optional<Expected<std::vector<Move>>> withoutUnitAxes;
  if (!request.isCrossMesh() && !segmented)
    withoutUnitAxes = detail::searchWithoutUnitAxes(
        request, model, stats, search, request.strategy == Strategy::Optimal);
  // The optimal search prices redistribute steps exactly; the replay asks
  // the same evaluator for the chosen one, which it remembers.
  std::optional<ExchangeCostEvaluator> exchange;
  auto plainSearch = [&]() -> Expected<std::vector<Move>> {
    if (request.strategy != Strategy::Optimal)
      return search(request, model, stats);
    return detail::searchOptimalWith(
        request, model, stats,
        exchange.emplace(model, request.globalShape, request.elementBytes));
  };
  Expected<std::vector<Move>> moves =
      request.isCrossMesh()
          ? detail::searchCrossMesh(request, model, targetModel, stats)
      : segmented ? detail::searchSegmented(request, model, canonicalSource,
                                            canonicalTarget, stats)
      : withoutUnitAxes ? std::move(*withoutUnitAxes)
                        : plainSearch();
  if (!moves)
    return moves.takeError();
  for (Move &move : *moves) {
    PlanStep step;
    step.move = std::move(move);
    plan.steps.push_back(std::move(step));
  }
  // Replaying through the public applyMove re-derives every number from the
  // rules of semantics §3; a search bug surfaces here as an error, not a wrong
  // plan.
  if (Error e = replayWith(request, model, targetModel, plan,
                           exchange ? &*exchange : nullptr))
    return fail("internal planner error (please report): " +
                llvm::toString(std::move(e)));
  return plan;
}

std::string dist::planner::planCacheKey(const PlanRequest &request) {
  ModelStorage storage;
  std::string key = "dist-planner v" + std::to_string(kPlannerVersion);
  key += "\nstrategy=" + stringifyStrategy(request.strategy).str();
  key += "\nmoves=" + stringifyMoveSet(request.moves).str();
  key += "\ncost_model=";
  // An invalid request has no meaningful key; it never reaches a cache
  // because planReshard rejects it first, but do not crash on it either.
  const CostModel &model = modelFor(request, storage);
  if (!request.costModel || request.costModel->getMesh() == request.mesh)
    model.appendFingerprint(key);
  key += "\nmesh=" + request.mesh.str();
  if (request.isCrossMesh()) {
    ModelStorage targetStorage;
    key += "\ntarget_cost_model=";
    if (!request.targetCostModel ||
        request.targetCostModel->getMesh() == *request.targetMesh)
      targetModelFor(request, targetStorage, model).appendFingerprint(key);
    key += "\ntarget_mesh=" + request.targetMesh->str();
    key += "\ntransfer=" + (request.transfer
                                ? formatDouble(request.transfer->alpha) + "," +
                                      formatDouble(request.transfer->beta)
                                : std::string("default"));
  }
  key += "\nshape=";
  for (size_t d = 0; d < request.globalShape.size(); ++d)
    key += (d ? "x" : "") + std::to_string(request.globalShape[d]);
  key += "\nelement_bytes=" + std::to_string(request.elementBytes);
  Layout source = request.source, target = request.target;
  source.canonicalize();
  target.canonicalize();
  key += "\nsource=" + printLayout(request.mesh, source);
  key += "\ntarget=" + printLayout(request.getTargetMesh(), target);
  key += "\nmax_peak_bytes=" + (request.maxPeakBytes
                                    ? std::to_string(*request.maxPeakBytes)
                                    : std::string("none"));
  return key;
}

llvm::StringRef dist::planner::stringifyMoveSet(MoveSet moves) {
  return moves == MoveSet::Collective ? "collective" : "all";
}

std::optional<MoveSet> dist::planner::parseMoveSet(llvm::StringRef text) {
  if (text == "all")
    return MoveSet::All;
  if (text == "collective")
    return MoveSet::Collective;
  return std::nullopt;
}

Expected<TensorSpec> dist::planner::parseTensorSpec(llvm::StringRef text) {
  static const std::pair<const char *, int64_t> kTypes[] = {
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code) {Name, Bytes},
#include "dist/Support/ElementTypes.def"
  };
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
