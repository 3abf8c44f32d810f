//===- ReshapeViews.h - tensor reshapes of sharded tensors ------*- C++ -*-===//
//
// tensor.expand_shape / tensor.collapse_shape on sharded tensors are views
// (semantics §2a): the result's layout must be the one under which every device
// keeps the bytes it holds (dist/Planner/ReshapeView.h). dist-partition
// chooses such layouts (resharding the operand first when needed) and
// dist-localize checks them; both read the reshape through these helpers.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_RESHAPEVIEWS_H
#define DIST_DIALECT_DIST_IR_RESHAPEVIEWS_H

#include "dist/Planner/ReshapeView.h"

#include "mlir/IR/Operation.h"

namespace dist {

/// Whether `op` is a tensor.expand_shape or tensor.collapse_shape.
bool isTensorReshape(mlir::Operation *op);

/// The reshape's shapes and groups, for static shapes; otherwise an error
/// reported on the op.
mlir::FailureOr<planner::ReshapeDims> getReshapeDims(mlir::Operation *reshape);

/// The result layout under which the reshape moves nothing, given the
/// operand's; or why there is none.
llvm::Expected<planner::Layout> resultViewOf(mlir::Operation *reshape,
                                             const planner::Mesh &mesh,
                                             const planner::Layout &operand,
                                             const planner::ReshapeDims &dims);

/// The operand layout under which the reshape moves nothing and yields
/// `result`; or why there is none.
llvm::Expected<planner::Layout> operandViewOf(mlir::Operation *reshape,
                                              const planner::Mesh &mesh,
                                              const planner::Layout &result,
                                              const planner::ReshapeDims &dims);

} // namespace dist

#endif // DIST_DIALECT_DIST_IR_RESHAPEVIEWS_H
