//===- ConcatPadModels.cpp - tensor.concat and tensor.pad -----------------===//
//
// Both ops put pieces side by side along a dim, which is what an
// interleaved layout (docs/semantics.md, segments) describes:
//
//  - tensor.concat of inputs split alike: along the concatenated dim, the
//    result is split by the same axes *per input*, i.e. with segments
//    [n_1, ..., n_k] (each input's own segments, if it has some, in turn).
//    Every device already holds its block of every segment, so the local op
//    is the concat of the local blocks. (The fused QKV weight is such a
//    concat of the Q, K and V weights.)
//  - tensor.pad with a constant value: along a split dim the result is
//    segments [low, N, high] (empty ones left out); a device's block of the
//    low and high segments is ceil(low / P) and ceil(high / P) elements of
//    the padding value, so the local op pads its block by those amounts.
//    Partial inputs are reduced first (padding with v would add v once per
//    device).
//
//===----------------------------------------------------------------------===//

#include "LoopRule.h"
#include "PartitionModelsInternal.h"
#include "SliceAlignment.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {

/// The dim's extent seen as segments (its own, or one).
std::vector<int64_t> segmentsOrExtent(const DimLayout &dim, int64_t extent) {
  return dim.segments.empty() ? std::vector<int64_t>{extent} : dim.segments;
}

/// The layout of a concat's result when its inputs are laid out as
/// `inputs`, or nullopt when they are not split alike.
std::optional<planner::Layout> concatResult(unsigned axisDim,
                                            ArrayRef<RankedTensorType> types,
                                            ArrayRef<planner::Layout> inputs) {
  planner::Layout result = inputs.front();
  DimLayout along = dimLayoutOf(result, axisDim);
  std::vector<int64_t> segments;
  for (auto [type, input] : llvm::zip(types, inputs)) {
    planner::Layout others = input, first = inputs.front();
    setDimLayout(others, axisDim, DimLayout{});
    setDimLayout(first, axisDim, DimLayout{});
    DimLayout mine = dimLayoutOf(input, axisDim);
    if (others != first || mine.axes != along.axes)
      return std::nullopt;
    std::vector<int64_t> pieces =
        segmentsOrExtent(mine, type.getDimSize(axisDim));
    segments.insert(segments.end(), pieces.begin(), pieces.end());
  }
  if (along.axes.empty() || segments.size() == 1)
    segments.clear();
  setDimLayout(result, axisDim, DimLayout{along.axes, segments});
  return result;
}

/// The layout of a pad's result when its source is laid out as `source`.
planner::Layout padResult(RankedTensorType type, ArrayRef<int64_t> low,
                          ArrayRef<int64_t> high,
                          const planner::Layout &source) {
  planner::Layout result = source;
  for (unsigned d = 0; d < type.getRank(); ++d) {
    DimLayout dim = dimLayoutOf(source, d);
    if (dim.axes.empty())
      continue;
    std::vector<int64_t> segments;
    if (low[d] > 0)
      segments.push_back(low[d]);
    std::vector<int64_t> middle = segmentsOrExtent(dim, type.getDimSize(d));
    segments.insert(segments.end(), middle.begin(), middle.end());
    if (high[d] > 0)
      segments.push_back(high[d]);
    if (segments.size() == 1)
      segments.clear();
    setDimLayout(result, d, DimLayout{dim.axes, segments});
  }
  return result;
}

/// Whether the types say what `expected` computes from the operands.
LogicalResult checkResult(Operation *op, const LocalizeContext &context,
                          std::optional<planner::Layout> expected) {
  std::optional<ShardedTypeInfo> result =
      context.getShardedInfo(op->getResult(0).getType());
  if (!result)
    return success();
  if (!expected)
    return op->emitOpError("cannot be localized: its operands are not split "
                           "alike");
  if (*expected != result->layout)
    return op->emitOpError("cannot be localized: its operands' layouts give "
                           "the result ")
           << planner::printLayout(*result->mesh, *expected) << ", not "
           << planner::printLayout(*result->mesh, result->layout);
  return success();
}

