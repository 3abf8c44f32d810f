//===- Partition.cpp - the dist-partition pass ----------------------------===//
//
// Per function: normalize the compute (Normalize.h), describe every op and
// use as a layout problem whose edge costs are the planner's reshard costs
// under the module's cost model (BuildProblem.cpp), solve it
// (LayoutSolver.h), and write the result back (ApplyChoice.cpp): every free
// tensor type gets its layout and a dist.reshard goes wherever an operand
// must move.
//
//===----------------------------------------------------------------------===//

#include "../ReshardCostModels.h"
#include "FunctionError.h"
#include "FunctionPartitioner.h"
#include "Normalize.h"
#include "PairCostMemo.h"
#include "PipelineRemark.h"
#include "SignatureLayouts.h"
#include "SplitStages.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"
#include "dist/Dialect/Dist/Transforms/Remarks.h"
#include "dist/Planner/PlanCache.h"
#include "dist/Planner/Planner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <limits>
#include <memory>

namespace dist {
#define GEN_PASS_DEF_DISTPARTITION
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {

/// Semantics §6a: `func.func @f(...) attributes {dist.auto = @mesh}`.
constexpr llvm::StringLiteral kAutoAttrName = "dist.auto";

struct DistPartitionPass
    : public dist::impl::DistPartitionBase<DistPartitionPass> {
  using DistPartitionBase::DistPartitionBase;

  LogicalResult initialize(MLIRContext *context) override {
    auto emitError = [&] { return mlir::emitError(UnknownLoc::get(context)); };
    if (!(timeLimit >= 0) || std::isinf(timeLimit))
      return emitError() << "dist-partition: time-limit must be a finite "
                            "number of seconds >= 0, got "
                         << timeLimit;
    return costModels.initialize("dist-partition", topology, alpha, beta,
                                 emitError);
  }

  void runOnOperation() override;

private:
  /// What the summary remark adds up over the module's functions.
  struct Totals {
    double cost = 0;
    unsigned reshards = 0, ops = 0;
  };
  /// Semantics §3c: functions computing on several meshes cut into stages.
  LogicalResult splitIntoStages(ModuleOp module);
  /// The functions cut into stages, each with the microbatches dist-pipeline
  /// cut it into (0: not known), and each stage's modelled seconds.
  SmallVector<std::pair<func::FuncOp, int64_t>> pipelines;
  StageTimes stageSeconds;
  /// normalize -> build the layout problem -> solve -> apply, for one
  /// function; failure when it reported an error.
  LogicalResult partitionFunction(func::FuncOp func,
                                  SymbolTableCollection &symbols,
                                  planner::PlanCache &cache,
                                  std::optional<double> budget, Totals &totals);

  ReshardCostModels costModels;
};

} // namespace

/// One line per function: how its layouts were chosen (proven optimal, or
/// the heuristic's distance to a lower bound when the exact search
/// stopped) and what they cost. A summary line like the module's (the
/// function is named, neither printed nor quoted).
static void emitChoiceRemark(func::FuncOp func, const Solution &solution,
                             LayoutChooser chooser) {
  InFlightDiagnostic remark = emitSummaryRemark(func->getParentOp())
                              << "dist-partition: @" << func.getSymName()
                              << ": ";
  if (chooser != LayoutChooser::Optimal) {
    remark << "chosen by " << stringifyLayoutChooser(chooser);
  } else if (solution.optimal) {
    remark << "proven optimal";
  } else {
    double gap =
        solution.total.time > 0
            ? (solution.total.time - solution.lowerBound) / solution.total.time
            : 0;
    remark << "heuristic (the exact search stopped: " << solution.fallbackReason
           << "; optimality gap at most "
           << llvm::formatv("{0:f1}", 100 * std::max(0.0, gap)) << "%)";
  }
  remark << "; modelled compute " << llvm::formatv("{0:e3}", solution.compute)
         << " s, communication " << llvm::formatv("{0:e3}", solution.comm)
         << " s, peak memory " << llvm::formatv("{0:e3}", solution.peakBytes)
         << " B per device";
}

/// Whether `func` computes on tensors (anything but returns, calls and dist
/// ops touching a ranked tensor): functions without stay as they are.
static bool hasTensorCompute(func::FuncOp func) {
  Dialect *distDialect = func.getContext()->getLoadedDialect<DistDialect>();
  bool found = false;
  func.walk([&](Operation *op) {
    if (!isa<func::ReturnOp, func::CallOp>(op) &&
        op->getDialect() != distDialect &&
        (llvm::any_of(op->getOperandTypes(), llvm::IsaPred<RankedTensorType>) ||
         llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>)))
      found = true;
  });
  return found;
}

