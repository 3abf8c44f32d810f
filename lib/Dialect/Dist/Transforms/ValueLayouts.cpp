//===- ValueLayouts.cpp - giving a value computed without one a layout ----===//

#include "dist/Dialect/Dist/Transforms/ValueLayouts.h"

#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;

namespace {

/// Whether every user of `value` accepts it in another layout: linalg ops
/// read inputs of any layout (dist-partition moves them), elementwise ops
/// become such linalg ops, and reshards and returns take any. Other ops may
/// tie types together (an init is tied to its result's type, a cast or
/// reshape to its result's).
bool usersAcceptLayout(Value value, dist::AcceptsAnyLayout alsoAccepts) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<dist::ReshardOp, func::ReturnOp>(user) ||
        OpTrait::hasElementwiseMappableTraits(user) ||
        (alsoAccepts && alsoAccepts(user)))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
    if (!linalgOp || !linalgOp.isDpsInput(&use))
      return false;
  }
  return true;
}

} // namespace

SmallVector<Value> dist::destinationChain(Value value,
                                          AcceptsAnyLayout alsoAccepts) {
  SmallVector<Value> chain;
  if (!usersAcceptLayout(value, alsoAccepts))
    return {};
  while (Operation *op = value.getDefiningOp()) {
    chain.push_back(value);
    if (isa<tensor::EmptyOp>(op))
      return chain;
    auto dps = dyn_cast<DestinationStyleOpInterface>(op);
    if (!dps)
      return {};
    Value init = dps.getTiedOpOperand(cast<OpResult>(value))->get();
    if (!init.hasOneUse() || init.getType() != value.getType())
      return {};
    value = init;
  }
  return {};
}

Value dist::copyIntoType(OpBuilder &builder, Location loc, Value value,
                         RankedTensorType type) {
  Value empty = tensor::EmptyOp::create(
      builder, loc, type.getShape(), type.getElementType(), type.getEncoding());
  return linalg::CopyOp::create(builder, loc, value, empty).getResult(0);
}

Value dist::materializeLayout(Value value, RankedTensorType type,
                              Location loc) {
  OpBuilder builder(value.getContext());
  builder.setInsertionPointAfterValue(value);
  return copyIntoType(builder, loc, value, type);
}

void dist::giveLayout(Value value, RankedTensorType type, Location loc) {
  if (SmallVector<Value> chain = destinationChain(value, {}); !chain.empty()) {
    for (Value link : chain)
      link.setType(type);
    return;
  }
  Value copy = materializeLayout(value, type, loc);
  value.replaceUsesWithIf(copy, [&](OpOperand &use) {
    return use.getOwner() != copy.getDefiningOp() && !isTiedUse(use);
  });
}

void dist::retypeArgument(BlockArgument value, RankedTensorType type) {
  auto free = cast<RankedTensorType>(value.getType());
  value.setType(type);
  freeTiedUses(value, free);
}

bool dist::isTiedUse(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto loop = dyn_cast<scf::ForOp>(user))
    return use.getOperandNumber() >= loop.getNumControlOperands();
  if (isa<scf::YieldOp>(user))
    return true;
  auto dps = dyn_cast<DestinationStyleOpInterface>(user);
  return dps && dps.isDpsInit(&use);
}

void dist::freeTiedUses(Value value, RankedTensorType free) {
  if (value.getType() == free)
    return;
  SmallVector<OpOperand *> tied;
  for (OpOperand &use : value.getUses())
    if (isTiedUse(use))
      tied.push_back(&use);
  for (OpOperand *use : tied) {
    OpBuilder builder(use->getOwner());
    use->set(copyIntoType(builder, use->getOwner()->getLoc(), value, free));
  }
}
