//===- SliceModels.cpp - tensor.extract_slice / insert_slice --------------===//
//
// Both ops relate a *whole* tensor (extract's source, insert's destination
// and result) to a *part* of it (extract's result, insert's source). They
// run locally when every split dim's slice is aligned with the blocks
// (SliceAlignment.h): taking segment k of an interleaved dim (Q, K and V
// out of a fused projection) or a prefix with the same blocks. Dims without
// axes slice as they are, at any offset and stride, dynamic ones included
// (a layer's weights out of a stacked tensor indexed by a loop). A partial
// value is sliced and inserted as it is (selection is linear), with the
// same partial axes on both sides.
//
// Strategies: from every layout the whole may arrive in (as it is, with the
// misaligned dims viewed as segments [o, n, rest], or with them gathered),
// from every layout the part may arrive in or declares, and replicated.
//
//===----------------------------------------------------------------------===//

#include "PartitionModelsInternal.h"
#include "SliceAlignment.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {

/// A slice's geometry, in the whole tensor's dims.
struct SliceGeometry {
  SmallVector<int64_t> wholeShape;
  SmallVector<OpFoldResult> offsets, sizes, strides;
  /// Per whole dim: the part's dim, or -1 for a dim the slice drops.
  SmallVector<int> partDim;
  unsigned partRank = 0;
  /// The part is written into the whole (insert_slice), not read from it.
  bool writes = false;

  static llvm::Expected<SliceGeometry>
  get(OffsetSizeAndStrideOpInterface op, RankedTensorType whole,
      RankedTensorType part, const llvm::SmallBitVector &dropped) {
    bool writes = isa<tensor::InsertSliceOp>(op.getOperation());
    if (!whole.hasStaticShape() || !part.hasStaticShape())
      return llvm::createStringError("its shapes are dynamic; dist-partition "
                                     "needs static shapes");
    SliceGeometry g;
    g.writes = writes;
    g.wholeShape.assign(whole.getShape().begin(), whole.getShape().end());
    g.offsets = op.getMixedOffsets();
    g.sizes = op.getMixedSizes();
    g.strides = op.getMixedStrides();
    for (unsigned d = 0; d < whole.getRank(); ++d) {
      if (!getConstantIntValue(g.sizes[d]))
        return llvm::createStringError("its sizes are dynamic; "
                                       "dist-partition needs static sizes");
      g.partDim.push_back(dropped.test(d) ? -1 : int(g.partRank++));
    }
    return g;
  }

  int64_t size(unsigned d) const { return *getConstantIntValue(sizes[d]); }
  /// Whether dim d may be split: a static offset and unit stride.
  bool alignable(unsigned d) const {
    std::optional<int64_t> stride = getConstantIntValue(strides[d]);
    return partDim[d] >= 0 && getConstantIntValue(offsets[d]) && stride &&
           *stride == 1;
  }
  int64_t offset(unsigned d) const { return *getConstantIntValue(offsets[d]); }

  /// The part's layout when the slice is local in `whole`; otherwise the
  /// whole's dims that are not aligned go into `misaligned`.
  std::optional<planner::Layout>
  partOf(const planner::Mesh &mesh, const planner::Layout &whole,
         SmallVectorImpl<unsigned> *misaligned = nullptr) const {
    planner::Layout part = planner::Layout::replicated(partRank);
    part.partialAxes = whole.partialAxes;
    part.partialKind = whole.partialKind;
    bool ok = true;
    for (unsigned d = 0; d < wholeShape.size(); ++d) {
      DimLayout dim = dimLayoutOf(whole, d);
      int64_t parts = 1;
      for (unsigned axis : dim.axes)
        parts *= mesh.getAxisSize(axis);
      if (parts == 1) {
        if (partDim[d] >= 0)
          setDimLayout(part, partDim[d], DimLayout{dim.axes, {}});
        continue;
      }
      std::optional<AlignedSlice> aligned;
      if (alignable(d))
        aligned =
            alignSlice(mesh, dim, wholeShape[d], offset(d), size(d), writes);
      if (!aligned) {
        ok = false;
        if (misaligned)
          misaligned->push_back(d);
        continue;
      }
      setDimLayout(part, partDim[d], aligned->slice);
    }
    part.canonicalize();
    if (!ok)
      return std::nullopt;
    return part;
  }

