//===- SignatureLayouts.h - layouts on a signature alone --------*- C++ -*-===//
//
// Semantics §6 (signature layouts): `{dist.sharding = #dist.sharding<...>}`
// on a function's argument or result gives that tensor the layout without
// the encoding being written on every use, which is how a front door (or a
// user editing an exporter's output) annotates a program whose body was
// written without layouts: the argument's type takes the encoding (every use
// sees it), a result is copied into a tensor of that layout before the
// return. The same attribute on an op gives its result the layout (a front
// door's form of a JAX sharding constraint; dist::giveLayout). dist-partition
// applies them first.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_SIGNATURELAYOUTS_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_SIGNATURELAYOUTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace dist::partition {

/// The attribute name, on arguments, results and ops.
inline constexpr llvm::StringLiteral kSignatureShardingAttr = "dist.sharding";

/// Moves every signature and op layout of `func` into its types; a located
/// error for an attribute that is not a #dist.sharding valid for the tensor, or
/// on a type that already has one.
mlir::LogicalResult applySignatureLayouts(mlir::func::FuncOp func);

} // namespace dist::partition

#endif
