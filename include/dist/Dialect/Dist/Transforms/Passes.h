//===- Passes.h - dist transformation passes --------------------*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PASSES_H
#define DIST_DIALECT_DIST_TRANSFORMS_PASSES_H

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/Transforms/PassOptionValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace dist {

#define GEN_PASS_DECL
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"

/// The knobs of reshard planning, shared by every pipeline that plans
/// (`dist-reshard-pipeline`, `dist-to-llvm`) and forwarded to the passes'
/// options of the same names (DistReshardPlanningOptions in Passes.td), with
/// the same value tables (PassOptionValues.h).
template <typename Derived>
struct ReshardPlanningOptions : public mlir::PassPipelineOptions<Derived> {
  using Base = mlir::PassPipelineOptions<Derived>;
  template <typename T> using Option = typename Base::template Option<T>;
  template <typename T>
  using ListOption = typename Base::template ListOption<T>;

#define DIST_PLANNING_OPTION(Member, Flag, Type, Default, Values, Passes,      \
                             Description)                                      \
  Option<Type> Member{*this, Flag, llvm::cl::desc(Description),                \
                      llvm::cl::init(Default), Values};
#define DIST_PLANNING_LIST_OPTION(Member, Flag, Description)                   \
  ListOption<std::string> Member{*this, Flag, llvm::cl::desc(Description)};
#include "dist/Dialect/Dist/Transforms/PlanningOptions.def"

  /// The dist-partition options these amount to (the same cost model, so
  /// that layouts are chosen by the costs the reshards are then planned at).
  DistPartitionOptions toPartitionOptions() const {
    return forPass<DistPartitionOptions, kPlanningForPartition>();
  }

  /// The dist-lower-reshard pass options these amount to.
  DistLowerReshardOptions toLowerReshardOptions() const {
    return forPass<DistLowerReshardOptions, kPlanningForLowering>();
  }

private:
  /// The rows of PlanningOptions.def that go to the pass.
  template <typename PassOptions, unsigned Pass> PassOptions forPass() const {
    PassOptions options;
#define DIST_PLANNING_OPTION(Member, Flag, Type, Default, Values, Passes,      \
                             Description)                                      \
  if constexpr ((Passes & Pass) != 0)                                          \
    options.Member = Member;
#define DIST_PLANNING_LIST_OPTION(Member, Flag, Description)                   \
  options.Member.assign(Member.begin(), Member.end());
#include "dist/Dialect/Dist/Transforms/PlanningOptions.def"
    return options;
  }
};

struct ReshardPipelineOptions
    : public ReshardPlanningOptions<ReshardPipelineOptions> {};

/// canonicalize (compose and fold reshards), dist-lower-reshard, cse: what an
/// embedding compiler calls to turn every reshard into planned collectives.
void buildReshardLoweringPipeline(mlir::OpPassManager &pm,
                                  const DistLowerReshardOptions &options);

/// Registers every dist pass and pipeline with the global registry.
void registerDistPassesAndPipelines();

#define GEN_PASS_REGISTRATION
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"

} // namespace dist

#endif // DIST_DIALECT_DIST_TRANSFORMS_PASSES_H