  /// A whole layout in which the slice is local and laid out as `part`,
  /// if the part's split dims can be aligned.
  std::optional<planner::Layout> wholeFor(const planner::Mesh &mesh,
                                          const planner::Layout &part) const {
    planner::Layout whole = planner::Layout::replicated(wholeShape.size());
    whole.partialAxes = part.partialAxes;
    whole.partialKind = part.partialKind;
    for (unsigned d = 0; d < wholeShape.size(); ++d) {
      if (partDim[d] < 0)
        continue;
      DimLayout dim = dimLayoutOf(part, partDim[d]);
      if (dim.axes.empty())
        continue;
      if (!alignable(d))
        return std::nullopt;
      setDimLayout(
          whole, d,
          wholeForSlice(mesh, dim, wholeShape[d], offset(d), size(d), writes));
    }
    whole.canonicalize();
    return whole;
  }
};

/// Wholes viewed as segments around the slice, besides those of the parts'
/// layouts, that one op proposes.
constexpr size_t kMaxSegmentViews = 4;

/// Every (whole, part) pair worth trying.
std::vector<std::pair<planner::Layout, planner::Layout>>
slicePairs(const SliceGeometry &g, const planner::Mesh &mesh,
           ArrayRef<planner::Layout> wholes, ArrayRef<planner::Layout> parts) {
  std::vector<std::pair<planner::Layout, planner::Layout>> pairs;
  auto add = [&](const planner::Layout &whole) {
    if (std::optional<planner::Layout> part = g.partOf(mesh, whole)) {
      std::pair<planner::Layout, planner::Layout> pair{whole, *part};
      if (!llvm::is_contained(pairs, pair))
        pairs.push_back(std::move(pair));
    }
  };
  // The layouts a part arrives in or declares first: their wholes are the
  // ones a consumer asked for.
  std::vector<planner::Layout> seeds;
  for (const planner::Layout &part : parts)
    if (std::optional<planner::Layout> whole = g.wholeFor(mesh, part))
      seeds.push_back(*whole);
  size_t fromParts = seeds.size();
  seeds.insert(seeds.end(), wholes.begin(), wholes.end());
  size_t views = 0;
  for (auto [i, whole] : llvm::enumerate(seeds)) {
    SmallVector<unsigned> misaligned;
    if (g.partOf(mesh, whole, &misaligned)) {
      add(whole);
      continue;
    }
    // Pricing a move into a segmented layout is the planner's slowest
    // search; beyond the parts' own layouts, a few views are enough to
    // offer the choice (a program on 2x2x2 took 109 s).
    if (i >= fromParts && views >= kMaxSegmentViews) {
      planner::Layout gathered = whole;
      for (unsigned d : misaligned)
        setDimLayout(gathered, d, DimLayout{});
      add(gathered);
      continue;
    }
    ++views;
    // The misaligned dims viewed as segments around the slice, or gathered.
    planner::Layout viewed = whole, gathered = whole;
    for (unsigned d : misaligned) {
      DimLayout dim = dimLayoutOf(whole, d);
      setDimLayout(gathered, d, DimLayout{});
      if (g.alignable(d))
        setDimLayout(viewed, d,
                     wholeForSlice(mesh, DimLayout{dim.axes, {}},
                                   g.wholeShape[d], g.offset(d), g.size(d),
                                   g.writes));
      else
        setDimLayout(viewed, d, DimLayout{});
    }
    add(viewed);
    add(gathered);
  }
  // Replicated, with every partial value the whole may carry.
  add(planner::Layout::replicated(g.wholeShape.size()));
  for (const planner::Layout &whole : wholes)
    if (whole.hasPartial()) {
      planner::Layout replicated =
          planner::Layout::replicated(g.wholeShape.size());
      replicated.partialAxes = whole.partialAxes;
      replicated.partialKind = whole.partialKind;
      add(replicated);
    }
  return pairs;
}

