//===- Normalize.h - bring global-view compute into one form ----*- C++ -*-===//
//
// Before layouts are chosen, every compute op is made one with a
// partitioning model (dist::PartitionableOpInterface), with a single use of
// each free source:
//
//  - an elementwise arith/math op on tensors becomes a linalg.generic with
//    identity maps and the op (on scalars) as its body;
//  - a splat tensor constant becomes linalg.fill of the scalar into a
//    tensor.empty (a constant costs no communication in any layout);
//  - tensor.empty and linalg.fill of a scalar into one are cloned per use,
//    so that each use can take the layout it wants at no cost;
//  - a tensor a linalg op's body reads without it being an operand (an
//    embedding table read by `tensor.extract`) is copied into a replicated
//    tensor first: the per-device body reads it at global positions.
//
// Anything else on tensors that is not a dist op, a call or a return is a
// located error naming the op.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_NORMALIZE_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_NORMALIZE_H

#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace dist::partition {

/// `mesh`: the function's, on which captured tensors are replicated.
mlir::LogicalResult normalizeForPartitioning(mlir::func::FuncOp func,
                                             MeshOp mesh);

/// The ops dist-partition looks at, in program order: the function's, and
/// those in the bodies of its scf.for loops (not those inside other ops'
/// regions, which work on scalars).
llvm::SmallVector<mlir::Operation *>
collectPartitionScope(mlir::func::FuncOp func);

/// Drops the layouts written on empty tensors and constant fills: a constant
/// has the same global value in every layout, so each copy is computed in
/// the layout its use needs. Leaves types that only the partitioner's
/// rewrite makes consistent again (a linalg init typed unlike its result).
void forgetConstantLayouts(mlir::func::FuncOp func);

} // namespace dist::partition

#endif
