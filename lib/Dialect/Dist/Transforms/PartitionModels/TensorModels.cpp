//===- TensorModels.cpp - partitioning models of tensor ops ---------------===//
//
// tensor.empty: an empty tensor has no contents, so dist-partition gives
// each one (one per use, after normalization) the layout its use needs; on
// its own its one strategy is its declared layout.
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

} // namespace

void dist::partition::registerTensorPartitionModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    tensor::EmptyOp::attachInterface<EmptyPartitionModel>(*context);
  });
}