namespace {
/// The mesh a function is partitioned on, and whether dist chooses its
/// free signature layouts (semantics §6a).
struct FunctionMesh {
  MeshOp mesh;
  bool isAuto = false;
};
} // namespace

/// The one mesh of the function's sharded types (with dist.auto, the mesh
/// it names); a located error when there is none or several.
static FailureOr<FunctionMesh>
findFunctionMesh(func::FuncOp func, SymbolTableCollection &symbols) {
  FunctionMesh result;
  bool severalMeshes = false;
  if (Attribute autoAttr = func->getAttr(kAutoAttrName)) {
    auto name = dyn_cast<FlatSymbolRefAttr>(autoAttr);
    if (!name) {
      emitFunctionError(func, "has '")
          << kAutoAttrName << "' = " << autoAttr
          << ", which does not name a dist.mesh (expected {" << kAutoAttrName
          << " = @mesh})";
      return failure();
    }
    FailureOr<MeshOp> found = lookupMesh(func, name, symbols);
    if (failed(found))
      return failure(); // reported by lookupMesh
    result.mesh = *found;
    result.isAuto = true;
  }
  auto noteType = [&](Type type) {
    ShardingAttr sharding = getSharding(type);
    if (!sharding)
      return;
    FailureOr<MeshOp> found = lookupMesh(func, sharding.getMesh(), symbols);
    if (failed(found))
      return;
    if (result.mesh && *found != result.mesh)
      severalMeshes = true;
    result.mesh = *found;
  };
  func.walk([&](Operation *op) {
    for (Type type : op->getOperandTypes())
      noteType(type);
    for (Type type : op->getResultTypes())
      noteType(type);
  });
  for (Type type : func.getFunctionType().getInputs())
    noteType(type);
  for (Type type : func.getFunctionType().getResults())
    noteType(type);
  if (!result.mesh) {
    emitFunctionError(func,
                      "cannot be partitioned: none of its tensors has a "
                      "#dist.sharding type, so it has no mesh (give an "
                      "argument or result a layout, in its type or as "
                      "{dist.sharding = ...}, or let dist choose them all: "
                      "attributes {dist.auto = @mesh})");
    return failure();
  }
  if (severalMeshes) {
    emitFunctionError(func, "cannot be partitioned: its compute uses tensors "
                            "on several meshes");
    return failure();
  }
  return result;
}

namespace {
/// The reshard costs one function's layout problem asks for, priced once
/// per distinct request: exactly (the plan cache's cost table, across
/// functions, layers and runs) or, where the search only needs a bound,
/// by the planner's admissible one. A layer stack asks for the same pairs
/// once per layer: the memo answers the repeats (PairCostMemo.h).
class ReshardPricer {
public:
  ReshardPricer(planner::PlanCache &cache, const planner::Mesh &mesh,
                const planner::AlphaBetaCostModel *model,
                planner::Strategy strategy, planner::MoveSet moves)
      : cache(cache), mesh(mesh), model(model), strategy(strategy),
        moves(moves) {}

  double cost(const planner::Layout &src, const planner::Layout &dst,
              RankedTensorType type) {
    if (src == dst)
      return 0;
    if (std::optional<PairCostMemo::Entry> known = memo.lookup(type, src, dst);
        known && known->exact)
      return known->seconds;
    std::optional<planner::PlanRequest> request = requestFor(src, dst, type);
    if (!request)
      return std::numeric_limits<double>::infinity();
    // Costs only: the plans themselves are made when lowered.
    double seconds = cache.getOrPlanCost(*request);
    memo.store(type, src, dst, {seconds, true});
    return seconds;
  }

