//===- Annotations.cpp - shard.shard -> dist layouts ----------------------===//
//
// A dist layout lives in a tensor type's encoding, while upstream attaches
// shardings to values with shard.shard. Each annotation becomes a type (of
// a function argument, or of a linalg result and its inits), a copy into a
// tensor of the layout, or a dist.reshard; see importAnnotation.
//
//===----------------------------------------------------------------------===//

#include "Annotations.h"

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Transforms/ElementwiseToLinalg.h"
#include "dist/Dialect/Dist/Transforms/ValueLayouts.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;
using namespace dist;

namespace {

/// `type` with the layout of `sharding` as its encoding.
FailureOr<RankedTensorType> annotatedType(shard::ShardOp annotation,
                                          shard::ShardingOp sharding,
                                          RankedTensorType type) {
  if (type.getEncoding() && !isa<ShardingAttr>(type.getEncoding()))
    return annotation.emitError()
           << "the annotated tensor already has an encoding ("
           << type.getEncoding() << ") that is not a dist layout";
  shard::GridAxesArrayAttr splitAxes = sharding.getSplitAxes();
  if (static_cast<int64_t>(splitAxes.size()) > type.getRank())
    return annotation.emitError()
           << "the sharding has " << splitAxes.size()
           << " split_axes entries but the tensor has rank " << type.getRank();
  MLIRContext *context = annotation.getContext();
  SmallVector<DimShardingAttr> dims;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    SmallVector<StringAttr> axes;
    if (d < static_cast<int64_t>(splitAxes.size()))
      for (int16_t axis : splitAxes.getAxes()[d].asArrayRef())
        axes.push_back(StringAttr::get(context, meshAxisName(axis)));
    dims.push_back(DimShardingAttr::get(context, axes));
  }
  auto emitError = [&] { return sharding.emitError(); };
  ShardingAttr layout = ShardingAttr::getChecked(
      emitError, context, sharding.getGridAttr(), ArrayRef(dims),
      ReductionKind::sum, ArrayRef<StringAttr>());
  if (!layout)
    return failure();
  auto emitAtAnnotation = [&] { return annotation.emitError(); };
  if (failed(layout.verifyEncoding(type.getShape(), type.getElementType(),
                                   emitAtAnnotation)))
    return failure();
  return RankedTensorType::get(type.getShape(), type.getElementType(), layout);
}

/// A function argument or an op result may carry a layout; the arguments of
/// inner blocks (loop-carried values) have no type of their own to carry it.
LogicalResult verifyAnnotatable(shard::ShardOp annotation) {
  auto argument = dyn_cast<BlockArgument>(annotation.getSrc());
  if (!argument)
    return success();
  Block *block = argument.getOwner();
  if (block->isEntryBlock() && isa<func::FuncOp>(block->getParentOp()))
    return success();
  return annotation.emitError()
         << "only function arguments and op results can be annotated, not "
            "the argument of an inner block";
}

} // namespace

LogicalResult dist::importAnnotation(shard::ShardOp annotation) {
  auto sharding = annotation.getSharding().getDefiningOp<shard::ShardingOp>();
  if (!sharding)
    return annotation.emitError()
           << "the sharding must be made by a shard.sharding op";
  Value source = annotation.getSrc();
  auto sourceType = cast<RankedTensorType>(source.getType());
  bool hasLayout = isa_and_nonnull<ShardingAttr>(sourceType.getEncoding());
  FailureOr<RankedTensorType> type = annotatedType(
      annotation, sharding,
      hasLayout ? RankedTensorType::get(sourceType.getShape(),
                                        sourceType.getElementType())
                : sourceType);
  if (failed(type))
    return failure();

  Value replacement = source;
  if (hasLayout) {
    if (sourceType != *type) {
      OpBuilder builder(annotation);
      replacement =
          ReshardOp::create(builder, annotation.getLoc(), *type, source);
    }
  } else if (auto argument = dyn_cast<BlockArgument>(source)) {
    if (failed(verifyAnnotatable(annotation)))
      return failure();
    // Its uses are the annotation's once it is gone; then the type.
    annotation.getResult().replaceAllUsesWith(source);
    annotation.erase();
    retypeArgument(argument, *type);
    return success();
  } else if (SmallVector<Value> chain = destinationChain(
                 source, [](Operation *op) { return isa<shard::ShardOp>(op); });
             !chain.empty()) {
    for (Value value : chain)
      value.setType(*type);
  } else {
    replacement = materializeLayout(source, *type, annotation.getLoc());
  }
  annotation.getResult().replaceAllUsesWith(replacement);
  annotation.erase();
  // What the annotation's uses were tied to keeps the annotated type.
  freeTiedUses(replacement, sourceType);
  return success();
}

// Elementwise arith/math ops on tensors need equal operand and result types,
// which operands annotated in different layouts break. As linalg.generic
// (the form dist-partition gives them anyway, ElementwiseToLinalg.h) they
// compute into a result without a layout. (One with a dynamic shape stays:
// dist-partition names it.)
void dist::elementwiseToLinalg(ArrayRef<func::FuncOp> functions) {
  for (func::FuncOp function : functions) {
    SmallVector<Operation *> elementwise;
    function.walk([&](Operation *op) {
      if (isElementwiseOnTensors(op))
        elementwise.push_back(op);
    });
    for (Operation *op : elementwise)
      (void)rewriteElementwiseToGeneric(op);
  }
}
