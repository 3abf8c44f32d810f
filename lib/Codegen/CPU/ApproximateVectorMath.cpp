//===- ApproximateVectorMath.cpp - vector math as polynomials -------------===//
//
// Upstream's polynomial approximations, applied to the math ops on vectors
// only (scalar ones keep libm's results); exp with upstream's polynomial
// but fewer steps around it (a softmax's time is mostly its exp).
//
//===----------------------------------------------------------------------===//

#include "dist/Codegen/Passes.h"

#include "mlir/Dialect/Math/Transforms/Approximation.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dist {
#define GEN_PASS_DEF_DISTAPPROXIMATEVECTORMATH
#include "dist/Codegen/Passes.h.inc"
} // namespace dist

using namespace mlir;

namespace {

/// exp of an f32 vector: upstream's (Cephes') range reduction and
/// polynomial, with n = round(x / ln 2) and 2^n both read from one fused
/// multiply-add: x * log2(e) + (1.5 * 2^23 + 127) leaves n + 127 in the low
/// mantissa bits (the sum is in [2^23, 2^24), whose ulp is 1), so 2^n is
/// those bits shifted into the exponent field. Upstream needs a floor, a
/// float-to-int conversion, a bias add and a second clamp for the same.
/// Results equal upstream's on all 2^32 inputs but 19 ties (where
/// round-to-nearest-even and floor(x + 0.5) pick the other n): at most 5.5
/// ulp from exp, 0 below about -87.3 (n = -127 gives 2^n = 0), +inf above
/// 88.72, NaN for NaN.
struct ExpFromExponentBits : OpRewritePattern<math::ExpOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::ExpOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<VectorType>(op.getType());
    if (!type || !type.getElementType().isF32())
      return failure();
    Location loc = op.getLoc();
    auto constant = [&](float value) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       DenseElementsAttr::get(type, value));
    };
    // select(x pred bound, x, bound): one vmaxps/vminps on x86, and a NaN
    // x stays NaN (the unordered predicates hold for it).
    auto clamp = [&](arith::CmpFPredicate pred, Value x, float bound) {
      Value b = constant(bound);
      Value keep = arith::CmpFOp::create(rewriter, loc, pred, x, b);
      return arith::SelectOp::create(rewriter, loc, keep, x, b).getResult();
    };
    auto fma = [&](Value a, Value b, Value c) -> Value {
      return math::FmaOp::create(rewriter, loc, a, b, c);
    };
    // Upstream's bounds: log(2^-126) and log(FLT_MAX), rounded outwards.
    Value x = clamp(arith::CmpFPredicate::UGE, op.getOperand(), -87.8f);
    x = clamp(arith::CmpFPredicate::ULE, x, 88.8f);
    // n + 127 in the low bits (n in [-127, 128] here; 128 clamped to 127,
    // where the polynomial's argument grows to 0.77, as upstream's).
    constexpr float kShifter = 12582912.0f + 127.0f; // 1.5 * 2^23 + 127
    Value t = fma(x, constant(1.44269504088896341f), constant(kShifter));
    t = clamp(arith::CmpFPredicate::ULT, t, kShifter + 127.0f);
    Value n = arith::SubFOp::create(rewriter, loc, t, constant(kShifter));
    // a = x - n ln 2 in two parts (Cody and Waite), then Cephes' polynomial
    // for e^a.
    Value a = fma(constant(-0.693359375f), n, x);
    a = fma(constant(2.12194440e-4f), n, a);
    Value z = fma(a, constant(1.9875691500E-4f), constant(1.3981999507E-3f));
    for (float c : {8.3334519073E-3f, 4.1665795894E-2f, 1.6666665459E-1f,
                    5.0000001201E-1f})
      z = fma(z, a, constant(c));
    z = fma(z, arith::MulFOp::create(rewriter, loc, a, a), a);
    z = arith::AddFOp::create(rewriter, loc, constant(1.0f), z);
    // 2^n: n + 127 shifted into the exponent field (0 for n = -127).
    auto bitsType = type.clone(rewriter.getI32Type());
    Value bits = arith::BitcastOp::create(rewriter, loc, bitsType, t);
    Value shift = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(bitsType, int32_t(23)));
    bits = arith::ShLIOp::create(rewriter, loc, bits, shift);
    Value pow2 = arith::BitcastOp::create(rewriter, loc, type, bits);
    rewriter.replaceOpWithNewOp<arith::MulFOp>(op, z, pow2);
    return success();
  }
};

struct DistApproximateVectorMathPass
    : public dist::impl::DistApproximateVectorMathBase<
          DistApproximateVectorMathPass> {
  void runOnOperation() override {
    SmallVector<Operation *> vectorMath;
    getOperation().walk([&](Operation *op) {
      if (isa<math::MathDialect>(op->getDialect()) &&
          llvm::any_of(op->getResultTypes(), llvm::IsaPred<VectorType>))
        vectorMath.push_back(op);
    });
    if (vectorMath.empty())
      return;
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns, [](StringRef name) {
      return llvm::is_contained(
          {math::ExpOp::getOperationName(), math::ExpM1Op::getOperationName(),
           math::LogOp::getOperationName(), math::Log1pOp::getOperationName(),
           math::Log2Op::getOperationName(), math::TanhOp::getOperationName(),
           math::ErfOp::getOperationName(), math::AtanOp::getOperationName(),
           math::Atan2Op::getOperationName(), math::SinOp::getOperationName(),
           math::CosOp::getOperationName()},
          name);
    });
    // Preferred to upstream's exp for f32 vectors.
    patterns.add<ExpFromExponentBits>(&getContext(), /*benefit=*/2);
    // The ops the rewrites create are vector arithmetic: only the listed
    // ops are rewritten.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(vectorMath, std::move(patterns), config);
  }
};

} // namespace
