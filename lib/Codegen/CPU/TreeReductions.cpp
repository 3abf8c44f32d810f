//===- TreeReductions.cpp - horizontal reductions as halving trees --------===//
//
// A `vector.multi_reduction` over the innermost dim becomes log2(N) steps
// that combine the vector's halves as vectors, instead of a chain of one
// lane at a time (what upstream's lowering makes of it, and what x86 gets
// for an ordered fadd and for every fmax/fmin without `nnan`): a softmax
// reduces two rows per row, and their chains' latency was a tenth of its
// time. max/min/and/or/xor and integer add/mul are exact in any
// order; a float sum or product is reassociated, which semantics §6 allows.
//
//===----------------------------------------------------------------------===//

#include "dist/Codegen/Passes.h"

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dist {
#define GEN_PASS_DEF_DISTTREEREDUCTIONS
#include "dist/Codegen/Passes.h.inc"
} // namespace dist

using namespace mlir;

namespace {

/// Positions [offset, offset + size) of `vector`'s innermost dim.
Value innerSlice(PatternRewriter &rewriter, Location loc, Value vector,
                 int64_t offset, int64_t size) {
  auto type = cast<VectorType>(vector.getType());
  const int64_t rank = type.getRank();
  SmallVector<int64_t> offsets(rank, 0), sizes(type.getShape()),
      strides(rank, 1);
  offsets.back() = offset;
  sizes.back() = size;
  return vector::ExtractStridedSliceOp::create(rewriter, loc, vector, offsets,
                                               sizes, strides);
}

/// A multi-reduction over the innermost dim alone, as halving steps on
/// whole vectors (before upstream's lowering, which would combine the lanes
/// one at a time).
struct InnerReductionAsTree : OpRewritePattern<vector::MultiDimReductionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(vector::MultiDimReductionOp op,
                                PatternRewriter &rewriter) const override {
    VectorType type = op.getSourceVectorType();
    const int64_t rank = type.getRank();
    // Scalable vectors have no static halves; a masked reduction keeps its
    // mask's meaning; 2 lanes are one combine already.
    if (type.isScalable() ||
        op.getReductionDims() != ArrayRef<int64_t>{rank - 1} ||
        type.getShape().back() <= 2 || op->getParentOfType<vector::MaskOp>())
      return failure();
    Location loc = op.getLoc();
    vector::CombiningKind kind = op.getKind();
    Value vector = op.getSource();
    // The last lane of an odd width, combined once the rest is one lane.
    SmallVector<Value> leftovers;
    for (int64_t width = type.getShape().back(); width > 1; width /= 2) {
      int64_t half = width / 2;
      if (width % 2)
        leftovers.push_back(innerSlice(rewriter, loc, vector, width - 1, 1));
      Value low = innerSlice(rewriter, loc, vector, 0, half);
      Value high = innerSlice(rewriter, loc, vector, half, half);
      vector = vector::makeArithReduction(rewriter, loc, kind, low, high);
    }
    for (Value lane : leftovers)
      vector = vector::makeArithReduction(rewriter, loc, kind, vector, lane);
    // vector<...x1> to the result: a scalar, or the vector without the dim.
    Value result;
    if (auto resultType = dyn_cast<VectorType>(op.getType()))
      result = vector::ShapeCastOp::create(rewriter, loc, resultType, vector);
    else
      result = vector::ExtractOp::create(rewriter, loc, vector,
                                         SmallVector<int64_t>(rank, 0));
    rewriter.replaceOp(op, vector::makeArithReduction(rewriter, loc, kind,
                                                      result, op.getAcc()));
    return success();
  }
};

struct DistTreeReductionsPass
    : public dist::impl::DistTreeReductionsBase<DistTreeReductionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<InnerReductionAsTree>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
