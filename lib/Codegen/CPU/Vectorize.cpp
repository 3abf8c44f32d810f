//===- Vectorize.cpp - the local compute that is not a GEMM as vector code ===//
//
// Per linalg op on tensors of static shape (GEMM candidates excluded): the
// loops but the innermost are tiled by 1, the innermost by the vector length
// (a reduction there into a vector of partial results merged after the loop),
// the remainder iteration is peeled so that every tile has a static shape,
// and every tile is vectorized by linalg::vectorize. Each step is upstream
// MLIR; an op any step refuses stays linalg and lowers to loops.
//
//===----------------------------------------------------------------------===//

#include "dist/Codegen/Passes.h"
#include "dist/Codegen/StridedGemm.h"

#include "mlir/Dialect/Affine/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace dist {
#define GEN_PASS_DEF_DISTVECTORIZE
#include "dist/Codegen/Passes.h.inc"
} // namespace dist

using namespace mlir;

namespace {

/// The element types vector code is made for; others (i1, f16, bf16, i8,
/// i16, index) keep scalar loops.
bool isVectorElement(Type type) {
  return type.isF32() || type.isF64() || type.isInteger(32) ||
         type.isInteger(64);
}

/// Whether `op` is vectorized here, and the widest element's bytes.
std::optional<int64_t> vectorElementBytes(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.hasDynamicShape() ||
      op.getNumLoops() == 0 || dist::codegen::isGemmCandidate(op))
    return std::nullopt;
  // Tiling needs maps of loops alone: an operand read at a constant index
  // (a keepdim reduction's `(d0, d1, d2) -> (d0, d1, 0)`, GPT-2's layer
  // norm as torch-mlir writes it) keeps scalar loops.
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return std::nullopt;
  int64_t bytes = 0;
  for (Value operand : op->getOperands()) {
    Type element = getElementTypeOrSelf(operand.getType());
    if (!isVectorElement(element))
      return std::nullopt;
    bytes = std::max<int64_t>(bytes, element.getIntOrFloatBitWidth() / 8);
  }
  // The body: arithmetic, math functions, loop indices (offset by affine
  // sums once tiled).
  // A power with an integer exponent has no vector form in LLVM (powi
  // takes one scalar exponent): expandConstantPowers made the constant ones
  // products; the rest keep scalar loops.
  for (Operation &inner : op.getBlock()->getOperations())
    if ((!isa<arith::ArithDialect, math::MathDialect>(inner.getDialect()) &&
         !isa<linalg::IndexOp, linalg::YieldOp, affine::AffineApplyOp>(
             inner)) ||
        isa<math::FPowIOp, math::IPowIOp>(inner))
      return std::nullopt;
  return bytes;
}

/// Tiles `op` with `sizes` (0: not tiled); the tiled ops (with a partial
/// reduction, the loop's op and the merge) in `tiles`, the loops in `loops`.
LogicalResult tile(RewriterBase &rewriter, linalg::LinalgOp op,
                   ArrayRef<int64_t> sizes, bool partialReduction,
                   SmallVector<Operation *> &tiles,
                   SmallVector<scf::ForOp> &loops) {
  scf::SCFTilingOptions options;
  options.setTileSizes(getAsIndexOpFoldResult(rewriter.getContext(), sizes));
  if (partialReduction) {
    options.setReductionTilingStrategy(
        ReductionTilingStrategy::PartialReductionOuterReduction);
    options.setReductionDims({unsigned(sizes.size() - 1)});
  }
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
      rewriter, cast<TilingInterface>(op.getOperation()), options);
  if (failed(tiled))
    return failure();
  rewriter.replaceOp(op, tiled->replacements);
  if (partialReduction && !tiled->loops.empty()) {
    // Upstream's partial-reduction tiling (LLVM 22) does not offset
    // linalg.index of the tiled reduction loop in the tiled op: every tile
    // would see indices from 0 (a causal mask fused into a row max came out
    // wrong). The tile's offset is the loop's induction variable.
    SmallVector<OpFoldResult> offsets(sizes.size(), OpFoldResult());
    offsets.back() = tiled->loops.front().getSingleInductionVar().value();
    for (Operation *tiledOp : tiled->tiledOps)
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(tiledOp))
        linalg::offsetIndices(rewriter, linalgOp, offsets);
  }
  tiles.append(tiled->tiledOps.begin(), tiled->tiledOps.end());
  tiles.append(tiled->mergeOps.begin(), tiled->mergeOps.end());
  for (LoopLikeOpInterface loop : tiled->loops)
    if (auto forOp = dyn_cast<scf::ForOp>(loop.getOperation()))
      loops.push_back(forOp);
  return success();
}

