//===- LocalizeCompute.cpp - the per-device form of partitioned compute ---===//

#include "LocalizeCompute.h"

#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace dist;

bool dist::isLocalizableCompute(Operation *op) {
  return isa<PartitionableOpInterface>(op);
}

namespace {

/// An op with a partitioning model, on local operands and types.
struct LocalizePartitionable : ConversionPattern {
  LocalizePartitionable(const TypeConverter &converter,
                        const LocalizeContext &context, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx),
        context(context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    auto partitionable = dyn_cast<PartitionableOpInterface>(op);
    if (!partitionable)
      return failure();
    FailureOr<SmallVector<Value>> local =
        partitionable.localize(rewriter, operands, context);
    if (failed(local))
      return failure();
    rewriter.replaceOp(op, *local);
    return success();
  }

  const LocalizeContext &context;
};

} // namespace

void dist::populateComputeLocalizationPatterns(const TypeConverter &converter,
                                               const LocalizeContext &context,
                                               RewritePatternSet &patterns,
                                               ConversionTarget &target) {
  patterns.add<LocalizePartitionable>(converter, context,
                                      patterns.getContext());
  scf::populateSCFStructuralTypeConversionsAndLegality(converter, patterns,
                                                       target);
}
