//===- PartitionModels.cpp - dist's partitioning models -------------------===//

#include "dist/Dialect/Dist/Transforms/PartitionModels.h"
#include "PartitionModelsInternal.h"

void dist::registerPartitionModels(mlir::DialectRegistry &registry) {
  partition::registerLinalgPartitionModels(registry);
  partition::registerReshapePartitionModels(registry);
  partition::registerTensorPartitionModels(registry);
  partition::registerSlicePartitionModels(registry);
  partition::registerConcatPadPartitionModels(registry);
  partition::registerConstantPartitionModels(registry);
}
