//===- FuseRows.cpp - chains of linalg ops computed a row at a time -------===//
//
// Each chain's last op is tiled along its parallel loops but the innermost
// and its linalg producers are fused into the loops
// (scf::tileConsumerAndFuseProducersUsingSCF), so a softmax or a norm reads
// its row once from memory. GEMM candidates stay outside (include/dist/
// Codegen/StridedGemm.h).
//
//===----------------------------------------------------------------------===//

#include "dist/Codegen/Passes.h"
#include "dist/Codegen/StridedGemm.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"
#include "llvm/ADT/SetVector.h"

namespace dist {
#define GEN_PASS_DEF_DISTFUSEROWS
#include "dist/Codegen/Passes.h.inc"
} // namespace dist

using namespace mlir;

namespace {

/// Whether `op` may be tiled or fused here: a linalg op on tensors of
/// static shape that the GEMM lowering does not take.
bool isFusable(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      dist::codegen::isGemmCandidate(linalgOp) || linalgOp.getNumLoops() == 0)
    return false;
  // Tiles are computed from maps of loops alone: an operand read at a
  // constant index (a keepdim reduction's `(d0, d1, d2) -> (d0, d1, 0)`)
  // cannot be tiled.
  return !linalgOp.hasDynamicShape() && isa<TilingInterface>(op) &&
         llvm::all_of(linalgOp.getIndexingMapsArray(), [](AffineMap map) {
           return map.isProjectedPermutation();
         });
}

/// The ops whose tiles the root's tiles need, through fusable producers in
/// the root's block (inputs and inits alike).
llvm::SetVector<Operation *> producerClosure(Operation *root) {
  llvm::SetVector<Operation *> closure;
  SmallVector<Operation *> worklist{root};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value operand : op->getOperands()) {
      Operation *producer = operand.getDefiningOp();
      if (!producer || producer->getBlock() != root->getBlock() ||
          !isFusable(producer) || closure.contains(producer))
        continue;
      closure.insert(producer);
      worklist.push_back(producer);
    }
  }
  return closure;
}

/// Tile sizes: 1 on every parallel loop but the innermost loop (whole), the
/// innermost tiled one by a divisor of its extent that keeps a tile near
/// `tileElements` (rows shorter than that are taken several at a time, so
/// the loop's overhead stays small next to the work); reductions whole.
/// Empty when nothing is tiled.
SmallVector<OpFoldResult> rowTileSizes(linalg::LinalgOp op, OpBuilder &b,
                                       int64_t tileElements) {
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned n = extents.size();
  SmallVector<int64_t> sizes(n, 0);
  int64_t rowElements = 1;
  int64_t innermostTiled = -1;
  for (unsigned i = 0; i < n; ++i) {
    bool parallel = iterators[i] == utils::IteratorType::parallel;
    if (parallel && i + 1 < n) {
      sizes[i] = 1;
      innermostTiled = i;
    } else {
      rowElements *= extents[i];
    }
  }
  if (innermostTiled < 0)
    return {};
  // Several rows per tile when rows are short.
  int64_t extent = extents[innermostTiled];
  for (int64_t rows =
           std::min(extent, tileElements / std::max<int64_t>(rowElements, 1));
       rows > 1; --rows)
    if (extent % rows == 0) {
      sizes[innermostTiled] = rows;
      break;
    }
  if (llvm::all_of(llvm::enumerate(sizes), [&](auto entry) {
        return entry.value() == 0 || entry.value() == extents[entry.index()];
      }))
    return {}; // a single tile: nothing to gain
  return getAsIndexOpFoldResult(b.getContext(), sizes);
}

LogicalResult fuseRows(RewriterBase &rewriter, linalg::LinalgOp root,
                       int64_t tileElements) {
  SmallVector<OpFoldResult> sizes = rowTileSizes(root, rewriter, tileElements);
  if (sizes.empty())
    return failure();
  llvm::SetVector<Operation *> closure = producerClosure(root);
  // Producers something outside the chain reads: the loop yields their
  // whole value too. Decided before tiling, whose slices add readers.
  // (A fill is cheaper to recompute than to store: never yielded; the
  // original stays for its other readers.)
  llvm::SmallPtrSet<Operation *, 8> readOutside;
  for (Operation *producer : closure)
    for (Operation *user : producer->getUsers())
      if (user != root.getOperation() && !closure.contains(user) &&
          !isa<linalg::FillOp>(producer))
        readOutside.insert(producer);
  scf::SCFTileAndFuseOptions options;
  options.tilingOptions.setTileSizes(sizes);
  options.setFusionControlFn(
      [&](tensor::ExtractSliceOp, OpResult producer,
          bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        Operation *op = producer.getOwner();
        if (!closure.contains(op))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{
            readOutside.contains(op)};
      });
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> tiled =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(root.getOperation()), options);
  if (failed(tiled))
    return failure();
  // Uses after the loop nest read its results; the slices inside it, and
  // readers before it, still read the values it started from.
  Operation *outermost = tiled->loops.front().getOperation();
  DominanceInfo dominance(outermost->getParentOp());
  auto outside = [&](OpOperand &use) {
    return dominance.properlyDominates(outermost, use.getOwner(),
                                       /*enclosingOpOk=*/false);
  };
  auto replace = [&](Operation *op) {
    for (OpResult result : op->getResults())
      if (Value replacement = tiled->replacements.lookup(result))
        rewriter.replaceUsesWithIf(result, replacement, outside);
  };
  replace(root);
  for (Operation *producer : tiled->fusedProducers)
    replace(producer);
  return success();
}

struct DistFuseRowsPass
    : public dist::impl::DistFuseRowsBase<DistFuseRowsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (tileElements < 1) {
      getOperation().emitError("dist-fuse-rows: tile-elements must be at "
                               "least 1, got ")
          << static_cast<int64_t>(tileElements);
      return signalPassFailure();
    }
    // The chains' ends first: walking backwards, an op already fused into
    // a later root's loop has no uses left and is skipped. (Ops in the
    // user's loops, a loop over layers, are chains of that loop's body.)
    SmallVector<linalg::LinalgOp> roots;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isFusable(op))
        roots.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp root : llvm::reverse(roots)) {
      if (root->use_empty())
        continue;
      bool readByChain = llvm::any_of(root->getUsers(), [&](Operation *user) {
        return isFusable(user) && user->getBlock() == root->getBlock();
      });
      // A fill alone (the init of a product) gains nothing from rows.
      if (readByChain || isa<linalg::FillOp>(root))
        continue;
      (void)fuseRows(rewriter, root, tileElements);
    }
    // A producer two fused ops read was fused twice, on the same slice: one
    // copy is enough. Then what the fusion left unused goes (the slices of
    // the values the loops started from, the producers now computed inside).
    DominanceInfo dominance(getOperation());
    eliminateCommonSubExpressions(rewriter, dominance, getOperation());
    SmallVector<Operation *> dead;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::LinalgOp, tensor::ExtractSliceOp, tensor::EmptyOp>(op))
        dead.push_back(op);
    });
    for (Operation *op : llvm::reverse(dead))
      if (isOpTriviallyDead(op))
        rewriter.eraseOp(op);
  }
};

} // namespace
