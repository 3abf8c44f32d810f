//===- PipelineRemark.h - a pipeline's step, as a remark ------*- C++ -*-===//
//
// Semantics §3c: the remark dist-partition prints for a function it cut into
// stages (PipelineRemark.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_PIPELINEREMARK_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_PIPELINEREMARK_H

#include "../ReshardCostModels.h"

#include "dist/Planner/PlanCache.h"
#include "dist/Planner/Planner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace dist::partition {

/// Each partitioned stage function's modelled seconds (compute and
/// communication).
using StageTimes = llvm::DenseMap<mlir::Operation *, double>;

/// How the hand-offs are planned (dist-partition's options).
struct ReshardPlanning {
  planner::Strategy strategy = planner::Strategy::Optimal;
  planner::MoveSet moves = planner::MoveSet::All;
};

/// Emits the summary remark of `caller`'s pipeline: per stage its time, per
/// hand-off its planned cost, the step time and the bubble; nothing when its
/// calls are not all stages with known times. `microbatches`: how many
/// dist-pipeline made (0: read from the repeating stage meshes).
void emitPipelineRemark(mlir::func::FuncOp caller, int64_t microbatches,
                        const StageTimes &stageSeconds,
                        ReshardCostModels &models, planner::PlanCache &cache,
                        const ReshardPlanning &planning,
                        mlir::SymbolTableCollection &symbols);

} // namespace dist::partition

#endif // DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_PIPELINEREMARK_H