/// Peels the last, partial iteration of `loop` (when its step does not
/// divide its trip), so that the tiles of both loops have static shapes.
void peelRemainder(RewriterBase &rewriter, scf::ForOp loop,
                   SmallVector<Operation *> &tiles) {
  scf::ForOp remainder;
  if (failed(scf::peelForLoopAndSimplifyBounds(rewriter, loop, remainder)) ||
      !remainder)
    return;
  remainder.walk([&](linalg::LinalgOp op) { tiles.push_back(op); });
}

/// `x ** n` with a constant integer n (torch's `x ** 3` in GELU) as products
/// (upstream's expansion, by squaring), which vectorize.
void expandConstantPowers(Operation *root) {
  SmallVector<Operation *> powers;
  root->walk([&](math::FPowIOp op) {
    if (matchPattern(op.getRhs(), m_Constant()))
      powers.push_back(op);
  });
  if (powers.empty())
    return;
  RewritePatternSet patterns(root->getContext());
  math::populateExpansionPatterns(patterns, {"fpowi"});
  GreedyRewriteConfig config;
  config.setStrictness(GreedyRewriteStrictness::ExistingOps);
  (void)applyOpPatternsGreedily(powers, std::move(patterns), config);
}

/// Marks the tiles that are to become vector code (until they do).
constexpr llvm::StringLiteral kTileMarker = "dist.vector_tile";

/// Tiles `op` into vector-sized tiles and marks them; the remainder
/// iterations are peeled, so that once the slices' sizes are folded every
/// marked tile has a static shape.
void tileForVectors(RewriterBase &rewriter, linalg::LinalgOp op,
                    int64_t vectorBytes, int64_t accumulators) {
  std::optional<int64_t> bytes = vectorElementBytes(op);
  if (!bytes)
    return;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  const unsigned n = extents.size();
  // A reduction in the innermost loop goes to a vector of partial results:
  // several vectors' worth, as many as the row fills, so that each lane's
  // chain of combines is interleaved with others' (a single accumulator
  // makes the loop wait on the combine's latency every step).
  bool innerReduction =
      op.getIteratorTypesArray()[n - 1] == utils::IteratorType::reduction;
  int64_t length = std::max<int64_t>(1, vectorBytes / *bytes);
  if (innerReduction)
    length *= std::clamp<int64_t>(extents[n - 1] / length, 1, accumulators);

  // Step 1: every loop but the innermost by 1 (reductions summed in place).
  SmallVector<Operation *> rows{op};
  SmallVector<scf::ForOp> loops;
  SmallVector<int64_t> outer(n, 0);
  for (unsigned i = 0; i + 1 < n; ++i)
    if (extents[i] > 1)
      outer[i] = 1;
  if (llvm::any_of(outer, [](int64_t s) { return s != 0; })) {
    rows.clear();
    if (failed(
            tile(rewriter, op, outer, /*partialReduction=*/false, rows, loops)))
      return;
  }

  // Step 2: the innermost loop by the vector length, the rest peeled.
  SmallVector<Operation *> tiles;
  for (Operation *row : rows) {
    auto rowOp = dyn_cast<linalg::LinalgOp>(row);
    if (!rowOp || extents[n - 1] <= length) {
      tiles.push_back(row);
      continue;
    }
    SmallVector<int64_t> inner(n, 0);
    inner[n - 1] = length;
    SmallVector<scf::ForOp> innerLoops;
    SmallVector<Operation *> innerTiles;
    if (failed(tile(rewriter, rowOp, inner, innerReduction, innerTiles,
                    innerLoops))) {
      tiles.push_back(row);
      continue;
    }
    for (scf::ForOp loop : innerLoops) {
      // A partial reduction's accumulator starts as a fill of the identity.
      for (Value init : loop.getInitArgs())
        if (auto fill = init.getDefiningOp<linalg::FillOp>())
          innerTiles.push_back(fill);
      peelRemainder(rewriter, loop, innerTiles);
    }
    tiles.append(innerTiles);
  }
  for (Operation *tileOp : tiles)
    if (isa<linalg::LinalgOp>(tileOp))
      tileOp->setAttr(kTileMarker, rewriter.getUnitAttr());
}

