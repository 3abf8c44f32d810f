//===- PartitionableOpInterface.cpp - ops dist-partition handles ----------===//

#include "dist/Dialect/Dist/Interfaces/PartitionableOpInterface.h"

using namespace mlir;
using namespace dist;

#include "dist/Dialect/Dist/Interfaces/PartitionableOpInterface.cpp.inc"

LocalizeContext::~LocalizeContext() = default;

void PartitionOptions::add(PartitionStrategy strategy, size_t limit) {
  if (strategies.size() >= limit)
    return;
  for (const PartitionStrategy &known : strategies)
    if (known.operands == strategy.operands &&
        known.results == strategy.results)
      return;
  strategies.push_back(std::move(strategy));
}

FailureOr<SmallVector<Value>>
dist::localizeByRetyping(Operation *op, RewriterBase &rewriter,
                         ValueRange localOperands,
                         const LocalizeContext &context) {
  OperationState state(op->getLoc(), op->getName());
  state.addOperands(localOperands);
  for (Type type : op->getResultTypes())
    state.addTypes(context.getLocalType(type));
  state.addAttributes(op->getAttrs());
  for (Region &region : op->getRegions()) {
    Region *moved = state.addRegion();
    rewriter.inlineRegionBefore(region, *moved, moved->end());
  }
  Operation *local = rewriter.create(state);
  return SmallVector<Value>(local->getResults());
}
