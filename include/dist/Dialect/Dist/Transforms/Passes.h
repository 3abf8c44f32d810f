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

  Option<std::string> topology{
      *this, "topology",
      llvm::cl::desc("Topology JSON file, or auto (this machine, calibrated "
                     "once where the tool can)")};
  ListOption<std::string> alpha{*this, "alpha",
                                llvm::cl::desc("Per-axis alpha, AXIS=SECONDS")};
  ListOption<std::string> beta{
      *this, "beta", llvm::cl::desc("Per-axis beta, AXIS=S_PER_BYTE")};
  Option<planner::Strategy> strategy{
      *this, "strategy", llvm::cl::desc("How reshards are planned"),
      llvm::cl::init(planner::Strategy::Optimal), strategyOptionValues()};
  Option<planner::MoveSet> moves{
      *this, "moves", llvm::cl::desc("Moves plans may use"),
      llvm::cl::init(planner::MoveSet::All), moveSetOptionValues()};
  Option<std::string> cacheDir{
      *this, "cache-dir", llvm::cl::desc("Persistent plan cache directory")};
  Option<int64_t> maxPeakBytes{*this, "max-peak-bytes",
                               llvm::cl::desc("Per-device peak bytes limit"),
                               llvm::cl::init(0)};

  Option<LayoutChooser> chooser{
      *this, "chooser", llvm::cl::desc("How dist-partition chooses layouts"),
      llvm::cl::init(LayoutChooser::Joint), layoutChooserOptionValues()};

  /// The dist-partition options these amount to (the same cost model, so
  /// that layouts are chosen by the costs the reshards are then planned at).
  DistPartitionOptions toPartitionOptions() const {
    DistPartitionOptions options = withPlanningOptions<DistPartitionOptions>();
    options.chooser = chooser;
    return options;
  }

  /// The dist-lower-reshard pass options these amount to.
  DistLowerReshardOptions toLowerReshardOptions() const {
    DistLowerReshardOptions options =
        withPlanningOptions<DistLowerReshardOptions>();
    options.maxPeakBytes = maxPeakBytes;
    return options;
  }

private:
  /// The options both passes take: the cost model and how reshards are
  /// planned.
  template <typename PassOptions> PassOptions withPlanningOptions() const {
    PassOptions options;
    options.topology = topology;
    options.alpha.assign(alpha.begin(), alpha.end());
    options.beta.assign(beta.begin(), beta.end());
    options.strategy = strategy;
    options.moves = moves;
    options.cacheDir = cacheDir;
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