/// Folds the tiles' slice sizes into their types (static after peeling).
LogicalResult foldSliceSizes(Operation *root) {
  MLIRContext *context = root->getContext();
  RewritePatternSet patterns(context);
  for (Dialect *dialect : context->getLoadedDialects())
    if (isa<tensor::TensorDialect, scf::SCFDialect, affine::AffineDialect,
            arith::ArithDialect, linalg::LinalgDialect>(dialect))
      dialect->getCanonicalizationPatterns(patterns);
  for (RegisteredOperationName name : context->getRegisteredOperations())
    if (isa<tensor::TensorDialect, scf::SCFDialect, affine::AffineDialect,
            arith::ArithDialect, linalg::LinalgDialect>(name.getDialect()))
      name.getCanonicalizationPatterns(patterns, context);
  return applyPatternsGreedily(root, std::move(patterns));
}

/// Tiling offsets a tile's linalg.index by its loops' induction variables
/// with affine.apply in the body, which the vectorizer does not take: the
/// same sums as arith ops.
void expandIndexOffsets(RewriterBase &rewriter, linalg::LinalgOp op) {
  SmallVector<affine::AffineApplyOp> applies;
  op.getBlock()->walk(
      [&](affine::AffineApplyOp apply) { applies.push_back(apply); });
  for (affine::AffineApplyOp apply : applies) {
    rewriter.setInsertionPoint(apply);
    std::optional<SmallVector<Value, 8>> expanded =
        affine::expandAffineMap(rewriter, apply.getLoc(), apply.getAffineMap(),
                                llvm::to_vector<8>(apply.getOperands()));
    if (expanded)
      rewriter.replaceOp(apply, *expanded);
  }
}

/// Vectorizes every marked tile of static shape (the others stay linalg).
void vectorizeTiles(RewriterBase &rewriter, Operation *root) {
  SmallVector<Operation *> marked;
  root->walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kTileMarker))
      marked.push_back(op);
  });
  for (Operation *op : marked) {
    op->removeAttr(kTileMarker);
    expandIndexOffsets(rewriter, cast<linalg::LinalgOp>(op));
    if (failed(linalg::vectorizeOpPrecondition(op)))
      continue;
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::VectorizationResult> result =
        linalg::vectorize(rewriter, op);
    if (succeeded(result))
      rewriter.replaceOp(op, result->replacements);
  }
}

struct DistVectorizePass
    : public dist::impl::DistVectorizeBase<DistVectorizePass> {
  using Base::Base;

  void runOnOperation() override {
    // Vectors wider than this only make LLVM's work (and the code) grow.
    if (vectorBytes < 1 || vectorBytes > 1024) {
      getOperation().emitError("dist-vectorize: vector-bytes must be 1 to "
                               "1024, got ")
          << static_cast<int64_t>(vectorBytes);
      return signalPassFailure();
    }
    if (accumulators < 1 || accumulators > 16) {
      getOperation().emitError("dist-vectorize: accumulators must be 1 to "
                               "16, got ")
          << static_cast<int64_t>(accumulators);
      return signalPassFailure();
    }
    expandConstantPowers(getOperation());
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops)
      tileForVectors(rewriter, op, vectorBytes, accumulators);
    if (failed(foldSliceSizes(getOperation())))
      return signalPassFailure();
    vectorizeTiles(rewriter, getOperation());

    // Tidy the vector code: unit dims of the [1, ..., 1, N] tiles away,
    // and the loops' bounds folded.
    RewritePatternSet patterns(&getContext());
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    vector::populateSinkVectorOpsPatterns(patterns);
    scf::ForOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