  double boundOrKnown(const planner::Layout &src, const planner::Layout &dst,
                      RankedTensorType type, bool &exact) {
    exact = true;
    if (src == dst)
      return 0;
    if (std::optional<PairCostMemo::Entry> known =
            memo.lookup(type, src, dst)) {
      exact = known->exact;
      return known->seconds;
    }
    std::optional<planner::PlanRequest> request = requestFor(src, dst, type);
    if (!request)
      return std::numeric_limits<double>::infinity();
    if (std::optional<double> known = cache.lookupCost(*request)) {
      memo.store(type, src, dst, {*known, true});
      return *known;
    }
    llvm::Expected<double> bound = planner::planLowerBound(*request);
    if (!bound) {
      // An invalid request has no plan either.
      llvm::consumeError(bound.takeError());
      return std::numeric_limits<double>::infinity();
    }
    exact = false;
    memo.store(type, src, dst, {*bound, false});
    return *bound;
  }

private:
  std::optional<planner::PlanRequest> requestFor(const planner::Layout &src,
                                                 const planner::Layout &dst,
                                                 RankedTensorType type) const {
    std::optional<int64_t> bytes = getElementBytes(type.getElementType());
    if (!bytes)
      return std::nullopt;
    planner::PlanRequest request(mesh, std::vector<int64_t>(type.getShape()),
                                 *bytes, src, dst);
    request.strategy = strategy;
    request.costModel = model;
    request.moves = moves;
    return request;
  }

  planner::PlanCache &cache;
  const planner::Mesh &mesh;
  const planner::AlphaBetaCostModel *model;
  planner::Strategy strategy;
  planner::MoveSet moves;
  PairCostMemo memo;
};
} // namespace

/// Semantics §6a: no choice of layouts fits the budget. Names the least
/// any choice needs when the search proved it.
static void emitBudgetError(func::FuncOp func, FunctionPartitioner &partitioner,
                            const SolveOptions &options, double budget) {
  bool exact = false;
  double least = partitioner.minimumPeakBytes(options, exact);
  InFlightDiagnostic error =
      emitFunctionError(func, "cannot be partitioned within the memory "
                              "budget of ")
      << static_cast<uint64_t>(budget) << " B per device: ";
  if (exact)
    error << "the least any choice of layouts needs is "
          << static_cast<uint64_t>(std::ceil(least))
          << " B (semantics §6a); raise memory-budget or the device "
             "memory to at least that";
  else
    // Past the search's limits: a choice needing `least` exists, and one
    // within the budget may exist that the search did not find.
    error << "no choice of layouts found needs less than "
          << static_cast<uint64_t>(std::ceil(least))
          << " B (semantics §6a; the search passed its limits, so a leaner "
             "one may exist: raise time-limit, memory-budget or the device "
             "memory)";
}

/// The per-op notes, the function's choice line and the layout of every
/// signature tensor dist chose.
static void emitFunctionRemarks(ModuleOp module, func::FuncOp func,
                                FunctionPartitioner &partitioner,
                                const Solution &solution,
                                LayoutChooser chooser) {
  for (const auto &[op, note] : partitioner.getNotes())
    op->emitRemark("dist-partition: ") << note;
  emitChoiceRemark(func, solution, chooser);
  for (const FunctionPartitioner::FreeBoundary &free :
       partitioner.getFreeBoundary())
    emitSummaryRemark(module)
        << "dist-partition: @" << func.getSymName() << ": "
        << (free.result ? "result #" : "argument #") << free.index << " takes "
        << free.type.getEncoding() << " ("
        << llvm::formatv("{0:e3}", partitioner.localBytes(free.type))
        << " B per device)";
}