/// The local offsets, sizes and strides of a slice whose whole is laid out
/// as `whole`: a split dim's at its aligned local position.
void localSlice(const SliceGeometry &g, const ShardedTypeInfo *whole,
                SmallVectorImpl<OpFoldResult> &offsets,
                SmallVectorImpl<OpFoldResult> &sizes,
                SmallVectorImpl<OpFoldResult> &strides, Builder &b) {
  offsets.assign(g.offsets.begin(), g.offsets.end());
  sizes.assign(g.sizes.begin(), g.sizes.end());
  strides.assign(g.strides.begin(), g.strides.end());
  if (!whole)
    return;
  for (unsigned d = 0; d < g.wholeShape.size(); ++d) {
    DimLayout dim = dimLayoutOf(whole->layout, d);
    if (whole->layout.shardCount(*whole->mesh, d) == 1)
      continue;
    // The partitioner only chose aligned slices (localize checks again).
    std::optional<AlignedSlice> aligned = alignSlice(
        *whole->mesh, dim, g.wholeShape[d], g.offset(d), g.size(d), g.writes);
    offsets[d] = b.getIndexAttr(aligned->localOffset);
    sizes[d] = b.getIndexAttr(aligned->localSize);
  }
}

/// The per-device slice of `slice` (whose whole is `wholeType`), built by
/// `create` from the local offsets, sizes and strides.
FailureOr<SmallVector<Value>>
localizeSlice(Operation *op, OffsetSizeAndStrideOpInterface slice,
              RankedTensorType wholeType, RankedTensorType partType,
              const llvm::SmallBitVector &dropped, RewriterBase &rewriter,
              const LocalizeContext &context,
              function_ref<Value(ArrayRef<OpFoldResult>, ArrayRef<OpFoldResult>,
                                 ArrayRef<OpFoldResult>)>
                  create) {
  llvm::Expected<SliceGeometry> g =
      SliceGeometry::get(slice, wholeType, partType, dropped);
  if (!g)
    return op->emitOpError("cannot be localized: ")
           << llvm::toString(g.takeError());
  std::optional<ShardedTypeInfo> whole = context.getShardedInfo(wholeType);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  localSlice(*g, whole ? &*whole : nullptr, offsets, sizes, strides, rewriter);
  return SmallVector<Value>{create(offsets, sizes, strides)};
}

/// Checks that every split dim of the whole is aligned and the part laid
/// out as the slice of it (the types the partitioner wrote say so;
/// hand-written IR may not).
LogicalResult checkSlice(Operation *op, OffsetSizeAndStrideOpInterface slice,
                         RankedTensorType wholeType, RankedTensorType partType,
                         const llvm::SmallBitVector &dropped,
                         const LocalizeContext &context) {
  llvm::Expected<SliceGeometry> g =
      SliceGeometry::get(slice, wholeType, partType, dropped);
  if (!g)
    return op->emitOpError("cannot be localized: ")
           << llvm::toString(g.takeError());
  std::optional<ShardedTypeInfo> whole = context.getShardedInfo(wholeType);
  std::optional<ShardedTypeInfo> part = context.getShardedInfo(partType);
  if (!whole && !part)
    return success();
  if (!whole || !part || whole->meshOp != part->meshOp)
    return op->emitOpError("cannot be localized: both sides of a slice must "
                           "be sharded on the same mesh");
  std::optional<planner::Layout> expected =
      g->partOf(*whole->mesh, whole->layout);
  if (!expected)
    return op->emitOpError("cannot be localized: the slice is not aligned "
                           "with the blocks of its split dims (dist-partition "
                           "reshards it into a layout where it is)");
  if (*expected != part->layout)
    return op->emitOpError("cannot be localized: the slice of layout ")
           << planner::printLayout(*whole->mesh, whole->layout) << " is "
           << planner::printLayout(*whole->mesh, *expected) << ", not "
           << planner::printLayout(*whole->mesh, part->layout);
  return success();
}

