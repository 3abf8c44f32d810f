//===- PipelineRemark.cpp - a pipeline's modelled step, as a remark -------===//
//
// Semantics §3c: `-dist-remarks` prints, for a function cut into stages, each
// stage's modelled time (its partitioned compute and communication), each
// hand-off's planned cost, and the step time and bubble of the order the
// program runs in: GPipe, with blocking hand-offs (the planner's pipeline
// simulator, PipelineSchedule.h). Microbatches are read back from the calls:
// a sequence of stage meshes that repeats M times is M microbatches of one
// pipeline; anything else is modelled as one microbatch.
//
//===----------------------------------------------------------------------===//

#include "PipelineRemark.h"

#include "dist/Dialect/Dist/Transforms/Remarks.h"
#include "dist/Planner/PipelineSchedule.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {

struct StageCall {
  func::FuncOp callee;
  StringRef mesh;
  double seconds;
};

/// The stage calls of `caller` in order and, between consecutive ones, the
/// planned cost of the hand-offs (`handoffs[i]`: after call i; the last
/// entry: those after the last call, which run once the pipe has drained).
LogicalResult collectStages(func::FuncOp caller, const StageTimes &stageSeconds,
                            ReshardCostModels &models,
                            planner::PlanCache &cache,
                            const ReshardPlanning &planning,
                            SymbolTableCollection &symbols,
                            SmallVectorImpl<StageCall> &calls,
                            SmallVectorImpl<double> &handoffs) {
  double pending = 0;
  for (Operation &op : caller.getBody().front()) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto callee = symbols.lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      auto it = callee ? stageSeconds.find(callee.getOperation())
                       : stageSeconds.end();
      auto mesh = callee
                      ? callee->getAttrOfType<FlatSymbolRefAttr>(kStageAttrName)
                      : FlatSymbolRefAttr();
      if (it == stageSeconds.end() || !mesh)
        return failure(); // not a stage this pass partitioned: no model
      if (!calls.empty())
        handoffs.push_back(pending);
      pending = 0;
      calls.push_back({callee, mesh.getValue(), it->second});
      continue;
    }
    auto reshard = dyn_cast<ReshardOp>(op);
    if (!reshard || calls.empty())
      continue;
    FailureOr<planner::PlanRequest> request =
        models.requestFor(reshard, symbols);
    if (failed(request))
      return failure();
    request->strategy = planning.strategy;
    request->moves = planning.moves;
    pending += cache.getOrPlanCost(*request);
  }
  handoffs.push_back(pending);
  return success(!calls.empty());
}

/// The stages of one microbatch: the shortest prefix of the calls whose
/// meshes are distinct and repeat through the calls (through M periods when
/// M is known; what follows them runs once the pipe has drained).
size_t pipelinePeriod(ArrayRef<StageCall> calls, int64_t microbatches) {
  // The longest period that M microbatches repeat (the calls after them
  // hold the concatenated results).
  for (size_t period = microbatches > 0 ? calls.size() / microbatches : 0;
       period > 0; --period) {
    llvm::StringSet<> distinct;
    bool ok = true;
    for (size_t i = 0; ok && i < period; ++i)
      ok = distinct.insert(calls[i].mesh).second;
    for (size_t i = period; ok && i < period * microbatches; ++i)
      ok = calls[i].mesh == calls[i % period].mesh;
    if (ok)
      return period;
  }
  for (size_t period = 1; period <= calls.size(); ++period) {
    if (calls.size() % period)
      continue;
    llvm::StringSet<> distinct;
    bool ok = true;
    for (size_t i = 0; ok && i < period; ++i)
      ok = distinct.insert(calls[i].mesh).second;
    for (size_t i = period; ok && i < calls.size(); ++i)
      ok = calls[i].mesh == calls[i % period].mesh;
    if (ok)
      return period;
  }
  return calls.size();
}

} // namespace

void dist::partition::emitPipelineRemark(
    func::FuncOp caller, int64_t microbatches, const StageTimes &stageSeconds,
    ReshardCostModels &models, planner::PlanCache &cache,
    const ReshardPlanning &planning, SymbolTableCollection &symbols) {
  SmallVector<StageCall> calls;
  SmallVector<double> handoffs;
  if (failed(collectStages(caller, stageSeconds, models, cache, planning,
                           symbols, calls, handoffs)))
    return;
  size_t period = pipelinePeriod(calls, microbatches);
  planner::pipeline::PipelineModel model;
  model.microbatches = microbatches > 0 && period * microbatches <= calls.size()
                           ? microbatches
                           : static_cast<int64_t>(calls.size() / period);
  // What follows the last microbatch (dist-pipeline's concatenations of the
  // results, the hand-offs after them) runs once the pipe has drained.
  double drained = handoffs.back();
  for (size_t i = period * model.microbatches; i < calls.size(); ++i)
    drained += calls[i].seconds + handoffs[i - 1];
  model.overlapHandoffs = false; // blocking exchanges, in program order
  for (size_t i = 0; i < period; ++i) {
    model.stages.push_back({calls[i].seconds, 0});
    if (i + 1 < period)
      model.handoffs.push_back({handoffs[i], 0});
  }
  llvm::Expected<planner::pipeline::SimulatedStep> step =
      planner::pipeline::simulate(model);
  if (!step) {
    llvm::consumeError(step.takeError());
    return;
  }
  InFlightDiagnostic remark =
      emitSummaryRemark(caller->getParentOp())
      << "dist-partition: @" << caller.getSymName() << ": pipeline of "
      << period << " stages x " << model.microbatches
      << " microbatches (gpipe, blocking hand-offs): stages";
  for (size_t i = 0; i < period; ++i)
    remark << (i ? "," : "") << " @" << calls[i].mesh << " "
           << llvm::formatv("{0:e3}", calls[i].seconds) << " s";
  remark << "; hand-offs";
  for (size_t i = 0; i + 1 < period; ++i)
    remark << (i ? "," : "") << " "
           << llvm::formatv("{0:e3}", model.handoffs[i].forward) << " s";
  if (period == 1)
    remark << " none";
  if (drained > 0)
    remark << "; then " << llvm::formatv("{0:e3}", drained) << " s";
  remark << "; step " << llvm::formatv("{0:e3}", step->stepSeconds + drained)
         << " s, bubble " << llvm::formatv("{0:f1}", 100 * step->bubbleFraction)
         << "%";
}
