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
#include "LayoutSolver.h"
#include "Normalize.h"
#include "PairCostMemo.h"
#include "SignatureLayouts.h"
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
  if (chooser != LayoutChooser::Joint) {
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

void DistPartitionPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(costModels.resolveAuto(module)) ||
      failed(costModels.checkAxesExist(module)))
    return signalPassFailure();
  MLIRContext *context = &getContext();
  planner::PlanCache &cache = getPlanCache(context, cacheDir);

  // Semantics §6a: the pass option, else the device's memory, else none.
  std::optional<double> budget;
  if (memoryBudget)
    budget = static_cast<double>(memoryBudget);
  else if (planner::DeviceParams device = costModels.device();
           device.memory > 0)
    budget = device.memory;

  double totalCost = 0;
  unsigned totalReshards = 0, totalOps = 0;
  bool failedAny = false;
  SymbolTableCollection symbols;
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    // Layouts written on the signature alone go into the types first.
    if (failed(applySignatureLayouts(func))) {
      failedAny = true;
      continue;
    }
    // Functions with nothing to partition stay as they are.
    bool hasCompute = false;
    for (Operation *op : collectPartitionScope(func)) {
      if (!isa<func::ReturnOp, func::CallOp>(op) &&
          op->getDialect() != context->getLoadedDialect<DistDialect>() &&
          (llvm::any_of(op->getOperandTypes(),
                        llvm::IsaPred<RankedTensorType>) ||
           llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>)))
        hasCompute = true;
    }
    if (!hasCompute)
      continue;
    // The one mesh of the function's sharded types (with dist.auto, the
    // mesh it names, semantics §6a).
    MeshOp mesh;
    bool severalMeshes = false;
    bool isAuto = false;
    if (Attribute autoAttr = func->getAttr(kAutoAttrName)) {
      auto name = dyn_cast<FlatSymbolRefAttr>(autoAttr);
      if (!name) {
        emitFunctionError(func, "has '")
            << kAutoAttrName << "' = " << autoAttr
            << ", which does not name a dist.mesh (expected {" << kAutoAttrName
            << " = @mesh})";
        failedAny = true;
        continue;
      }
      FailureOr<MeshOp> found = lookupMesh(func, name, symbols);
      if (failed(found)) {
        failedAny = true; // reported by lookupMesh
        continue;
      }
      mesh = *found;
      isAuto = true;
    }
    auto noteType = [&](Type type) {
      ShardingAttr sharding = getSharding(type);
      if (!sharding)
        return;
      FailureOr<MeshOp> found = lookupMesh(func, sharding.getMesh(), symbols);
      if (failed(found))
        return;
      if (mesh && *found != mesh)
        severalMeshes = true;
      mesh = *found;
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
    if (!mesh) {
      emitFunctionError(func,
                        "cannot be partitioned: none of its tensors has a "
                        "#dist.sharding type, so it has no mesh (give an "
                        "argument or result a layout, in its type or as "
                        "{dist.sharding = ...}, or let dist choose them all: "
                        "attributes {dist.auto = @mesh})");
      failedAny = true;
      continue;
    }
    if (severalMeshes) {
      emitFunctionError(func,
                        "cannot be partitioned: its compute uses tensors on "
                        "several meshes");
      failedAny = true;
      continue;
    }
    FailureOr<planner::Mesh> plannerMesh =
        getPlannerMesh(mesh, [&] { return mesh.emitOpError(); });
    if (failed(plannerMesh)) {
      failedAny = true;
      continue;
    }
    FailureOr<const planner::AlphaBetaCostModel *> model =
        costModels.get(mesh, *plannerMesh);
    if (failed(model)) {
      failedAny = true;
      continue;
    }
    if (failed(normalizeForPartitioning(func, mesh))) {
      failedAny = true;
      continue;
    }
    if (stopAfter == PartitionStep::Normalize)
      continue;
    forgetConstantLayouts(func);

    // Reshard costs, priced once per distinct request.
    auto requestFor =
        [&](const planner::Layout &src, const planner::Layout &dst,
            RankedTensorType type) -> std::optional<planner::PlanRequest> {
      std::optional<int64_t> bytes = getElementBytes(type.getElementType());
      if (!bytes)
        return std::nullopt;
      planner::PlanRequest request(*plannerMesh,
                                   std::vector<int64_t>(type.getShape()),
                                   *bytes, src, dst);
      request.strategy = strategy;
      request.costModel = *model;
      request.moves = moves;
      return request;
    };
    // A layer stack asks for the same pairs once per layer: the memo
    // answers the repeats (PairCostMemo.h).
    auto memo = std::make_shared<PairCostMemo>();
    auto reshardCost = [&, memo](const planner::Layout &src,
                                 const planner::Layout &dst,
                                 RankedTensorType type) -> double {
      if (src == dst)
        return 0;
      if (std::optional<PairCostMemo::Entry> known =
              memo->lookup(type, src, dst);
          known && known->exact)
        return known->seconds;
      std::optional<planner::PlanRequest> request = requestFor(src, dst, type);
      if (!request)
        return std::numeric_limits<double>::infinity();
      // Costs only: served across functions, layers and runs by the
      // cache's cost table (the plans themselves are made when lowered).
      double seconds = cache.getOrPlanCost(*request);
      memo->store(type, src, dst, {seconds, true});
      return seconds;
    };
    auto boundOrKnown =
        [&, memo](const planner::Layout &src, const planner::Layout &dst,
                  RankedTensorType type, bool &exact) -> double {
      exact = true;
      if (src == dst)
        return 0;
      if (std::optional<PairCostMemo::Entry> known =
              memo->lookup(type, src, dst)) {
        exact = known->exact;
        return known->seconds;
      }
      std::optional<planner::PlanRequest> request = requestFor(src, dst, type);
      if (!request)
        return std::numeric_limits<double>::infinity();
      if (std::optional<double> known = cache.lookupCost(*request)) {
        memo->store(type, src, dst, {*known, true});
        return *known;
      }
      llvm::Expected<double> bound = planner::planLowerBound(*request);
      if (!bound) {
        // An invalid request has no plan either.
        llvm::consumeError(bound.takeError());
        return std::numeric_limits<double>::infinity();
      }
      exact = false;
      memo->store(type, src, dst, {*bound, false});
      return *bound;
    };

    FunctionPartitioner partitioner(func, mesh, *plannerMesh,
                                    ReshardPricing{reshardCost, boundOrKnown});
    partitioner.setDevice(costModels.device());
    partitioner.setAuto(isAuto);
    SolveOptions options;
    options.chooser = chooser;
    options.budget = budget;
    options.timeLimitSeconds = timeLimit;
    Solution solution;
    unsigned reshards = 0, ops = 0;
    if (failed(partitioner.build())) {
      failedAny = true;
      continue;
    }
    if (failed(partitioner.apply(options, solution, reshards, ops))) {
      if (!solution.fits) {
        bool exact = false;
        double least = partitioner.minimumPeakBytes(options, exact);
        InFlightDiagnostic error =
            emitFunctionError(func,
                              "cannot be partitioned within the memory budget "
                              "of ")
            << static_cast<uint64_t>(*budget) << " B per device: ";
        if (exact)
          error << "the least any choice of layouts needs is "
                << static_cast<uint64_t>(std::ceil(least))
                << " B (semantics §6a); raise memory-budget or the device "
                   "memory to at least that";
        else
          // Past the search's limits: a choice needing `least` exists, and
          // one within the budget may exist that the search did not find.
          error << "no choice of layouts found needs less than "
                << static_cast<uint64_t>(std::ceil(least))
                << " B (semantics §6a; the search passed its limits, so a "
                   "leaner one may exist: raise time-limit, memory-budget or "
                   "the device memory)";
      }
      failedAny = true;
      continue;
    }
    // The choice is in the function type now; the attribute goes, so that
    // the mesh is not kept alive by it once the compute is lowered.
    if (isAuto)
      func->removeAttr(kAutoAttrName);
    totalCost += solution.comm;
    totalReshards += reshards;
    totalOps += ops;
    if (remarks || remarksRequested()) {
      for (const auto &[op, note] : partitioner.getNotes())
        op->emitRemark("dist-partition: ") << note;
      emitChoiceRemark(func, solution, chooser);
      for (const FunctionPartitioner::FreeBoundary &free :
           partitioner.getFreeBoundary())
        emitSummaryRemark(module)
            << "dist-partition: @" << func.getSymName() << ": "
            << (free.result ? "result #" : "argument #") << free.index
            << " takes " << free.type.getEncoding() << " ("
            << llvm::formatv("{0:e3}", partitioner.localBytes(free.type))
            << " B per device)";
    }
  }
  cache.flushCosts();
  if (failedAny)
    return signalPassFailure();
  if (remarks || remarksRequested())
    emitSummaryRemark(module)
        << "dist-partition: " << totalOps << " ops partitioned (chooser "
        << stringifyLayoutChooser(chooser) << "), " << totalReshards
        << " reshards inserted, modelled cost "
        << llvm::formatv("{0:e3}", totalCost) << " s";
}
