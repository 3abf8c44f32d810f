//===- LinalgModel.cpp - the partitioning model of linalg structured ops --===//
//
// One model for every linalg structured op, from its indexing maps
// (LoopRule.h): a strategy assigns mesh axes to the loops, and optionally
// lets partial values flow in where the body's algebra allows
// (PartialAlgebra.h), or splits a loop per segment where an operand arrives
// interleaved. Its per-device form is the same op on the local blocks,
// except where the body depends on positions: linalg.index yields the
// global index, and padded iterations of a split reduction leave the
// accumulators as they are (docs/partitioning.md, "Positions and padding").
//
//===----------------------------------------------------------------------===//

#include "LoopRule.h"
#include "PartitionModelsInternal.h"
#include "TableModel.h"

#include "dist/Dialect/Dist/Interfaces/LocalIndexing.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {

/// A tensor the body reads without it being an operand: the per-device
/// body would read the global tensor's local block at global positions,
/// which is only the whole tensor when it is replicated (dist-partition
/// makes every captured tensor so, Normalize.cpp), unless it is also the
/// op's input in the lookup form (TableModel.h).
LogicalResult checkNoCapturedTensors(linalg::LinalgOp op, std::string &why) {
  SmallVector<Value> tables;
  for (const TableInput &table : tableInputs(op))
    tables.push_back(op->getOperand(table.input));
  WalkResult walk = op->getRegion(0).walk([&](Operation *inner) {
    for (Value operand : inner->getOperands()) {
      if (!isa<TensorType>(operand.getType()) ||
          llvm::is_contained(tables, operand))
        continue;
      Region *home = operand.getParentRegion();
      if (home && op->getRegion(0).isAncestor(home))
        continue;
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      auto sharding = type ? dyn_cast_or_null<ShardingAttr>(type.getEncoding())
                           : ShardingAttr();
      if (sharding && sharding.isReplicated())
        continue;
      why = llvm::formatv("its body reads a tensor defined outside it (by `{0}`"
                          "); pass it as an input of the op instead",
                          inner->getName())
                .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

/// Every strategy of a linalg op (the rule's assignments, with the partial
/// values and interleaved splits its operands may arrive in).
llvm::Expected<PartitionOptions> linalgOptions(linalg::LinalgOp op,
                                               const PartitionQuery &query) {
  llvm::Expected<LoopRule> rule = LoopRule::get(op);
  if (!rule)
    return rule.takeError();
  std::string why;
  if (failed(checkNoCapturedTensors(op, why)))
    return llvm::createStringError(why);

  PartitionOptions options;
  for (OpOperand &operand : op->getOpOperands()) {
    unsigned o = operand.getOperandNumber();
    options.placed.push_back(rule->operandIsTensor[o]);
    options.tiedResult.push_back(o >= rule->numInputs ? int(o - rule->numInputs)
                                                      : -1);
  }
  for (auto [loop, reason] : llvm::enumerate(rule->whyNotSplit))
    if (!reason.empty() && rule->loopExtents[loop] > 1)
      options.notes.push_back(
          llvm::formatv("loop d{0} is not split: {1}", loop, reason).str());

  // Partial values the inputs may arrive with.
  std::vector<PartialSpec> specs;
  std::vector<uint32_t> offeredBy; // per spec: the inputs that may offer it
  for (unsigned i = 0;
       i < rule->numInputs && i < 32 && i < query.offered.size(); ++i) {
    if (!rule->operandIsTensor[i])
      continue;
    for (const planner::Layout &layout : query.offered[i]) {
      if (!layout.hasPartial())
        continue;
      PartialSpec spec{layout.partialKind, layout.partialAxes};
      auto found = llvm::find(specs, spec);
      if (found == specs.end()) {
        specs.push_back(spec);
        offeredBy.push_back(0);
        found = specs.end() - 1;
      }
      offeredBy[found - specs.begin()] |= 1u << i;
    }
  }

  // The layouts each operand may arrive in, and the declared results' (the
  // inits, which carry them), seed the assignments on meshes of many axes.
  std::vector<std::vector<planner::Layout>> offered(query.offered.begin(),
                                                    query.offered.end());
  offered.resize(op->getNumOperands());
  for (auto [r, declared] : llvm::enumerate(query.declared))
    if (declared && rule->numInputs + r < offered.size())
      offered[rule->numInputs + r].push_back(*declared);

  // Interleaved splits an operand arrives in (a fused QKV weight's rows):
  // its loop may be split per segment too, so that the op computes on the
  // interleaved blocks where they are.
  struct SegmentedLoop {
    unsigned loop;
    SmallVector<unsigned, 2> axes;
    std::vector<int64_t> segments;
    bool operator==(const SegmentedLoop &o) const {
      return loop == o.loop && axes == o.axes && segments == o.segments;
    }
  };
  std::vector<SegmentedLoop> segmentedLoops;
  for (auto [o, layouts] : llvm::enumerate(offered))
    for (const planner::Layout &layout : layouts)
      for (unsigned d = 0; d < layout.getRank(); ++d) {
        int64_t loop = d < rule->operandDimLoops[o].size()
                           ? rule->operandDimLoops[o][d]
                           : -1;
        if (!layout.isSegmented(d) || loop < 0 ||
            rule->operandDimDivisors[o][d] != 1)
          continue;
        SegmentedLoop candidate{
            unsigned(loop),
            SmallVector<unsigned, 2>(layout.dimAxes[d].begin(),
                                     layout.dimAxes[d].end()),
            layout.segments[d]};
        if (!llvm::is_contained(segmentedLoops, candidate))
          segmentedLoops.push_back(std::move(candidate));
      }

  std::set<std::string> refusals;
  auto tryStrategy = [&](const LoopStrategy &strategy) {
    if (std::optional<PartitionStrategy> layouts =
            layoutsOf(*rule, query.mesh, strategy, &refusals))
      options.add(std::move(*layouts), query.maxStrategies);
  };
  // Each assignment, and its variants with a loop split per segment where
  // it takes that segmented operand's axes.
  auto tryWithSegments = [&](const Assignment &assignment,
                             std::optional<PartialSpec> spec, uint32_t mask) {
    tryStrategy(LoopStrategy{assignment, spec, mask, {}});
    for (const SegmentedLoop &segmented : segmentedLoops) {
      if (assignment[segmented.loop] != segmented.axes)
        continue;
      LoopStrategy strategy{assignment, spec, mask, {}};
      strategy.loopSegments.resize(rule->numLoops);
      strategy.loopSegments[segmented.loop] = segmented.segments;
      tryStrategy(strategy);
    }
  };
  for (auto &assignment : candidateAssignments(*rule, query.mesh, {}, offered,
                                               query.assignmentBudget))
    tryWithSegments(assignment, std::nullopt, 0);
  for (auto [spec, inputs] : llvm::zip(specs, offeredBy)) {
    auto assignments = candidateAssignments(*rule, query.mesh, spec.axes,
                                            offered, query.assignmentBudget);
    // Every non-empty subset of the inputs that may arrive partial.
    for (uint32_t mask = inputs; mask; mask = (mask - 1) & inputs)
      for (auto &assignment : assignments)
        tryWithSegments(assignment, spec, mask);
  }
  addRowSplitStrategies(op, query, options);
  options.notes.insert(options.notes.end(), refusals.begin(), refusals.end());
  if (options.strategies.empty())
    return llvm::createStringError("no layout is valid for it");
  return options;
}

/// How each loop of a partitioned linalg op is split, read off its
/// operands' layouts (dist-partition split every operand dim a loop indexes
/// alike; a dim indexed by `loop floordiv G` tells the loop's axes too).
SmallVector<std::optional<DimSplit>>
loopSplits(linalg::LinalgOp op, const LocalizeContext &context) {
  SmallVector<std::optional<DimSplit>> splits(op.getNumLoops());
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (bool plainOnly : {true, false})
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.get().getType());
      std::optional<ShardedTypeInfo> info =
          type ? context.getShardedInfo(type) : std::nullopt;
      if (!info)
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      for (auto [d, expr] : llvm::enumerate(map.getResults())) {
        std::optional<unsigned> loop;
        if (auto dim = dyn_cast<AffineDimExpr>(expr))
          loop = dim.getPosition();
        else if (!plainOnly)
          if (auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
              binary && binary.getKind() == AffineExprKind::FloorDiv)
            if (auto dim = dyn_cast<AffineDimExpr>(binary.getLHS()))
              loop = dim.getPosition();
        if (!loop || splits[*loop] || info->layout.dimAxes[d].empty())
          continue;
        DimSplit split = DimSplit::of(*info, type.getShape(), d);
        split.extent = ranges[*loop];
        if (!isa<AffineDimExpr>(expr))
          split.segments.clear();
        splits[*loop] = std::move(split);
      }
    }
  return splits;
}

FailureOr<SmallVector<Value>> localizeLinalg(linalg::LinalgOp op,
                                             RewriterBase &rewriter,
                                             ValueRange localOperands,
                                             const LocalizeContext &context) {
  SmallVector<std::optional<DimSplit>> splits = loopSplits(op, context);
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  // Tables the body looks up: inputs of the global op only.
  SmallVector<TableInput> tables = tableInputs(op);
  // Where the body asks for positions: linalg.index of a split loop (a
  // table read only at a loop's position reads its local block there).
  auto onlyIndexesTables = [&](linalg::IndexOp index) {
    return llvm::all_of(index->getUsers(), [&](Operation *user) {
      return llvm::any_of(tables, [&](const TableInput &table) {
        tensor::ExtractOp read = table.read.extract;
        return user == read.getOperation();
      });
    });
  };
  SmallVector<linalg::IndexOp> indices;
  op->walk([&](linalg::IndexOp index) {
    if (index->getParentOp() == op && splits[index.getDim()] &&
        splits[index.getDim()]->isSplit() && !onlyIndexesTables(index))
      indices.push_back(index);
  });
  // Reduction loops whose last blocks hold padding.
  SmallVector<unsigned> padded;
  for (auto [loop, split] : llvm::enumerate(splits))
    if (split && split->isSplit() && !split->isEven() &&
        iterators[loop] == utils::IteratorType::reduction)
      padded.push_back(loop);
  if (indices.empty() && padded.empty() && tables.empty())
    return localizeByRetyping(op, rewriter, localOperands, context);

  Location loc = op.getLoc();
  // Shard indices, once per loop, before the op.
  DenseMap<unsigned, Value> shards;
  auto shardOf = [&](unsigned loop) {
    Value &shard = shards[loop];
    if (!shard)
      shard = buildShardIndex(rewriter, loc, *splits[loop]);
    return shard;
  };
  for (linalg::IndexOp index : indices)
    shardOf(index.getDim());
  SmallVector<Value> validCounts;
  for (unsigned loop : padded)
    validCounts.push_back(
        buildValidCount(rewriter, loc, *splits[loop], shardOf(loop)));

  // The body is edited, so the local op is a linalg.generic (a named op's
  // body is implicit).
  SmallVector<Type> resultTypes;
  for (Type type : op->getResultTypes())
    resultTypes.push_back(context.getLocalType(type));
  unsigned numInputs = op.getNumDpsInputs();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  auto isTable = [&](unsigned operand) {
    return llvm::any_of(
        tables, [&](const TableInput &t) { return t.input == operand; });
  };
  for (OpOperand &operand : op->getOpOperands()) {
    unsigned o = operand.getOperandNumber();
    if (isTable(o))
      continue;
    if (o < numInputs)
      inputs.push_back(localOperands[o]);
    maps.push_back(op.getMatchingIndexingMap(&operand));
  }
  auto generic = linalg::GenericOp::create(rewriter, loc, resultTypes, inputs,
                                           localOperands.drop_front(numInputs),
                                           maps, iterators);
  rewriter.inlineRegionBefore(op->getRegion(0), generic.getRegion(),
                              generic.getRegion().end());
  Block *body = generic.getBody();
  for (const TableInput &table : llvm::reverse(tables))
    body->eraseArgument(table.input);

  // linalg.index of a split loop: the device's global position.
  for (linalg::IndexOp index : indices) {
    rewriter.setInsertionPoint(index);
    unsigned loop = index.getDim();
    Value local = linalg::IndexOp::create(rewriter, index.getLoc(), loop);
    rewriter.replaceOp(index,
                       buildGlobalIndex(rewriter, index.getLoc(), *splits[loop],
                                        shardOf(loop), local));
  }

  localizeTableReads(rewriter, tables, op, localOperands, context, generic);

  // Padded iterations of a split reduction yield the accumulators as they
  // are, so padding acts as the combiner's identity whatever the body does.
  if (!padded.empty()) {
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    rewriter.setInsertionPoint(yield);
    Value inside;
    for (auto [loop, count] : llvm::zip(padded, validCounts)) {
      Value index = linalg::IndexOp::create(rewriter, loc, loop);
      Value cond = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::slt, index, count);
      inside =
          inside ? arith::AndIOp::create(rewriter, loc, inside, cond) : cond;
    }
    SmallVector<Value> yielded;
    for (auto [r, value] : llvm::enumerate(yield.getOperands()))
      yielded.push_back(arith::SelectOp::create(
          rewriter, loc, inside, value, body->getArgument(numInputs + r)));
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperands(yielded); });
  }
  rewriter.setInsertionPointAfter(generic);
  return SmallVector<Value>(generic->getResults());
}

