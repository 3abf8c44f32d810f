//===- ElementwiseToLinalg.h - arith/math on tensors as linalg --*- C++ -*-===//
//
// An elementwise arith or math op on tensors becomes a linalg.generic over
// its result's iteration space, the op itself (on scalars) as the body: the
// form every partitioning model and the local compute lowering take. Both
// dist-partition's normalization and the shard import use this one rewrite.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_ELEMENTWISETOLINALG_H
#define DIST_DIALECT_DIST_TRANSFORMS_ELEMENTWISETOLINALG_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Operation.h"

namespace dist {

/// An arith/math op with the Elementwise trait whose results are all ranked
/// tensors.
bool isElementwiseOnTensors(mlir::Operation *op);

/// Replaces `op` (isElementwiseOnTensors) by a linalg.generic computing into
/// a tensor.empty of the result's type (its encoding kept); scalar operands
/// (the condition of a select) are used in the body directly. Fails, and
/// changes nothing, for an op with several results or a dynamic shape: the
/// caller decides whether that is an error.
mlir::FailureOr<mlir::linalg::GenericOp>
rewriteElementwiseToGeneric(mlir::Operation *op);

} // namespace dist

#endif // DIST_DIALECT_DIST_TRANSFORMS_ELEMENTWISETOLINALG_H
