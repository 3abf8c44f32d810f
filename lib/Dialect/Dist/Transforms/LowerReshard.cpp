//===- LowerReshard.cpp - plan every dist.reshard at compile time ---------===//
//
// Each dist.reshard becomes the planner's cheapest sequence of collectives.
// The planner (and its cache) is MLIR-free; this pass translates between
// symbols/names and the planner's indices, builds the cost model each mesh
// is priced with, and emits and verifies the collective ops.
//
//===----------------------------------------------------------------------===//

#include "ReshardCostModels.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"
#include "dist/Dialect/Dist/Transforms/Remarks.h"
#include "dist/Planner/CostModel.h"
#include "dist/Planner/PlanCache.h"
#include "dist/Planner/Planner.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <map>

namespace dist {
#define GEN_PASS_DEF_DISTLOWERRESHARD
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;

/// `-dist-remarks` works with any way of scheduling the passes (pipelines
/// included), which a pass option alone would not.
static llvm::cl::opt<bool>
    clRemarks("dist-remarks",
              llvm::cl::desc("Report each reshard's plan, the chosen layouts "
                             "and the module's modelled cost as remarks"),
              llvm::cl::init(false));

bool dist::remarksRequested() { return clRemarks; }

namespace {

/// How many times `op` runs per call of its function: the product of the
/// static trip counts of the loops around it (a loop whose count is not
/// static counts once).
double executionsPerCall(Operation *op) {
  double count = 1;
  for (auto loop = op->getParentOfType<LoopLikeOpInterface>(); loop;
       loop = loop->getParentOfType<LoopLikeOpInterface>())
    if (std::optional<llvm::APInt> trips = loop.getStaticTripCount())
      count *= static_cast<double>(trips->getZExtValue());
  return count;
}

struct DistLowerReshardPass
    : public dist::impl::DistLowerReshardBase<DistLowerReshardPass> {
  using DistLowerReshardBase::DistLowerReshardBase;

  LogicalResult initialize(MLIRContext *context) override;
  void runOnOperation() override;

private:
  /// What one run did. Mirrored into the pass statistics, which are no-ops
  /// in LLVM builds without statistics (Debian's release build among them),
  /// and reported in a summary remark under -dist-remarks.
  struct Counters {
    uint64_t reshards = 0, hits = 0, misses = 0, collectives = 0;
    double cost = 0;
  };
  LogicalResult lowerReshard(ReshardOp reshard,
                             SymbolTableCollection &symbolTable,
                             planner::PlanCache &cache, Counters &counters);

  Operation *createStep(OpBuilder &builder, Location loc, MeshOp mesh,
                        const planner::Move &move, Value input,
                        RankedTensorType resultType);

  ReshardCostModels costModels;
};

} // namespace

LogicalResult DistLowerReshardPass::initialize(MLIRContext *context) {
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(context)); };
  if (maxPeakBytes < 0)
    return emitError() << "dist-lower-reshard: max-peak-bytes must be >= 0";
  return costModels.initialize("dist-lower-reshard", topology, alpha, beta,
                               emitError);
}

Operation *DistLowerReshardPass::createStep(OpBuilder &builder, Location loc,
                                            MeshOp mesh,
                                            const planner::Move &move,
                                            Value input,
                                            RankedTensorType resultType) {
  SmallVector<StringRef> names;
  for (unsigned axis : move.axes)
    names.push_back(cast<StringAttr>(mesh.getAxisNames()[axis]).getValue());
  ArrayAttr axes = builder.getStrArrayAttr(names);
  IntegerAttr dim = builder.getI64IntegerAttr(move.dim);
  auto reduction =
      ReductionKindAttr::get(builder.getContext(), toDialect(move.reduction));
  switch (move.kind) {
  case planner::MoveKind::AllGather:
    return AllGatherOp::create(builder, loc, resultType, input, axes, dim);
  case planner::MoveKind::AllSlice:
    return AllSliceOp::create(builder, loc, resultType, input, axes, dim);
  case planner::MoveKind::AllToAll:
    return AllToAllOp::create(builder, loc, resultType, input, axes, dim,
                              builder.getI64IntegerAttr(move.toDim));
  case planner::MoveKind::ReduceScatter:
    return ReduceScatterOp::create(builder, loc, resultType, input, axes, dim,
                                   reduction);
  case planner::MoveKind::AllReduce:
    return AllReduceOp::create(builder, loc, resultType, input, axes,
                               reduction);
  case planner::MoveKind::ReplicateToPartial:
    return ReplicateToPartialOp::create(builder, loc, resultType, input, axes,
                                        reduction);
  case planner::MoveKind::Permute:
    return PermuteOp::create(builder, loc, resultType, input, axes);
  case planner::MoveKind::Redistribute:
    return RedistributeOp::create(builder, loc, resultType, input);
  }
  return nullptr;
}

