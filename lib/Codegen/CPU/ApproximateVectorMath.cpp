//===- ApproximateVectorMath.cpp - vector math as polynomials -------------===//
//
// Upstream's polynomial approximations, applied to the math ops on vectors
// only (scalar ones keep libm's results).
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
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          return llvm::is_contained(
              {math::ExpOp::getOperationName(),
               math::ExpM1Op::getOperationName(),
               math::LogOp::getOperationName(),
               math::Log1pOp::getOperationName(),
               math::Log2Op::getOperationName(),
               math::TanhOp::getOperationName(),
               math::ErfOp::getOperationName(),
               math::AtanOp::getOperationName(),
               math::Atan2Op::getOperationName(),
               math::SinOp::getOperationName(),
               math::CosOp::getOperationName()},
              name);
        });
    // The ops the rewrites create are vector arithmetic: only the listed
    // ops are rewritten.
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(vectorMath, std::move(patterns), config);
  }
};

} // namespace