struct ExtractSliceModel
    : PartitionableOpInterface::ExternalModel<ExtractSliceModel,
                                              tensor::ExtractSliceOp> {
  llvm::Expected<PartitionOptions>
  getPartitionOptions(Operation *op, const PartitionQuery &query) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    llvm::Expected<SliceGeometry> g = SliceGeometry::get(
        slice, slice.getSourceType(), slice.getType(), slice.getDroppedDims());
    if (!g)
      return g.takeError();
    PartitionOptions options;
    options.placed.assign(op->getNumOperands(), false);
    options.placed[0] = true;
    options.tiedResult.assign(op->getNumOperands(), -1);
    std::vector<planner::Layout> parts;
    if (!query.declared.empty() && query.declared[0])
      parts.push_back(*query.declared[0]);
    for (auto &[whole, part] :
         slicePairs(*g, query.mesh,
                    query.offered.empty() ? ArrayRef<planner::Layout>()
                                          : ArrayRef(query.offered[0]),
                    parts)) {
      PartitionStrategy strategy;
      strategy.operands.resize(op->getNumOperands());
      strategy.operands[0] = whole;
      strategy.results.push_back(part);
      options.add(std::move(strategy), query.maxStrategies);
    }
    return options;
  }

  LogicalResult verifyLocalizable(Operation *op,
                                  const LocalizeContext &context) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    return checkSlice(op, slice, slice.getSourceType(), slice.getType(),
                      slice.getDroppedDims(), context);
  }

  FailureOr<SmallVector<Value>> localize(Operation *op, RewriterBase &rewriter,
                                         ValueRange localOperands,
                                         const LocalizeContext &context) const {
    auto slice = cast<tensor::ExtractSliceOp>(op);
    auto type = cast<RankedTensorType>(context.getLocalType(slice.getType()));
    return localizeSlice(
        op, slice, slice.getSourceType(), slice.getType(),
        slice.getDroppedDims(), rewriter, context,
        [&](ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
            ArrayRef<OpFoldResult> strides) -> Value {
          return tensor::ExtractSliceOp::create(rewriter, op->getLoc(), type,
                                                localOperands[0], offsets,
                                                sizes, strides);
        });
  }
};

struct InsertSliceModel
    : PartitionableOpInterface::ExternalModel<InsertSliceModel,
                                              tensor::InsertSliceOp> {
  llvm::Expected<PartitionOptions>
  getPartitionOptions(Operation *op, const PartitionQuery &query) const {
    auto insert = cast<tensor::InsertSliceOp>(op);
    llvm::Expected<SliceGeometry> g =
        SliceGeometry::get(insert, insert.getDestType(), insert.getSourceType(),
                           insert.getDroppedDims());
    if (!g)
      return g.takeError();
    PartitionOptions options;
    options.placed.assign(op->getNumOperands(), false);
    options.placed[0] = options.placed[1] = true;
    options.tiedResult.assign(op->getNumOperands(), -1);
    options.tiedResult[1] = 0;
    std::vector<planner::Layout> wholes;
    if (query.offered.size() > 1)
      wholes = query.offered[1];
    if (!query.declared.empty() && query.declared[0])
      wholes.push_back(*query.declared[0]);
    std::vector<planner::Layout> parts;
    if (!query.offered.empty())
      parts = query.offered[0];
    for (auto &[whole, part] : slicePairs(*g, query.mesh, wholes, parts)) {
      PartitionStrategy strategy;
      strategy.operands.resize(op->getNumOperands());
      strategy.operands[0] = part;
      strategy.operands[1] = whole;
      strategy.results.push_back(whole);
      options.add(std::move(strategy), query.maxStrategies);
    }
    return options;
  }

  LogicalResult verifyLocalizable(Operation *op,
                                  const LocalizeContext &context) const {
    auto insert = cast<tensor::InsertSliceOp>(op);
    if (insert.getDestType() != insert.getType())
      return op->emitOpError("cannot be localized: its result is laid out "
                             "unlike its destination");
    return checkSlice(op, insert, insert.getDestType(), insert.getSourceType(),
                      insert.getDroppedDims(), context);
  }

  FailureOr<SmallVector<Value>> localize(Operation *op, RewriterBase &rewriter,
                                         ValueRange localOperands,
                                         const LocalizeContext &context) const {
    auto insert = cast<tensor::InsertSliceOp>(op);
    return localizeSlice(
        op, insert, insert.getDestType(), insert.getSourceType(),
        insert.getDroppedDims(), rewriter, context,
        [&](ArrayRef<OpFoldResult> offsets, ArrayRef<OpFoldResult> sizes,
            ArrayRef<OpFoldResult> strides) -> Value {
          return tensor::InsertSliceOp::create(
              rewriter, op->getLoc(), localOperands[0], localOperands[1],
              offsets, sizes, strides);
        });
  }
};

} // namespace

void dist::partition::registerSlicePartitionModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    tensor::ExtractSliceOp::attachInterface<ExtractSliceModel>(*context);
    tensor::InsertSliceOp::attachInterface<InsertSliceModel>(*context);
  });
}
