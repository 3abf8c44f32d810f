//===- Annotations.h - shard.shard -> dist layouts --------------*- C++ -*-===//
//
// The part of dist-import-shard that gives annotated values their layouts
// (ImportShard.cpp runs it once grids are meshes and shardings are checked).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_CONVERSION_SHARDTODIST_ANNOTATIONS_H
#define DIST_LIB_CONVERSION_SHARDTODIST_ANNOTATIONS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <string>

namespace dist {

/// Grid axis k is mesh axis "k" (semantics §7).
inline std::string meshAxisName(int64_t gridAxis) {
  return std::to_string(gridAxis);
}

/// Rewrites one shard.shard and erases it: the first annotation of a value
/// gives the value the layout (a function argument's or a linalg result's
/// type takes it, any other result is copied into it); a later one in
/// another layout is a dist.reshard. Errors are located at the annotation
/// or its shard.sharding.
mlir::LogicalResult importAnnotation(mlir::shard::ShardOp annotation);

/// Rewrites the elementwise arith/math ops on tensors of `functions` into
/// linalg.generic ops, which read operands of any layout.
void elementwiseToLinalg(llvm::ArrayRef<mlir::func::FuncOp> functions);

} // namespace dist

#endif // DIST_LIB_CONVERSION_SHARDTODIST_ANNOTATIONS_H