struct ConcatModel
    : PartitionableOpInterface::ExternalModel<ConcatModel, tensor::ConcatOp> {
  LogicalResult verifyLocalizable(Operation *op,
                                  const LocalizeContext &context) const {
    auto concat = cast<tensor::ConcatOp>(op);
    SmallVector<RankedTensorType> types;
    std::vector<planner::Layout> inputs;
    for (Value input : concat.getInputs()) {
      std::optional<ShardedTypeInfo> info =
          context.getShardedInfo(input.getType());
      if (!info)
        return success(!context.getShardedInfo(concat.getType()));
      types.push_back(cast<RankedTensorType>(input.getType()));
      inputs.push_back(info->layout);
    }
    return checkResult(op, context,
                       concatResult(concat.getDim(), types, inputs));
  }

  llvm::Expected<PartitionOptions>
  getPartitionOptions(Operation *op, const PartitionQuery &query) const {
    auto concat = cast<tensor::ConcatOp>(op);
    unsigned axisDim = concat.getDim();
    SmallVector<RankedTensorType> types;
    for (Value input : concat.getInputs()) {
      auto type = cast<RankedTensorType>(input.getType());
      if (!type.hasStaticShape())
        return llvm::createStringError("its shapes are dynamic; "
                                       "dist-partition needs static shapes");
      types.push_back(type);
    }
    unsigned rank = types.front().getRank();
    PartitionOptions options;
    options.placed.assign(op->getNumOperands(), true);
    options.tiedResult.assign(op->getNumOperands(), -1);

    // Every input laid out like `like` (the concatenated dim keeps its
    // axes; input `own`, if any, keeps its own segments there).
    auto tryLike = [&](const planner::Layout &like, int own) {
      PartitionStrategy strategy;
      DimLayout along = dimLayoutOf(like, axisDim);
      for (unsigned i = 0; i < types.size(); ++i) {
        planner::Layout input = like;
        setDimLayout(input, axisDim,
                     DimLayout{along.axes, int(i) == own
                                               ? along.segments
                                               : std::vector<int64_t>()});
        strategy.operands.push_back(std::move(input));
      }
      std::optional<planner::Layout> result =
          concatResult(axisDim, types, strategy.operands);
      if (!result)
        return;
      strategy.results.push_back(std::move(*result));
      options.add(std::move(strategy), query.maxStrategies);
    };
    auto tryBoth = [&](const planner::Layout &like, int own) {
      tryLike(like, own);
      planner::Layout unsplit = like;
      setDimLayout(unsplit, axisDim, DimLayout{});
      tryLike(unsplit, -1);
    };
    for (unsigned i = 0; i < query.offered.size(); ++i)
      for (const planner::Layout &layout : query.offered[i])
        tryBoth(layout, i);
    if (!query.declared.empty() && query.declared[0]) {
      // A declared result whose segments line up with the inputs: each
      // input takes its run of segments.
      const planner::Layout &declared = *query.declared[0];
      DimLayout along = dimLayoutOf(declared, axisDim);
      planner::Layout like = declared;
      setDimLayout(like, axisDim, DimLayout{along.axes, {}});
      std::vector<int64_t> expected;
      for (RankedTensorType type : types)
        expected.push_back(type.getDimSize(axisDim));
      if (along.axes.empty() || along.segments == expected)
        tryLike(like, -1);
      tryBoth(like, -1);
    }
    tryLike(planner::Layout::replicated(rank), -1);
    return options;
  }
};

/// Assignments of the pad model's own, beyond the layouts the source may
/// arrive in.
constexpr size_t kMaxPadAssignments = 8;

