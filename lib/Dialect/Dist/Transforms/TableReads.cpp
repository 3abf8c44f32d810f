//===- TableReads.cpp - tensors a linalg body looks up by position --------===//

#include "dist/Dialect/Dist/Transforms/TableReads.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/AffineMap.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace dist;

/// Whether `value`, used in `op`'s body, depends on no loop position: no
/// `linalg.index` of `op` is among what computes it inside the body.
static bool independentOfLoops(linalg::GenericOp op, Value value) {
  SmallVector<Value> work{value};
  llvm::SmallPtrSet<Operation *, 8> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !op->isProperAncestor(def) || !seen.insert(def).second)
      continue; // a block argument (data) or a value from outside
    if (isa<linalg::IndexOp>(def) || def->getNumRegions() != 0)
      return false;
    llvm::append_range(work, def->getOperands());
  }
  return true;
}

std::optional<TableRead> dist::matchTableRead(linalg::GenericOp op,
                                              Value table) {
  auto type = dyn_cast<RankedTensorType>(table.getType());
  if (!type || !type.hasStaticShape() ||
      (table.getParentRegion() &&
       op->getRegion(0).isAncestor(table.getParentRegion())))
    return std::nullopt;
  TableRead read;
  for (OpOperand &use : table.getUses()) {
    if (!op->isProperAncestor(use.getOwner()))
      continue;
    auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
    if (read.extract || !extract || extract->getParentOp() != op)
      return std::nullopt;
    read.extract = extract;
  }
  if (!read.extract)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [dim, index] : llvm::enumerate(read.extract.getIndices())) {
    if (auto loopIndex = index.getDefiningOp<linalg::IndexOp>();
        loopIndex && loopIndex->getParentOp() == op) {
      int64_t loop = loopIndex.getDim();
      // A loop's map entry must cover the dim whole, once.
      if (ranges[loop] != type.getDimSize(dim) ||
          llvm::is_contained(read.dimLoops, loop))
        return std::nullopt;
      read.dimLoops.push_back(loop);
      continue;
    }
    if (!independentOfLoops(op, index))
      return std::nullopt;
    read.dimLoops.push_back(-1);
  }
  return read;
}

AffineMap dist::tableIndexingMap(const TableRead &read, unsigned numLoops,
                                 MLIRContext *context) {
  SmallVector<AffineExpr> results;
  for (int64_t loop : read.dimLoops)
    results.push_back(loop >= 0 ? getAffineDimExpr(loop, context)
                                : getAffineConstantExpr(0, context));
  return AffineMap::get(numLoops, 0, results, context);
}

std::optional<TableRead> dist::lookupTableRead(linalg::LinalgOp op,
                                               OpOperand &operand) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !op.isDpsInput(&operand) ||
      !op.getMatchingBlockArgument(&operand).use_empty())
    return std::nullopt;
  std::optional<TableRead> read = matchTableRead(generic, operand.get());
  if (!read || op.getMatchingIndexingMap(&operand) !=
                   tableIndexingMap(*read, op.getNumLoops(), op.getContext()))
    return std::nullopt;
  return read;
}

bool dist::yieldsOnlyTableValue(linalg::LinalgOp op, const TableRead &read) {
  Value looked = tensor::ExtractOp(read.extract).getResult();
  if (op.getNumReductionLoops() != 0)
    return false;
  Operation *yield = op.getBlock()->getTerminator();
  for (Value yielded : yield->getOperands()) {
    // Conversions that map zero to zero (and -0.0 to -0.0).
    while (Operation *def = yielded.getDefiningOp()) {
      if (!isa<arith::ExtFOp, arith::TruncFOp, arith::ExtSIOp, arith::ExtUIOp,
               arith::TruncIOp>(def))
        break;
      yielded = def->getOperand(0);
    }
    if (yielded != looked)
      return false;
  }
  return true;
}
