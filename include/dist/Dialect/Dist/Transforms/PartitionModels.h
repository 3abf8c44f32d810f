//===- PartitionModels.h - dist's partitioning models -----------*- C++ -*-===//
//
// The external models of dist::PartitionableOpInterface for the upstream
// ops dist-partition handles: every linalg structured op (from its indexing
// maps), tensor.empty, reshapes, slices, concat and pad, linalg.softmax.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_H
#define DIST_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dist {

/// Attaches every model when the dialects they belong to are loaded.
void registerPartitionModels(mlir::DialectRegistry &registry);

} // namespace dist

#endif // DIST_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_H