struct PadModel
    : PartitionableOpInterface::ExternalModel<PadModel, tensor::PadOp> {
  /// Low and high padding, when static.
  static std::optional<std::pair<SmallVector<int64_t>, SmallVector<int64_t>>>
  staticPadding(tensor::PadOp pad) {
    SmallVector<int64_t> low, high;
    for (auto [l, h] : llvm::zip(pad.getMixedLowPad(), pad.getMixedHighPad())) {
      std::optional<int64_t> lv = getConstantIntValue(l);
      std::optional<int64_t> hv = getConstantIntValue(h);
      if (!lv || !hv)
        return std::nullopt;
      low.push_back(*lv);
      high.push_back(*hv);
    }
    return std::make_pair(low, high);
  }

  llvm::Expected<PartitionOptions>
  getPartitionOptions(Operation *op, const PartitionQuery &query) const {
    auto pad = cast<tensor::PadOp>(op);
    RankedTensorType type = pad.getSourceType();
    if (!type.hasStaticShape() || !pad.getResultType().hasStaticShape())
      return llvm::createStringError("its shapes are dynamic; dist-partition "
                                     "needs static shapes");
    auto padding = staticPadding(pad);
    if (!padding)
      return llvm::createStringError("its padding amounts are dynamic; "
                                     "dist-partition needs static ones");
    // A padding value that depends on the position would see local indices
    // on a split dim: such a pad runs replicated.
    bool invariant = static_cast<bool>(pad.getConstantPaddingValue());
    PartitionOptions options;
    options.placed.assign(op->getNumOperands(), false);
    options.placed[0] = true;
    options.tiedResult.assign(op->getNumOperands(), -1);
    if (!invariant)
      options.notes.push_back("no dim is split: its padding value depends on "
                              "the position");

    auto trySource = [&](planner::Layout source) {
      source.partialAxes.clear();
      if (!invariant)
        source = planner::Layout::replicated(type.getRank());
      PartitionStrategy strategy;
      strategy.operands.resize(op->getNumOperands());
      strategy.results.push_back(
          padResult(type, padding->first, padding->second, source));
      strategy.operands[0] = std::move(source);
      options.add(std::move(strategy), query.maxStrategies);
    };
    std::vector<planner::Layout> offered = query.offered.empty()
                                               ? std::vector<planner::Layout>()
                                               : query.offered[0];
    for (const planner::Layout &layout : offered)
      trySource(layout);
    // A few more assignments of axes to the source's dims: every split dim
    // gives an interleaved result, and pricing moves out of those is the
    // planner's slowest search (minutes on 2x2x2 meshes).
    LoopRule dims = LoopRule::identity(type.getShape());
    for (const Assignment &assignment : candidateAssignments(
             dims, query.mesh, {}, {offered},
             std::min(query.assignmentBudget, kMaxPadAssignments))) {
      planner::Layout layout;
      for (const auto &axes : assignment)
        layout.dimAxes.emplace_back(axes.begin(), axes.end());
      trySource(layout);
    }
    return options;
  }

  LogicalResult verifyLocalizable(Operation *op,
                                  const LocalizeContext &context) const {
    auto pad = cast<tensor::PadOp>(op);
    auto padding = staticPadding(pad);
    std::optional<ShardedTypeInfo> source =
        context.getShardedInfo(pad.getSourceType());
    if (!source)
      return success(!context.getShardedInfo(pad.getType()));
    if (!padding)
      return op->emitOpError("cannot be localized: its padding amounts are "
                             "dynamic");
    if (source->layout.hasPartial())
      return op->emitOpError("cannot be localized: it pads a partial value");
    bool split = llvm::any_of(source->layout.dimAxes,
                              [](const auto &axes) { return !axes.empty(); });
    if (split && !pad.getConstantPaddingValue())
      return op->emitOpError("cannot be localized: a split dim padded with "
                             "a value that depends on the position");
    return checkResult(op, context,
                       padResult(pad.getSourceType(), padding->first,
                                 padding->second, source->layout));
  }

  FailureOr<SmallVector<Value>> localize(Operation *op, RewriterBase &rewriter,
                                         ValueRange localOperands,
                                         const LocalizeContext &context) const {
    auto pad = cast<tensor::PadOp>(op);
    auto padding = staticPadding(pad);
    std::optional<ShardedTypeInfo> source =
        context.getShardedInfo(pad.getSourceType());
    // verifyLocalizable checked the padding and the layouts.
    SmallVector<int64_t> low = padding->first, high = padding->second;
    if (source)
      for (unsigned d = 0; d < low.size(); ++d) {
        int64_t parts = source->layout.shardCount(*source->mesh, d);
        if (parts == 1)
          continue;
        low[d] = llvm::divideCeilSigned(low[d], parts);
        high[d] = llvm::divideCeilSigned(high[d], parts);
      }
    auto type = cast<RankedTensorType>(context.getLocalType(pad.getType()));
    auto local = tensor::PadOp::create(
        rewriter, op->getLoc(), type, localOperands[0], low, high, ValueRange(),
        ValueRange(), pad.getNofold());
    rewriter.inlineRegionBefore(pad.getRegion(), local.getRegion(),
                                local.getRegion().end());
    return SmallVector<Value>{local.getResult()};
  }
};

} // namespace

void dist::partition::registerConcatPadPartitionModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    tensor::ConcatOp::attachInterface<ConcatModel>(*context);
    tensor::PadOp::attachInterface<PadModel>(*context);
  });
}
