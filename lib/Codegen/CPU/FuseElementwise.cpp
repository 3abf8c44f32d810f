//===- FuseElementwise.cpp - elementwise producers into their readers -----===//
//
// Upstream's elementwise fusion with dist's control: the products the
// runtime's GEMM computes stay whole, and a producer read by several ops is
// recomputed in each only when its body is cheap.
//
//===----------------------------------------------------------------------===//

#include "dist/Codegen/Passes.h"
#include "dist/Codegen/StridedGemm.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dist {
#define GEN_PASS_DEF_DISTFUSEELEMENTWISE
#include "dist/Codegen/Passes.h.inc"
} // namespace dist

using namespace mlir;

namespace {

/// A body worth recomputing rather than storing: no math function (exp,
/// tanh, ...), at most two ops. Stored instead, a producer that several ops
/// of a row chain read is computed once into the chain's row tile (a store,
/// and a load per reader, all in L1): a causal mask (five ops) recomputed in
/// a softmax's max and exp cost 4% of its time.
bool isCheap(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  unsigned count = 0;
  for (Operation &inner : body->without_terminator()) {
    if (isa<math::MathDialect>(inner.getDialect()))
      return false;
    if (++count > 2)
      return false;
  }
  return true;
}

bool shouldFuse(OpOperand *fused) {
  auto producer = fused->get().getDefiningOp<linalg::LinalgOp>();
  auto consumer = dyn_cast<linalg::LinalgOp>(fused->getOwner());
  if (!producer || !consumer)
    return false;
  if (dist::codegen::isGemmCandidate(producer) ||
      dist::codegen::isGemmCandidate(consumer))
    return false;
  return producer->hasOneUse() || isCheap(producer);
}

struct DistFuseElementwisePass
    : public dist::impl::DistFuseElementwiseBase<DistFuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    // Inputs a fused op no longer reads, and results nobody reads.
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
