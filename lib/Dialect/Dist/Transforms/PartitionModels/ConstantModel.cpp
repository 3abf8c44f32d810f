//===- ConstantModel.cpp - partitioning model of tensor constants ---------===//
//
// arith.constant with a non-splat tensor value (semantics §6: a table of
// numbers an exporter wrote into the program, e.g. a JAX array closed over
// by the function): every device holds the whole value, so the constant is
// replicated and any split layout a consumer needs is a local slice of it.
// (Splat constants never get here: normalization makes them fills, which
// take any layout.) A large constant belongs in an argument, where it is
// placed once; the front doors move those out (docs/frontends.md).
//
//===----------------------------------------------------------------------===//

#include "PartitionModelsInternal.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {

/// `value` (a dense or resource-backed tensor value) of type `type` (the
/// same shape and element type); null when it is neither.
TypedAttr retyped(Attribute value, RankedTensorType type) {
  if (auto dense = dyn_cast<DenseElementsAttr>(value))
    return dense.reshape(type);
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    return DenseResourceElementsAttr::get(type, resource.getRawHandle());
  return {};
}

struct ConstantPartitionModel
    : PartitionableOpInterface::ExternalModel<ConstantPartitionModel,
                                              arith::ConstantOp> {
  llvm::Expected<PartitionOptions>
  getPartitionOptions(Operation *op, const PartitionQuery &query) const {
    PartitionOptions options;
    PartitionStrategy strategy;
    // A scalar constant is no node of the layout problem (it places only
    // ops that touch tensors); its result has no layout.
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    strategy.results.push_back(
        type ? planner::Layout::replicated(type.getRank()) : planner::Layout());
    options.add(std::move(strategy), query.maxStrategies);
    return options;
  }

  void setResultLayout(Operation *op, unsigned index,
                       RankedTensorType type) const {
    auto constant = cast<arith::ConstantOp>(op);
    if (TypedAttr value = retyped(constant.getValue(), type))
      constant.setValueAttr(value);
    op->getResult(index).setType(type);
  }

  LogicalResult verifyLocalizable(Operation *op,
                                  const LocalizeContext &context) const {
    auto constant = cast<arith::ConstantOp>(op);
    if (!isa<RankedTensorType>(constant.getType()))
      return success();
    auto local =
        dyn_cast<RankedTensorType>(context.getLocalType(constant.getType()));
    if (!local || !retyped(constant.getValue(), local))
      return op->emitOpError("cannot be localized: a tensor constant must be "
                             "dense or a dense resource, and replicated");
    return success();
  }

  FailureOr<SmallVector<Value>> localize(Operation *op, RewriterBase &rewriter,
                                         ValueRange,
                                         const LocalizeContext &context) const {
    auto constant = cast<arith::ConstantOp>(op);
    if (!isa<RankedTensorType>(constant.getType()))
      return SmallVector<Value>{rewriter.clone(*op)->getResult(0)};
    auto local =
        cast<RankedTensorType>(context.getLocalType(constant.getType()));
    TypedAttr value = retyped(constant.getValue(), local);
    auto global = cast<RankedTensorType>(constant.getType());
    if (!value || local.getShape() != global.getShape())
      return failure();
    Value result = arith::ConstantOp::create(rewriter, op->getLoc(), value);
    return SmallVector<Value>{result};
  }
};

} // namespace

void dist::partition::registerConstantPartitionModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, arith::ArithDialect *) {
    arith::ConstantOp::attachInterface<ConstantPartitionModel>(*context);
  });
}