LogicalResult DistLowerReshardPass::lowerReshard(
    ReshardOp reshard, SymbolTableCollection &symbolTable,
    planner::PlanCache &cache, Counters &counters) {
  ++counters.reshards;
  RankedTensorType sourceType = reshard.getInput().getType();
  RankedTensorType targetType = reshard.getType();
  if (sourceType == targetType) {
    reshard.replaceAllUsesWith(reshard.getInput());
    reshard.erase();
    return success();
  }

  std::optional<ResolvedShardings> resolved;
  FailureOr<planner::PlanRequest> requested =
      costModels.requestFor(reshard, symbolTable, &resolved);
  if (failed(requested))
    return failure();
  MeshOp mesh = resolved->mesh;
  const planner::Mesh &plannerMesh = resolved->plannerMesh;
  const planner::Layout &source = resolved->source, &target = resolved->target;
  planner::PlanRequest &request = *requested;
  request.strategy = strategy;
  request.moves = moves;
  if (maxPeakBytes > 0)
    request.maxPeakBytes = maxPeakBytes;

  Location loc = reshard.getLoc();
  llvm::Expected<planner::Plan> plan = cache.getOrPlan(
      request, [&](StringRef warning) { mlir::emitWarning(loc) << warning; });
  if (!plan)
    return reshard.emitOpError("cannot be lowered: ")
           << llvm::toString(plan.takeError());
  if (plan->cache == planner::CacheStatus::Hit)
    ++counters.hits;
  else
    ++counters.misses;

  // The planner's last layout must be the target; the emitted chain must
  // end in the reshard's type exactly, so nothing downstream changes.
  const planner::Layout &reached =
      plan->steps.empty() ? source : plan->steps.back().layout;
  const planner::Mesh &targetPlannerMesh = resolved->getTargetPlannerMesh();
  if (reached != target)
    return reshard.emitOpError("internal error: the plan ends in ")
           << planner::printLayout(targetPlannerMesh, reached)
           << ", not the target "
           << planner::printLayout(targetPlannerMesh, target);
  if (plan->steps.empty())
    return reshard.emitOpError(
        "reshards between layouts that differ only in the order of their "
        "partial axes; write the partial axes in the same order");

  if (remarks || clRemarks) {
    InFlightDiagnostic remark = reshard.emitRemark();
    remark << "planned (" << planner::stringifyStrategy(plan->strategy)
           << ", cache " << planner::stringifyCacheStatus(plan->cache)
           << "): " << plan->steps.size() << " step"
           << (plan->steps.size() == 1 ? "" : "s") << ", cost "
           << llvm::formatv("{0:e3}", plan->cost) << " s, peak "
           << plan->peakBytes << " B, lower bound "
           << llvm::formatv("{0:e3}", plan->lowerBound) << " s:";
    const planner::Mesh *stepMesh = &plannerMesh;
    for (const planner::PlanStep &step : plan->steps) {
      remark << " [" << planner::printMove(*stepMesh, step.move) << ", "
             << llvm::formatv("{0:e3}", step.cost) << " s]";
      if (step.move.crossMesh)
        stepMesh = &targetPlannerMesh;
    }
  }

  OpBuilder builder(reshard);
  Value current = reshard.getInput();
  SmallVector<Operation *> emitted;
  MeshOp stepMesh = mesh; // the target's mesh once the tensor moved there
  for (auto [index, step] : llvm::enumerate(plan->steps)) {
    bool last = index + 1 == plan->steps.size();
    if (step.move.crossMesh)
      stepMesh = resolved->targetMesh;
    RankedTensorType type =
        last ? targetType
             : RankedTensorType::get(
                   sourceType.getShape(), sourceType.getElementType(),
                   getShardingAttr(&getContext(), stepMesh, step.layout));
    Operation *op =
        createStep(builder, loc, stepMesh, step.move, current, type);
    emitted.push_back(op);
    // Never emit a wrong sequence: each step must pass its own verifier,
    // which recomputes the layout the move produces.
    if (failed(mlir::verify(op)) ||
        failed(cast<SymbolUserOpInterface>(op).verifySymbolUses(symbolTable))) {
      for (Operation *created : llvm::reverse(emitted))
        created->erase();
      return reshard.emitOpError("internal error: planned step ")
             << index << " ("
             << planner::printMove(stepMesh == mesh ? plannerMesh
                                                    : targetPlannerMesh,
                                   step.move)
             << ") does not verify";
    }
    current = op->getResult(0);
  }
  counters.collectives += emitted.size();
  // A reshard inside loops runs once per iteration: the modelled cost of
  // the program counts it that often (static trip counts, as
  // dist-partition does).
  counters.cost += plan->cost * executionsPerCall(reshard);
  reshard.replaceAllUsesWith(current);
  reshard.erase();
  return success();
}

void DistLowerReshardPass::runOnOperation() {
  Operation *root = getOperation();
  if (failed(costModels.resolveAuto(root)))
    return signalPassFailure();

  // With the whole module in view, an override for an axis that no mesh has
  // is a typo: say so instead of silently planning with defaults.
  if (isa<ModuleOp>(root) && failed(costModels.checkAxesExist(root)))
    return signalPassFailure();

  MLIRContext *context = &getContext();
  planner::PlanCache &cache = getPlanCache(context, cacheDir);

  SmallVector<ReshardOp> reshards;
  root->walk([&](ReshardOp op) { reshards.push_back(op); });
  SymbolTableCollection symbolTable;
  Counters counters;
  bool failedAny = false;
  for (ReshardOp reshard : reshards)
    if (failed(lowerReshard(reshard, symbolTable, cache, counters)))
      failedAny = true;

  numReshards += counters.reshards;
  numCacheHits += counters.hits;
  numCacheMisses += counters.misses;
  numCollectives += counters.collectives;
  totalCostNs += static_cast<uint64_t>(std::llround(counters.cost * 1e9));
  if (remarks || clRemarks)
    emitSummaryRemark(root)
        << "dist-lower-reshard: " << counters.reshards << " reshards lowered, "
        << counters.hits << " cache hits, " << counters.misses
        << " cache misses, " << counters.collectives
        << " collectives emitted, modelled cost "
        << llvm::formatv("{0:e3}", counters.cost) << " s";
  if (failedAny)
    signalPassFailure();
}
