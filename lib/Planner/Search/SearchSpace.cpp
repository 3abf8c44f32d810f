//===- SearchSpace.cpp - Packed layouts and move generation ---------------===//

#include "Search/SearchSpace.h"
#include "dist/Support/MixedRadix.h"

using namespace dist::planner;
using namespace dist::planner::detail;

PackedLayout dist::planner::detail::packLayout(const Layout &layout) {
  PackedLayout packed;
  for (unsigned d = 0; d < layout.dimAxes.size(); ++d)
    for (unsigned i = 0; i < layout.dimAxes[d].size(); ++i)
      packed.slot[layout.dimAxes[d][i]] = dimSlot(d, i);
  for (unsigned axis : layout.partialAxes)
    packed.slot[axis] = kPartialSlot;
  packed.kind = layout.hasPartial() ? uint8_t(layout.partialKind) : 0;
  return packed;
}

Layout dist::planner::detail::unpackLayout(const PackedLayout &packed,
                                           unsigned numAxes, unsigned rank) {
  Layout layout;
  unpackLayoutInto(packed, numAxes, rank, layout);
  return layout;
}

void dist::planner::detail::unpackLayoutInto(const PackedLayout &packed,
                                             unsigned numAxes, unsigned rank,
                                             Layout &layout) {
  layout.dimAxes.resize(rank);
  for (AxisList &axes : layout.dimAxes)
    axes.clear();
  layout.partialAxes.clear();
  layout.segments.clear();
  for (unsigned a = 0; a < numAxes; ++a) {
    uint8_t s = packed.slot[a];
    if (s == kPartialSlot) {
      layout.partialAxes.push_back(a);
    } else if (isDimSlot(s)) {
      auto &axes = layout.dimAxes[slotDim(s)];
      if (axes.size() <= slotPos(s))
        axes.resize(slotPos(s) + 1);
      axes[slotPos(s)] = a;
    }
  }
  layout.partialKind = ReductionKind(packed.kind);
}

Move PackedMove::toMove(const Mesh &mesh, const Layout &src,
                        const Layout &permuteTarget) const {
  std::vector<unsigned> list(axes, axes + numAxes);
  ReductionKind red = ReductionKind(reduction);
  switch (kind) {
  case MoveKind::AllGather:
    return Move::allGather(list, dim);
  case MoveKind::AllSlice:
    return Move::allSlice(list, dim);
  case MoveKind::AllToAll:
    return Move::allToAll(list, dim, toDim);
  case MoveKind::ReduceScatter:
    return Move::reduceScatter(list, dim, red);
  case MoveKind::AllReduce:
    return Move::allReduce(list, red);
  case MoveKind::ReplicateToPartial:
    return Move::replicateToPartial(list, red);
  case MoveKind::Permute:
    return Move::permute(mesh, src, permuteTarget);
  case MoveKind::Redistribute:
    return Move::redistribute(permuteTarget);
  }
  return Move();
}

SearchSpace::SearchSpace(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
                         int64_t elementBytes, const CostModel &model,
                         std::optional<int64_t> maxPeakBytes,
                         const PackedLayout &target)
    : mesh(mesh), model(model), numAxes(mesh.getNumAxes()), rank(shape.size()),
      shape(shape.begin(), shape.end()), elementBytes(elementBytes),
      maxPeak(maxPeakBytes), target(target),
      pruneReduceScatterGroups(model.sequentialReduceScatterIsCheaper()),
      localBeta(model.localSecondsPerByte()),
      slicesNoDearer(model.localCopiesNeverDearerThanSending()),
      uniformPermutePrice(model.permuteCostIsUniform()) {
  for (unsigned a = 0; a < kMaxMeshAxes; ++a)
    axisSize[a] = a < numAxes ? mesh.getAxisSize(a) : 1;
  for (unsigned a = 0; a < numAxes; ++a)
    if (axisSize[a] == 1)
      sizeOneMask |= 1u << a;
  view(target, targetView);
  targetPartialMask = targetView.partialMask;
}

void dist::planner::detail::viewOf(const PackedLayout &layout, unsigned numAxes,
                                   DimView &v) {
  // All of it, a fixed size the compiler clears inline (a loop over the
  // rank became a call to memset, a few percent of a hard search's views).
  std::memset(v.len, 0, sizeof(v.len));
  v.partialMask = v.replicatedMask = 0;
  for (unsigned a = 0; a < numAxes; ++a) {
    uint8_t s = layout.slot[a];
    if (s == kReplicatedSlot) {
      v.replicatedMask |= 1u << a;
    } else if (s == kPartialSlot) {
      v.partialMask |= 1u << a;
    } else {
      unsigned d = slotDim(s), pos = slotPos(s);
      v.axes[d][pos] = a;
      if (v.len[d] < pos + 1)
        v.len[d] = pos + 1;
    }
  }
}

void SearchSpace::view(const PackedLayout &layout, DimView &v) const {
  viewOf(layout, numAxes, v);
}

int64_t SearchSpace::bytesWith(const int64_t *shards, int d1, int64_t p1,
                               int d2, int64_t p2) const {
  int64_t bytes = elementBytes;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t p = int(d) == d1 ? p1 : int(d) == d2 ? p2 : shards[d];
    bytes *= dist::mixed_radix::blockSize(shape[d], p);
  }
  return bytes;
}

int64_t SearchSpace::bytesOf(const PackedLayout &layout) const {
  DimView v;
  view(layout, v);
  int64_t shards[kMaxSearchRank];
  shardCounts(v, shards);
  return bytesWith(shards, -1, 0, -1, 0);
}

double SearchSpace::priceMiss(PriceSlot &slot, MoveKind kind,
                              const uint8_t *axes, unsigned count,
                              uint64_t axisBits, int64_t bytes) const {
  unsigned list[kMaxMeshAxes];
  for (unsigned i = 0; i < count; ++i)
    list[i] = axes[i];
  double price =
      model.collectiveCost(kind, llvm::ArrayRef<unsigned>(list, count), bytes);
  slot = {axisBits, bytes, uint8_t(kind), uint8_t(count), price};
  return price;
}

bool SearchSpace::runMayEnd(const SearchState &state) const {
  if (!state.run.open)
    return true;
  DimView v;
  view(state.layout, v);
  unsigned d = state.run.dim;
  int64_t outer = 1, inner = 1;
  for (unsigned i = 0; i < v.len[d]; ++i)
    (i < state.run.startLen ? outer : inner) *= axisSize[v.axes[d][i]];
  if (!blocksNest(shape[d], outer, inner))
    return false;
  if (!maxPeak)
    return true;
  int64_t shards[kMaxSearchRank];
  shardCounts(v, shards);
  int64_t before = bytesWith(shards, d, outer, -1, 0);
  int64_t after = bytesWith(shards, -1, 0, -1, 0);
  return peakOk(before, after);
}

std::vector<int64_t>
SearchSpace::permuteClassKey(const PackedLayout &layout) const {
  DimView v;
  view(layout, v);
  std::vector<int64_t> key;
  key.reserve(rank + 2);
  for (unsigned d = 0; d < rank; ++d) {
    int64_t shards = 1;
    for (unsigned i = 0; i < v.len[d]; ++i)
      shards *= axisSize[v.axes[d][i]];
    key.push_back(shards);
  }
  key.push_back(v.partialMask);
  key.push_back(layout.kind);
  return key;
}