LogicalResult DistPartitionPass::partitionFunction(
    func::FuncOp func, SymbolTableCollection &symbols,
    planner::PlanCache &cache, std::optional<double> budget, Totals &totals) {
  // Layouts written on the signature alone go into the types first.
  if (failed(applySignatureLayouts(func)))
    return failure();
  if (!hasTensorCompute(func))
    return success();
  FailureOr<FunctionMesh> found = findFunctionMesh(func, symbols);
  if (failed(found))
    return failure();
  MeshOp mesh = found->mesh;
  FailureOr<planner::Mesh> plannerMesh =
      getPlannerMesh(mesh, [&] { return mesh.emitOpError(); });
  if (failed(plannerMesh))
    return failure();
  FailureOr<const planner::AlphaBetaCostModel *> model =
      costModels.get(mesh, *plannerMesh);
  if (failed(model) || failed(normalizeForPartitioning(func, mesh)))
    return failure();
  if (stopAfter == PartitionStep::Normalize)
    return success();
  forgetConstantLayouts(func);

  ReshardPricer pricer(cache, *plannerMesh, *model, strategy, moves);
  auto cost = [&](const planner::Layout &src, const planner::Layout &dst,
                  RankedTensorType type) {
    return pricer.cost(src, dst, type);
  };
  auto boundOrKnown = [&](const planner::Layout &src,
                          const planner::Layout &dst, RankedTensorType type,
                          bool &exact) {
    return pricer.boundOrKnown(src, dst, type, exact);
  };
  FunctionPartitioner partitioner(func, mesh, *plannerMesh,
                                  ReshardPricing{cost, boundOrKnown});
  partitioner.setDevice(costModels.device());
  partitioner.setAuto(found->isAuto);
  SolveOptions options;
  options.chooser = chooser;
  options.budget = budget;
  options.timeLimitSeconds = timeLimit;
  if (failed(partitioner.build()))
    return failure();
  Solution solution = partitioner.solve(options);
  if (!solution.fits) {
    emitBudgetError(func, partitioner, options, *budget);
    return failure();
  }
  unsigned reshards = 0, ops = 0;
  if (failed(partitioner.apply(solution, reshards, ops)))
    return failure();
  // The choice is in the function type now; the attribute goes, so that
  // the mesh is not kept alive by it once the compute is lowered.
  if (found->isAuto)
    func->removeAttr(kAutoAttrName);
  if (func->hasAttr(kStageAttrName))
    stageSeconds[func] = solution.compute + solution.comm;
  totals.cost += solution.comm;
  totals.reshards += reshards;
  totals.ops += ops;
  if (remarks || remarksRequested())
    emitFunctionRemarks(getOperation(), func, partitioner, solution, chooser);
  return success();
}

/// Semantics §3c: every function whose compute spans several meshes becomes
/// calls of stage functions (SplitStages.h), each then partitioned alone.
LogicalResult DistPartitionPass::splitIntoStages(ModuleOp module) {
  SymbolTable symbols(module);
  bool failedAny = false;
  for (func::FuncOp func : llvm::to_vector(module.getOps<func::FuncOp>())) {
    // Layouts written on the signature alone go into the types first.
    SmallVector<Stage> stages;
    if (failed(applySignatureLayouts(func)) ||
        failed(splitStages(func, symbols, stages))) {
      failedAny = true;
      continue;
    }
    int64_t microbatches = 0;
    if (auto mark = func->getAttrOfType<IntegerAttr>(kMicrobatchesAttrName))
      microbatches = mark.getInt();
    func->removeAttr(kMicrobatchesAttrName);
    if (stages.empty())
      continue;
    pipelines.push_back({func, microbatches});
    if (!(remarks || remarksRequested()))
      continue;
    InFlightDiagnostic remark = emitSummaryRemark(module)
                                << "dist-partition: @" << func.getSymName()
                                << ": " << stages.size() << " stages:";
    for (auto [i, stage] : llvm::enumerate(stages))
      remark << (i ? "," : "") << " @" << stage.func.getSymName() << " on "
             << stage.mesh << " (" << stage.ops << " ops)";
  }
  return failure(failedAny);
}

void DistPartitionPass::runOnOperation() {
  ModuleOp module = getOperation();
  pipelines.clear();
  stageSeconds.clear();
  if (failed(costModels.resolveAuto(module)) ||
      failed(costModels.checkAxesExist(module)))
    return signalPassFailure();
  planner::PlanCache &cache = getPlanCache(&getContext(), cacheDir);

  // Semantics §6a: the pass option, else the device's memory, else none.
  std::optional<double> budget;
  if (memoryBudget)
    budget = static_cast<double>(memoryBudget);
  else if (planner::DeviceParams device = costModels.device();
           device.memory > 0)
    budget = device.memory;

  Totals totals;
  SymbolTableCollection symbols;
  if (failed(splitIntoStages(module)))
    return signalPassFailure();
  bool failedAny = false;
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    markStageFunction(func, symbols);
    if (failed(partitionFunction(func, symbols, cache, budget, totals)))
      failedAny = true;
  }
  if (!failedAny && (remarks || remarksRequested()))
    for (auto [caller, microbatches] : pipelines)
      emitPipelineRemark(caller, microbatches, stageSeconds, costModels, cache,
                         ReshardPlanning{strategy, moves}, symbols);
  cache.flushCosts();
  if (failedAny)
    return signalPassFailure();
  if (remarks || remarksRequested())
    emitSummaryRemark(module)
        << "dist-partition: " << totals.ops << " ops partitioned (chooser "
        << stringifyLayoutChooser(chooser) << "), " << totals.reshards
        << " reshards inserted, modelled cost "
        << llvm::formatv("{0:e3}", totals.cost) << " s";
}
