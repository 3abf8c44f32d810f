//===- Pipelines.cpp - dist pass pipelines and registration ---------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dist::buildReshardLoweringPipeline(
    OpPassManager &pm, const DistLowerReshardOptions &options) {
  // Composes chains of reshards and folds no-op ones, so that the planner
  // sees each whole move once. Only dist's pattern: upstream canonicalizers
  // do not know encodings, and on sharded global IR some rebuild an op with
  // an inferred type that drops its layout (a tensor.extract_slice with a
  // constant offset becomes one with a plain result type and a cast).
  pm.addPass(createCanonicalizerPass(GreedyRewriteConfig(), {},
                                     {kComposeReshardsLabel.str()}));
  pm.addPass(createDistLowerReshard(options));
  pm.addPass(createCSEPass());
}

void dist::registerDistPassesAndPipelines() {
  registerDistPasses();
  PassPipelineRegistration<ReshardPipelineOptions>(
      "dist-reshard-pipeline",
      "Partition compute, compose and fold reshards, plan and lower each "
      "one to collectives",
      [](OpPassManager &pm, const ReshardPipelineOptions &options) {
        pm.addPass(createDistPartition(options.toPartitionOptions()));
        buildReshardLoweringPipeline(pm, options.toLowerReshardOptions());
      });
}
