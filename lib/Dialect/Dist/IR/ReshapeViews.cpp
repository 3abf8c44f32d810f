//===- ReshapeViews.cpp - tensor reshapes of sharded tensors --------------===//

#include "dist/Dialect/Dist/IR/ReshapeViews.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dist;

bool dist::isTensorReshape(Operation *op) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op);
}

FailureOr<planner::ReshapeDims> dist::getReshapeDims(Operation *reshape) {
  RankedTensorType collapsed, expanded;
  SmallVector<ReassociationIndices> groups;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape)) {
    collapsed = expand.getSrcType();
    expanded = expand.getResultType();
    groups = expand.getReassociationIndices();
  } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape)) {
    collapsed = collapse.getResultType();
    expanded = collapse.getSrcType();
    groups = collapse.getReassociationIndices();
  } else {
    return reshape->emitOpError("is not a tensor reshape");
  }
  if (!collapsed.hasStaticShape() || !expanded.hasStaticShape())
    return reshape->emitOpError("reshapes a sharded tensor of dynamic shape; "
                                "dist needs static shapes");
  planner::ReshapeDims dims;
  dims.collapsedShape.assign(collapsed.getShape().begin(),
                             collapsed.getShape().end());
  dims.expandedShape.assign(expanded.getShape().begin(),
                            expanded.getShape().end());
  for (const ReassociationIndices &group : groups)
    dims.groups.emplace_back(group.begin(), group.end());
  if (llvm::Error e = planner::verifyReshapeDims(dims))
    return reshape->emitOpError("has groups dist cannot read: ")
           << llvm::toString(std::move(e));
  return dims;
}

llvm::Expected<planner::Layout>
dist::resultViewOf(Operation *reshape, const planner::Mesh &mesh,
                   const planner::Layout &operand,
                   const planner::ReshapeDims &dims) {
  return isa<tensor::ExpandShapeOp>(reshape)
             ? planner::expandedView(mesh, operand, dims)
             : planner::collapsedView(mesh, operand, dims);
}

llvm::Expected<planner::Layout>
dist::operandViewOf(Operation *reshape, const planner::Mesh &mesh,
                    const planner::Layout &result,
                    const planner::ReshapeDims &dims) {
  return isa<tensor::ExpandShapeOp>(reshape)
             ? planner::collapsedView(mesh, result, dims)
             : planner::expandedView(mesh, result, dims);
}
