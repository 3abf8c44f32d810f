//===- TensorModels.cpp - partitioning models of tensor ops ---------------===//
//
// tensor.empty: an empty tensor has no contents, so dist-partition gives
// each one (one per use, after normalization) the layout its use needs; on
// its own its one strategy is its declared layout.
//
// tensor.extract / tensor.insert read or write one element at an index
// that may be any value: every device needs the whole tensor, so the
// tensor is replicated (and not partial) around them.
//
//===----------------------------------------------------------------------===//

#include "PartitionModelsInternal.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {

struct EmptyPartitionModel
    : PartitionableOpInterface::ExternalModel<EmptyPartitionModel,
                                              tensor::EmptyOp> {
  llvm::Expected<PartitionOptions>
  getPartitionOptions(Operation *op, const PartitionQuery &query) const {
    PartitionOptions options;
    options.placed.assign(op->getNumOperands(), false);
    options.tiedResult.assign(op->getNumOperands(), -1);
    PartitionStrategy strategy;
    strategy.operands.resize(op->getNumOperands());
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    strategy.results.push_back(
        !query.declared.empty() && query.declared[0]
            ? *query.declared[0]
            : planner::Layout::replicated(type.getRank()));
    options.add(std::move(strategy), query.maxStrategies);
    return options;
  }
};

/// Replicated tensors in and out; the other operands are scalars. The
/// result of tensor.insert is tied to its destination.
template <typename OpTy, int TiedOperand>
struct ElementAccessModel : PartitionableOpInterface::ExternalModel<
                                ElementAccessModel<OpTy, TiedOperand>, OpTy> {
  llvm::Expected<PartitionOptions>
  getPartitionOptions(Operation *op, const PartitionQuery &query) const {
    PartitionOptions options;
    PartitionStrategy strategy;
    for (Value operand : op->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      options.placed.push_back(static_cast<bool>(type));
      options.tiedResult.push_back(-1);
      strategy.operands.push_back(
          type ? planner::Layout::replicated(type.getRank())
               : planner::Layout());
    }
    if (TiedOperand >= 0)
      options.tiedResult[TiedOperand] = 0;
    for (Type type : op->getResultTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      strategy.results.push_back(
          tensor ? planner::Layout::replicated(tensor.getRank())
                 : planner::Layout());
    }
    options.add(std::move(strategy), query.maxStrategies);
    return options;
  }
};

} // namespace

void dist::partition::registerTensorPartitionModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    tensor::EmptyOp::attachInterface<EmptyPartitionModel>(*context);
    tensor::ExtractOp::attachInterface<
        ElementAccessModel<tensor::ExtractOp, -1>>(*context);
    tensor::InsertOp::attachInterface<ElementAccessModel<tensor::InsertOp, 1>>(
        *context);
  });
}
