//===- TableModel.cpp - lookups in the linalg model -----------------------===//
//
// A table looked up at data rows (an embedding, TableReads.h) may be split by
// those rows: a device holding rows [s * B, (s + 1) * B) finds the ids that
// fall there and contributes zero for the others, so the result is a sum of
// one looked-up value and zeros over the row axes: a partial sum, exact
// (-0.0 is the identity of IEEE addition, so even -0.0, infinities and NaNs
// come through unchanged). This is the vocabulary-parallel embedding of
// Megatron and PyTorch's RowwiseParallel; whether it beats gathering the
// table is the partitioner's choice, by cost.
//
//===----------------------------------------------------------------------===//

#include "TableModel.h"

#include "dist/Dialect/Dist/Interfaces/LocalIndexing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;

SmallVector<TableInput> partition::tableInputs(linalg::LinalgOp op) {
  SmallVector<TableInput> tables;
  for (OpOperand *input : op.getDpsInputOperands())
    if (std::optional<TableRead> read = lookupTableRead(op, *input))
      tables.push_back({input->getOperandNumber(), std::move(*read)});
  return tables;
}

/// The axes splitting some operand or result of `strategy`.
static planner::AxisList usedAxes(const PartitionStrategy &strategy) {
  planner::AxisList used;
  for (const planner::Layout &layout :
       llvm::concat<const planner::Layout>(strategy.operands, strategy.results))
    for (const planner::AxisList &axes : layout.dimAxes)
      used.append(axes.begin(), axes.end());
  return used;
}

void partition::addRowSplitStrategies(linalg::LinalgOp op,
                                      const PartitionQuery &query,
                                      PartitionOptions &options) {
  SmallVector<TableInput> tables = tableInputs(op);
  std::vector<PartitionStrategy> base = options.strategies;
  for (const TableInput &table : tables) {
    if (!table.read.hasDataDims() || !yieldsOnlyTableValue(op, table.read))
      continue;
    for (const PartitionStrategy &strategy : base) {
      if (llvm::any_of(strategy.results,
                       [](const planner::Layout &l) { return l.hasPartial(); }))
        continue;
      planner::AxisList used = usedAxes(strategy);
      planner::AxisList free;
      for (unsigned axis = 0; axis < query.mesh.getNumAxes(); ++axis)
        if (query.mesh.getAxisSize(axis) > 1 && !llvm::is_contained(used, axis))
          free.push_back(axis);
      if (free.empty())
        continue;
      for (auto [dim, loop] : llvm::enumerate(table.read.dimLoops)) {
        if (loop >= 0)
          continue;
        // The rows split as the table may arrive, over each free axis, and
        // over all of them.
        std::vector<planner::AxisList> candidates;
        if (table.input < query.offered.size())
          for (const planner::Layout &offered : query.offered[table.input])
            if (dim < offered.getRank() && !offered.isSegmented(dim) &&
                !offered.dimAxes[dim].empty() &&
                llvm::all_of(
                    offered.dimAxes[dim],
                    [&](unsigned axis) {
                      return llvm::is_contained(free, axis);
                    }))
              candidates.push_back(offered.dimAxes[dim]);
        for (unsigned axis : free)
          candidates.push_back({axis});
        if (free.size() > 1)
          candidates.push_back(free);
        for (const planner::AxisList &axes : candidates) {
          PartitionStrategy split = strategy;
          split.operands[table.input].dimAxes[dim] = axes;
          split.operands[table.input].canonicalize();
          for (planner::Layout &result : split.results) {
            result.partialKind = planner::ReductionKind::Sum;
            result.partialAxes = axes;
            result.canonicalize();
          }
          // The inits carry the results' layouts.
          for (OpOperand &init : op.getDpsInitsMutable())
            split.operands[init.getOperandNumber()] =
                split.results[op.getTiedOpResult(&init).getResultNumber()];
          options.add(std::move(split), query.maxStrategies);
        }
      }
    }
  }
}