template <typename OpTy>
struct LinalgPartitionModel
    : PartitionableOpInterface::ExternalModel<LinalgPartitionModel<OpTy>,
                                              OpTy> {
  llvm::Expected<PartitionOptions>
  getPartitionOptions(Operation *op, const PartitionQuery &query) const {
    return linalgOptions(cast<linalg::LinalgOp>(op), query);
  }
  LogicalResult verifyLocalizable(Operation *op,
                                  const LocalizeContext &context) const {
    // A split or partial tensor the body reads from outside would be read
    // at global positions in the local block: never localized silently.
    std::string why;
    if (failed(checkNoCapturedTensors(cast<linalg::LinalgOp>(op), why)))
      return op->emitOpError("cannot be localized: ")
             << why << " (dist-partition does, or reads it whole)";
    return verifyTableLayouts(cast<linalg::LinalgOp>(op), context);
  }
  FailureOr<SmallVector<Value>> localize(Operation *op, RewriterBase &rewriter,
                                         ValueRange localOperands,
                                         const LocalizeContext &context) const {
    return localizeLinalg(cast<linalg::LinalgOp>(op), rewriter, localOperands,
                          context);
  }
};

template <typename... OpTys> void attachToAll(MLIRContext *context) {
  (OpTys::template attachInterface<LinalgPartitionModel<OpTys>>(*context), ...);
}

} // namespace

void dist::partition::registerLinalgPartitionModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, linalg::LinalgDialect *) {
    attachToAll<
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
        >(context);
  });
}
