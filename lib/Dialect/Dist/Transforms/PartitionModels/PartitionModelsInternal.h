//===- PartitionModelsInternal.h - model registrations -----*- C++ -*-===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_PARTITIONMODELSINTERNAL_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_PARTITIONMODELSINTERNAL_H

#include "dist/Dialect/Dist/Interfaces/PartitionableOpInterface.h"

#include "mlir/IR/DialectRegistry.h"

namespace dist::partition {

void registerLinalgPartitionModels(mlir::DialectRegistry &registry);
void registerReshapePartitionModels(mlir::DialectRegistry &registry);
void registerTensorPartitionModels(mlir::DialectRegistry &registry);
void registerSlicePartitionModels(mlir::DialectRegistry &registry);
void registerConcatPadPartitionModels(mlir::DialectRegistry &registry);
void registerConstantPartitionModels(mlir::DialectRegistry &registry);

} // namespace dist::partition

#endif