LogicalResult partition::verifyTableLayouts(linalg::LinalgOp op,
                                            const LocalizeContext &context) {
  for (const TableInput &table : tableInputs(op)) {
    Value value = op->getOperand(table.input);
    std::optional<ShardedTypeInfo> info =
        context.getShardedInfo(value.getType());
    if (!info)
      continue;
    auto shape = cast<RankedTensorType>(value.getType()).getShape();
    for (auto [dim, loop] : llvm::enumerate(table.read.dimLoops)) {
      if (info->layout.shardCount(*info->mesh, dim) == 1)
        continue;
      if (loop >= 0)
        continue; // split as its loop: the linalg rule's operand dims
      if (info->layout.isSegmented(dim))
        return op->emitOpError("cannot be localized: the rows of the table it "
                               "looks up (operand #")
               << table.input << ") are split in segments";
      if (!yieldsOnlyTableValue(op, table.read))
        return op->emitOpError("cannot be localized: the table it looks up "
                               "(operand #")
               << table.input
               << ") has its rows split, which needs every result to be the "
                  "looked-up value";
      for (Value result : op->getResults()) {
        std::optional<ShardedTypeInfo> out =
            context.getShardedInfo(result.getType());
        bool partial =
            out && out->layout.partialKind == planner::ReductionKind::Sum &&
            llvm::all_of(info->layout.dimAxes[dim], [&](unsigned axis) {
              return out->layout.isPartial(axis);
            });
        if (!partial)
          return op->emitOpError("cannot be localized: the table it looks "
                                 "up (operand #")
                 << table.input << ") has its rows (dim " << dim << " of "
                 << shape.size()
                 << ") split, so each device finds only the ids in its rows: "
                    "every result must be a partial sum over those axes";
      }
    }
  }
  return success();
}

/// The zero a device contributes for an id outside its rows: -0.0 for
/// floats (x + -0.0 == x for every x), 0 for integers.
static Value additiveIdentity(OpBuilder &b, Location loc, Type type) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(
        b, loc,
        b.getFloatAttr(floatType,
                       APFloat::getZero(floatType.getFloatSemantics(),
                                        /*Negative=*/true)));
  return arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
}

void partition::localizeTableReads(RewriterBase &rewriter,
                                   ArrayRef<TableInput> tables,
                                   linalg::LinalgOp op,
                                   ValueRange localOperands,
                                   const LocalizeContext &context,
                                   linalg::GenericOp local) {
  for (const TableInput &table : tables) {
    Value global = op->getOperand(table.input);
    std::optional<ShardedTypeInfo> info =
        context.getShardedInfo(global.getType());
    auto shape = cast<RankedTensorType>(global.getType()).getShape();
    tensor::ExtractOp extract = table.read.extract;
    Location loc = extract.getLoc();
    // Per split data dim, this device's first row and row count.
    struct Rows {
      unsigned dim;
      Value first, count;
    };
    SmallVector<Rows> rows;
    rewriter.setInsertionPoint(local);
    for (auto [dim, loop] : llvm::enumerate(table.read.dimLoops)) {
      if (loop >= 0 || !info)
        continue;
      DimSplit split = DimSplit::of(*info, shape, dim);
      if (!split.isSplit())
        continue;
      Value shard = buildShardIndex(rewriter, loc, split);
      Value block =
          arith::ConstantIndexOp::create(rewriter, loc, split.block());
      rows.push_back({unsigned(dim),
                      arith::MulIOp::create(rewriter, loc, shard, block),
                      buildValidCount(rewriter, loc, split, shard)});
    }

    rewriter.setInsertionPoint(extract);
    SmallVector<Value> indices(extract.getIndices());
    // The table's loop dims are split as their loops: local positions (the
    // loop's linalg.index, unless it was made global for another reader).
    for (auto [dim, loop] : llvm::enumerate(table.read.dimLoops))
      if (loop >= 0 && !indices[dim].getDefiningOp<linalg::IndexOp>())
        indices[dim] = linalg::IndexOp::create(rewriter, loc, loop);
    if (rows.empty()) {
      rewriter.modifyOpInPlace(extract, [&] {
        extract.getTensorMutable().set(localOperands[table.input]);
        extract.getIndicesMutable().assign(indices);
      });
      continue;
    }
    Value inside;
    Value zeroIndex = arith::ConstantIndexOp::create(rewriter, loc, 0);
    for (const Rows &row : rows) {
      Value offset =
          arith::SubIOp::create(rewriter, loc, indices[row.dim], row.first);
      Value atLeastZero = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sge, offset, zeroIndex);
      Value belowCount = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::slt, offset, row.count);
      Value here =
          arith::AndIOp::create(rewriter, loc, atLeastZero, belowCount);
      inside =
          inside ? arith::AndIOp::create(rewriter, loc, inside, here) : here;
      // Never read outside the local block, even for another device's id.
      indices[row.dim] =
          arith::SelectOp::create(rewriter, loc, here, offset, zeroIndex);
    }
    Value read = tensor::ExtractOp::create(rewriter, loc,
                                           localOperands[table.input], indices);
    read = arith::SelectOp::create(
        rewriter, loc, inside, read,
        additiveIdentity(rewriter, loc, read.getType()));
    rewriter.replaceOp(extract, read);
  }
}
