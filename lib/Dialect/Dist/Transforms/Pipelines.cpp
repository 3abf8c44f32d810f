//===- Pipelines.cpp - dist pass pipelines and registration ---------------===//

#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dist::buildReshardLoweringPipeline(
    OpPassManager &pm, const DistLowerReshardOptions &options) {
  // Canonicalization composes chains of reshards and folds no-op ones, so
  // the planner sees each whole move once.
  pm.addPass(createCanonicalizerPass());
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
