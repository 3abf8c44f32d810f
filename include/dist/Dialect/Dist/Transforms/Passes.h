//===- Passes.h - dist transformation passes --------------------*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PASSES_H
#define DIST_DIALECT_DIST_TRANSFORMS_PASSES_H

#include "dist/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace dist {

#define GEN_PASS_DECL
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"

/// Options of the reshard-lowering pipeline, as a pass-pipeline option
/// struct so that `dist-opt --dist-reshard-pipeline="strategy=greedy"` and
/// embedding compilers use the same knobs.
struct ReshardPipelineOptions
    : public mlir::PassPipelineOptions<ReshardPipelineOptions> {
  Option<std::string> topology{*this, "topology",
                               llvm::cl::desc("Topology JSON file")};
  ListOption<std::string> alpha{*this, "alpha",
                                llvm::cl::desc("Per-axis alpha, AXIS=SECONDS")};
  ListOption<std::string> beta{*this, "beta",
                               llvm::cl::desc("Per-axis beta, AXIS=S_PER_BYTE")};
  Option<std::string> strategy{*this, "strategy",
                               llvm::cl::desc("optimal or greedy"),
                               llvm::cl::init("optimal")};
  Option<std::string> cacheDir{*this, "cache-dir",
                               llvm::cl::desc("Persistent plan cache directory")};
  Option<int64_t> maxPeakBytes{*this, "max-peak-bytes",
                               llvm::cl::desc("Per-device peak bytes limit"),
                               llvm::cl::init(0)};

  DistLowerReshardOptions toPassOptions() const;
};

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
