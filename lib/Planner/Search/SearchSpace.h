//===- SearchSpace.h - Packed layouts and move generation -------*- C++ -*-===//
//
// The searches visit thousands of layouts per request, so they work on a
// packed form (one byte per mesh axis) instead of `Layout`, and generate the
// moves of semantics §3 directly on it. Every plan they return is replayed
// through the public applyMove, so this file can only make the search slower or
// incomplete, never make a plan wrong.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_PLANNER_SEARCH_SEARCHSPACE_H
#define DIST_LIB_PLANNER_SEARCH_SEARCHSPACE_H

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"
#include "dist/Planner/Move.h"
#include "dist/Support/MixedRadix.h"

#include "llvm/ADT/ArrayRef.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

namespace dist::planner::detail {

/// A slot byte per mesh axis: replicated, partial, or (dim << 3 | position).
constexpr uint8_t kReplicatedSlot = 0xFF;
constexpr uint8_t kPartialSlot = 0xFE;
/// Tensor ranks the packed form can hold (5 bits of dim, 3 of position).
constexpr unsigned kMaxSearchRank = 31;

inline uint8_t dimSlot(unsigned dim, unsigned pos) {
  return uint8_t(dim << 3 | pos);
}
inline bool isDimSlot(uint8_t slot) { return slot < kPartialSlot; }

/// Whether a replicated axis may join a partial group on uneven blocks (see
/// SearchSpace's replicate_to_partial steps): some dim's extent is not a
/// multiple of its shard count times the group's size (the axis times the
/// other partial axes). A larger group stays uneven.
inline bool joinsOnUnevenBlocks(llvm::ArrayRef<int64_t> shape,
                                const int64_t *shards, int64_t groupSize) {
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] % (shards[d] * groupSize) != 0)
      return true;
  return false;
}
inline unsigned slotDim(uint8_t slot) { return slot >> 3; }
inline unsigned slotPos(uint8_t slot) { return slot & 7; }

struct PackedLayout {
  std::array<uint8_t, kMaxMeshAxes> slot;
  /// The ReductionKind when some axis is partial, 0 otherwise, so that
  /// layouts equal under Layout::operator== pack identically.
  uint8_t kind = 0;

  PackedLayout() { slot.fill(kReplicatedSlot); }
  uint64_t slotBits() const {
    uint64_t bits;
    std::memcpy(&bits, slot.data(), sizeof(bits));
    return bits;
  }
  bool operator==(const PackedLayout &o) const {
    return slotBits() == o.slotBits() && kind == o.kind;
  }
  bool operator!=(const PackedLayout &o) const { return !(*this == o); }
};

PackedLayout packLayout(const Layout &layout);
Layout unpackLayout(const PackedLayout &packed, unsigned numAxes,
                    unsigned rank);
/// unpackLayout into `out`, reusing its vectors' memory (the search unpacks
/// a layout at most pops).
void unpackLayoutInto(const PackedLayout &packed, unsigned numAxes,
                      unsigned rank, Layout &out);

/// The per-dim axis lists of a packed layout, plus masks by axis index.
struct DimView {
  uint8_t len[kMaxSearchRank];
  uint8_t axes[kMaxSearchRank][kMaxMeshAxes];
  uint8_t partialMask = 0;
  uint8_t replicatedMask = 0;
};

/// A move in packed form; a permute's target is the edge's destination.
struct PackedMove {
  MoveKind kind = MoveKind::AllGather;
  uint8_t numAxes = 0;
  uint8_t axes[kMaxMeshAxes] = {};
  int8_t dim = -1, toDim = -1;
  uint8_t reduction = 0;
  /// all_slice only: extends the slice run the previous step started (same
  /// dim), so that the two become one multi-axis all_slice step.
  bool continuesRun = false;

  Move toMove(const Mesh &mesh, const Layout &src,
              const Layout &permuteTarget) const;
};

/// A multi-axis all_slice is a run of single-axis slices onto one dim that
/// counts as a single step. A search state records the open run (its dim
/// and how many axes the dim had when it started): the run's validity
/// (blocks nest, peak bytes) is checked as a whole when it ends, exactly as
/// for the one multi-axis step it stands for, and so is its price: the
/// slices inside a run are free, and the move that ends it (or reaching the
/// goal in it) pays the local copy of the run's result (semantics §3b,
/// SearchSpace::closeCost).
struct SliceRun {
  bool open = false;
  uint8_t dim = 0;
  uint8_t startLen = 0;
};

struct SearchState {
  PackedLayout layout;
  SliceRun run;
  /// With redistribute allowed: no redistribute may follow any more (one
  /// was taken, or a move that is neither a reduction nor a slice; see
  /// OptimalSearch.cpp). Always false for collective-only searches.
  bool pointToPointClosed = false;
};

struct StateKey {
  uint64_t slots;
  uint32_t extra;
  bool operator==(const StateKey &o) const {
    return slots == o.slots && extra == o.extra;
  }
};
inline StateKey keyOf(const SearchState &s) {
  uint32_t extra = s.layout.kind;
  if (s.run.open)
    extra |=
        1u << 8 | uint32_t(s.run.dim) << 9 | uint32_t(s.run.startLen) << 14;
  if (s.pointToPointClosed)
    extra |= 1u << 31;
  return {s.layout.slotBits(), extra};
}

/// Two all_gathers, or two reduce_scatters, on different dims whose blocks
/// change exactly by their group sizes commute at equal cost when the
/// model says so (CostModel::sameKindStepsCommute; in the ring model with
/// one beta, gathers cost (pq - 1) n beta either way and reduce-scatters
/// (1 - 1/(pq)) n beta), so the optimal search then generates such pairs
/// only in increasing dim order. An OrderMark records the last such move.
struct OrderMark {
  enum Kind : uint8_t { None, Gather, ReduceScatter };
  Kind kind = None;
  int8_t dim = -1;
  bool operator==(const OrderMark &o) const {
    return kind == o.kind && dim == o.dim;
  }
  /// The weaker of two marks (what both allow).
  static OrderMark meet(OrderMark a, OrderMark b) {
    if (a.kind != b.kind)
      return OrderMark();
    return {a.kind, std::min(a.dim, b.dim)};
  }
};

struct Edge {
  PackedMove move;
  SearchState next;
  double cost = 0;
  int64_t bytesAfter = 0;
  bool newStep = true;
  OrderMark order;
};

/// Fills `v` from a packed layout: the axes of each dim (every dim's length,
/// past the layout's rank too, is set) and the partial and replicated masks
/// (shared by the search and the lower bound).
void viewOf(const PackedLayout &layout, unsigned numAxes, DimView &v);

/// Everything about one request that move generation needs.
class SearchSpace {
public:
  SearchSpace(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
              int64_t elementBytes, const CostModel &model,
              std::optional<int64_t> maxPeakBytes, const PackedLayout &target);

  unsigned getNumAxes() const { return numAxes; }
  unsigned getRank() const { return rank; }
  const Mesh &getMesh() const { return mesh; }
  const CostModel &getModel() const { return model; }

  void view(const PackedLayout &layout, DimView &v) const;
  /// Per dim of the tensor, how many shards `v`'s axes split it into.
  void shardCounts(const DimView &v, int64_t *shards) const {
    for (unsigned d = 0; d < rank; ++d) {
      shards[d] = 1;
      for (unsigned i = 0; i < v.len[d]; ++i)
        shards[d] *= axisSize[v.axes[d][i]];
    }
  }
  int64_t bytesOf(const PackedLayout &layout) const;
  /// Whether the state's open slice run (if any) may end here: its blocks
  /// nest and bytes-at-start + bytes-now fit the peak limit.
  bool runMayEnd(const SearchState &state) const;
  bool isGoal(const SearchState &state) const {
    return state.layout == target && runMayEnd(state);
  }
  /// Generate replicate_to_partial of the target's partial axes only as
  /// the step that completes the target, or riding along another
  /// replicate_to_partial of their kind (one step fewer at the same cost).
  /// Exact without a peak limit and without size-1 axes: the step is free,
  /// and nothing before it needs the axis partial rather than replicated
  /// (see docs/planner.md), so it can always be postponed to the end. (A size-1
  /// axis made partial early can ride along a reduce_scatter and save a step,
  /// so meshes with size-1 axes keep every position.) With priced local copies
  /// the argument needs a slice to cost no more than sending its bytes
  /// (CostModel::localCopiesNeverDearerThanSending).
  void setFinalReplicateToPartialOnly(bool value) {
    finalReplicateToPartialOnly = value && !sizeOneMask && slicesNoDearer;
  }
  /// What ending the state's open slice run costs: its result's local copy
  /// (semantics §3b); 0 without a run. `bytes`: the state's buffer.
  double closeCost(const SearchState &state, int64_t bytes) const {
    return state.run.open ? localBeta * double(bytes) : 0.0;
  }

  /// Identifies the layouts a permute can reach from `layout` (and from
  /// each other): per-dim shard counts, partial axes and kind.
  std::vector<int64_t> permuteClassKey(const PackedLayout &layout) const;
  /// Whether every dim before `d` has local extent 1 (a split of `d` then
  /// leaves its chunks back to back in the buffer).
  bool chunkMajorBefore(const int64_t *shards, unsigned d) const {
    for (unsigned j = 0; j < d; ++j)
      if (dist::mixed_radix::blockSize(shape[j], shards[j]) != 1)
        return false;
    return true;
  }
  /// The bytes an all_to_all over a group of q devices from dim `d` (to
  /// `outer` shards) to dim `e` copies locally (semantics §3b, as
  /// localStepBytes): the chunk it keeps, plus, unless both dims split
  /// evenly, the packed chunks and the unpacked result where they are not
  /// already back to back. `after`: the result's bytes.
  int64_t allToAllLocalBytes(const int64_t *shards, unsigned d, unsigned e,
                             int64_t q, int64_t outer, int64_t after) const {
    if (q == 1)
      return 0;
    using dist::mixed_radix::blockSize;
    const int64_t chunkBytes = bytesWith(shards, e, shards[e] * q, -1, 0);
    const bool evenTo = q * blockSize(shape[e], shards[e] * q) ==
                        blockSize(shape[e], shards[e]);
    const bool evenFrom =
        q * blockSize(shape[d], shards[d]) == blockSize(shape[d], outer);
    if (evenTo && evenFrom)
      return chunkBytes;
    // A chunk is the input with dim e at the result's extent.
    int64_t chunkShards[kMaxSearchRank];
    std::copy(shards, shards + rank, chunkShards);
    chunkShards[e] *= q;
    int64_t bytes = chunkBytes;
    if (!(evenTo && chunkMajorBefore(chunkShards, e)))
      bytes += q * chunkBytes;
    if (!(evenFrom && chunkMajorBefore(chunkShards, d)))
      bytes += after;
    return bytes;
  }
  bool peakOk(int64_t before, int64_t after) const {
    return !maxPeak || before + after <= *maxPeak;
  }

  /// Calls `emit(const Edge &)` for every move out of `state` that the
  /// searches consider (see docs/planner.md for the exact set). With
  /// `sliceRuns` false, slices are single-axis steps checked on their own
  /// (the greedy search's view: one move at a time).
  /// `after` (see OrderMark) leaves out the exact gathers or
  /// reduce-scatters on dims below its dim.
  template <typename Emit>
  void forEachEdge(const SearchState &state, int64_t bytes, bool sliceRuns,
                   bool permutes, OrderMark after, Emit &&emit) const;
  /// Only the permutes (the optimal search generates them lazily).
  /// `lowerTwins` (optional): per axis, the axes below it that the caller
  /// treats as the same (its symmetry). Of the targets that differ only by
  /// swapping such axes (when none of them is partial) only the first in
  /// enumeration order is emitted: the one that places the lowest of them
  /// first. That loses nothing when every permute costs the same and the
  /// caller identifies those targets anyway (where the first is the current
  /// layout itself, none is emitted: the set only leads back here).
  template <typename Emit>
  void forEachPermuteEdge(const SearchState &state, int64_t bytes,
                          const uint8_t *lowerTwins, Emit &&emit) const;

private:
  /// What the moves out of one state share while forEachEdge generates
  /// them, one kind of move per method below.
  struct Expansion {
    Expansion(const SearchSpace &space, const SearchState &state, int64_t bytes,
              OrderMark after);
    /// Resets `edge` to a move of `kind` from the current layout.
    void start(MoveKind kind);
    const SearchState &state;
    const PackedLayout &cur;
    const int64_t bytes;
    /// See OrderMark.
    const OrderMark after;
    DimView v;
    int64_t shards[kMaxSearchRank];
    /// The partial axes and the product of their sizes.
    uint8_t partial[kMaxMeshAxes];
    unsigned numPartial = 0;
    int64_t partialProduct = 1;
    /// What ending the open slice run costs (every move but a slice that
    /// extends it ends it first).
    double ending = 0;
    Edge edge;
  };
  template <typename Emit>
  void emitSlices(Expansion &x, bool sliceRuns, Emit &emit) const;
  template <typename Emit> void emitGathers(Expansion &x, Emit &emit) const;
  template <typename Emit> void emitAllToAlls(Expansion &x, Emit &emit) const;
  template <typename Emit>
  void emitReduceScatters(Expansion &x, Emit &emit) const;
  template <typename Emit> void emitAllReduces(Expansion &x, Emit &emit) const;
  template <typename Emit>
  void emitReplicateToPartials(Expansion &x, Emit &emit) const;
  template <typename Emit>
  void emitReplicateToPartialSets(Expansion &x, uint8_t axesMask,
                                  bool wholeSetOnly, uint8_t reduction,
                                  uint8_t riders, Emit &emit) const;

  int64_t bytesWith(const int64_t *shards, int d1, int64_t p1, int d2,
                    int64_t p2) const;
  /// model.collectiveCost, through priceCache (inline: every candidate
  /// step asks, and most answers are cached).
  double price(MoveKind kind, const uint8_t *axes, unsigned count,
               int64_t bytes) const {
    uint64_t axisBits = 0;
    for (unsigned i = 0; i < count; ++i)
      axisBits |= uint64_t(axes[i]) << (8 * i);
    uint64_t mix = (axisBits ^ uint64_t(bytes) * 0x9E3779B97F4A7C15ull ^
                    (uint64_t(kind) << 8 | count)) *
                   0xC2B2AE3D27D4EB4Full;
    PriceSlot &slot = priceCache[mix >> 58];
    if (slot.bytes == bytes && slot.axes == axisBits &&
        slot.kind == uint8_t(kind) && slot.count == count)
      return slot.price;
    return priceMiss(slot, kind, axes, count, axisBits, bytes);
  }
  template <typename Emit>
  void forEachPermute(const SearchState &state, const DimView &v,
                      const int64_t *shards, int64_t bytes,
                      const uint8_t *lowerTwins, Emit &&emit) const;

  const Mesh &mesh;
  const CostModel &model;
  unsigned numAxes, rank;
  int64_t axisSize[kMaxMeshAxes];
  std::vector<int64_t> shape;
  int64_t elementBytes;
  std::optional<int64_t> maxPeak;
  PackedLayout target;
  DimView targetView;
  uint8_t targetPartialMask = 0;
  uint8_t sizeOneMask = 0; // axes of size 1
  bool pruneReduceScatterGroups;
  bool finalReplicateToPartialOnly = false;
  /// semantics §3b: seconds per byte copied locally, and whether a slice's
  /// copy never costs more than sending the bytes would.
  double localBeta;
  bool slicesNoDearer;
  /// Every permute that changes some coordinate of a buffer costs the same
  /// (the model says so): forEachPermute prices one and reuses the price.
  bool uniformPermutePrice;
  /// price()'s recent answers, direct-mapped: move generation asks the
  /// model about the same (kind, axes, bytes) again and again, and its
  /// answer is a function of them.
  struct PriceSlot {
    uint64_t axes = 0;
    int64_t bytes = -1; // no answer yet
    uint8_t kind = 0, count = 0;
    double price = 0;
  };
  mutable std::array<PriceSlot, 64> priceCache;
  double priceMiss(PriceSlot &slot, MoveKind kind, const uint8_t *axes,
                   unsigned count, uint64_t axisBits, int64_t bytes) const;
};

//===----------------------------------------------------------------------===//
// Move generation
//===----------------------------------------------------------------------===//

template <typename Emit>
void SearchSpace::forEachEdge(const SearchState &state, int64_t bytes,
                              bool sliceRuns, bool permutes, OrderMark after,
                              Emit &&emit) const {
  Expansion x(*this, state, bytes, after);
  emitSlices(x, sliceRuns, emit);
  // Every other move first ends the open run, which must be valid, and
  // pays for it.
  if (!runMayEnd(state))
    return;
  x.ending = closeCost(state, bytes);
  emitGathers(x, emit);
  emitAllToAlls(x, emit);
  emitReduceScatters(x, emit);
  emitAllReduces(x, emit);
  emitReplicateToPartials(x, emit);
  if (permutes && peakOk(bytes, bytes))
    forEachPermute(state, x.v, x.shards, bytes, /*lowerTwins=*/nullptr, emit);
}

inline SearchSpace::Expansion::Expansion(const SearchSpace &space,
                                         const SearchState &state,
                                         int64_t bytes, OrderMark after)
    : state(state), cur(state.layout), bytes(bytes), after(after) {
  space.view(cur, v);
  space.shardCounts(v, shards);
  for (unsigned a = 0; a < space.numAxes; ++a)
    if (v.partialMask >> a & 1) {
      partial[numPartial++] = a;
      partialProduct *= space.axisSize[a];
    }
}

inline void SearchSpace::Expansion::start(MoveKind kind) {
  edge.move = PackedMove();
  edge.move.kind = kind;
  edge.next.layout = cur;
  edge.next.run = SliceRun();
  edge.newStep = true;
  edge.order = OrderMark();
}

/// all_slice: append one replicated axis. In run mode the step either opens
/// a run or extends the open one on the same dim (no new step).
template <typename Emit>
void SearchSpace::emitSlices(Expansion &x, bool sliceRuns, Emit &emit) const {
  const SearchState &state = x.state;
  const DimView &v = x.v;
  Edge &edge = x.edge;
  const bool runEnds = runMayEnd(state);
  for (unsigned a = 0; a < numAxes; ++a) {
    if (!(v.replicatedMask >> a & 1))
      continue;
    for (unsigned d = 0; d < rank; ++d) {
      bool extend = sliceRuns && state.run.open && state.run.dim == d;
      if (!extend && !runEnds)
        continue;
      // Two slice runs in a row onto different dims commute (both free,
      // each dim's blocks nest on their own), so only the order by
      // increasing dim is generated. A peak limit, or priced local copies
      // (the first run's result differs), can tell the orders apart, so
      // then both are.
      if (sliceRuns && state.run.open && d < state.run.dim && !maxPeak &&
          localBeta == 0)
        continue;
      if (v.len[d] >= kMaxMeshAxes)
        continue;
      int64_t after = bytesWith(x.shards, d, x.shards[d] * axisSize[a], -1, 0);
      if (!sliceRuns && (!blocksNest(shape[d], x.shards[d], axisSize[a]) ||
                         !peakOk(x.bytes, after)))
        continue;
      edge.move = PackedMove();
      edge.move.kind = MoveKind::AllSlice;
      edge.move.numAxes = 1;
      edge.move.axes[0] = a;
      edge.move.dim = d;
      edge.move.continuesRun = extend;
      edge.next.layout = x.cur;
      edge.next.layout.slot[a] = dimSlot(d, v.len[d]);
      edge.next.run = SliceRun();
      if (sliceRuns) {
        edge.next.run.open = true;
        edge.next.run.dim = d;
        edge.next.run.startLen = extend ? state.run.startLen : v.len[d];
        // With no replicated axis left the run cannot grow: it ends here
        // (the same state as without the run: same moves, and no slice
        // that could join it) or, if it cannot end, leads nowhere.
        if (v.replicatedMask == (1u << a)) {
          if (!runMayEnd(edge.next))
            continue;
          edge.next.run = SliceRun();
        }
      }
      // A slice outside a run, or one that ends its run, pays for its
      // result; one that opens a new run ends the open one first.
      edge.cost = (extend ? 0.0 : closeCost(state, x.bytes)) +
                  (edge.next.run.open ? 0.0 : localBeta * double(after));
      edge.bytesAfter = after;
      edge.newStep = !extend;
      edge.order = OrderMark();
      emit(edge);
    }
  }
}

/// all_gather: any minor-most suffix of a dim.
template <typename Emit>
void SearchSpace::emitGathers(Expansion &x, Emit &emit) const {
  const DimView &v = x.v;
  Edge &edge = x.edge;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t q = 1;
    for (unsigned k = 1; k <= v.len[d]; ++k) {
      unsigned first = v.len[d] - k;
      q *= axisSize[v.axes[d][first]];
      int64_t outer = x.shards[d] / q;
      if (!blocksNest(shape[d], outer, q))
        continue;
      int64_t outerBlock = dist::mixed_radix::blockSize(shape[d], outer);
      bool exact = outerBlock == q * ((shape[d] + outer * q - 1) / (outer * q));
      if (exact && x.after.kind == OrderMark::Gather && int(d) < x.after.dim)
        continue;
      int64_t after = bytesWith(x.shards, d, outer, -1, 0);
      if (!peakOk(x.bytes, after))
        continue;
      x.start(MoveKind::AllGather);
      if (exact)
        edge.order = {OrderMark::Gather, int8_t(d)};
      edge.move.dim = d;
      edge.move.numAxes = k;
      for (unsigned i = 0; i < k; ++i) {
        uint8_t axis = v.axes[d][first + i];
        edge.move.axes[i] = axis;
        edge.next.layout.slot[axis] = kReplicatedSlot;
      }
      // Its own block copied into the result, and the result unpacked from
      // chunks where the blocks do not tile it exactly (semantics §3b).
      edge.cost = x.ending +
                  price(MoveKind::AllGather, edge.move.axes, k, x.bytes) +
                  (q > 1 ? localBeta * double(x.bytes) : 0.0) +
                  (exact ? 0.0 : localBeta * double(after));
      edge.bytesAfter = after;
      emit(edge);
    }
  }
}

/// all_to_all: any minor-most suffix of d, appended to another dim e.
template <typename Emit>
void SearchSpace::emitAllToAlls(Expansion &x, Emit &emit) const {
  const DimView &v = x.v;
  const int64_t *shards = x.shards;
  Edge &edge = x.edge;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t q = 1;
    for (unsigned k = 1; k <= v.len[d]; ++k) {
      unsigned first = v.len[d] - k;
      q *= axisSize[v.axes[d][first]];
      int64_t outer = shards[d] / q;
      if (!blocksNest(shape[d], outer, q))
        continue;
      for (unsigned e = 0; e < rank; ++e) {
        if (e == d || v.len[e] + k > kMaxMeshAxes ||
            !blocksNest(shape[e], shards[e], q))
          continue;
        int64_t after = bytesWith(shards, d, outer, e, shards[e] * q);
        if (!peakOk(x.bytes, after))
          continue;
        x.start(MoveKind::AllToAll);
        edge.move.dim = d;
        edge.move.toDim = e;
        edge.move.numAxes = k;
        for (unsigned i = 0; i < k; ++i) {
          uint8_t axis = v.axes[d][first + i];
          edge.move.axes[i] = axis;
          edge.next.layout.slot[axis] = dimSlot(e, v.len[e] + i);
        }
        edge.cost =
            x.ending + price(MoveKind::AllToAll, edge.move.axes, k, x.bytes);
        if (localBeta != 0)
          edge.cost += localBeta * double(allToAllLocalBytes(shards, d, e, q,
                                                             outer, after));
        edge.bytesAfter = after;
        emit(edge);
      }
    }
  }
}

/// reduce_scatter: ordered groups of partial axes appended to a dim. Groups
/// of two or more axes of size > 1 on a dim that divides evenly are skipped
/// when the model guarantees that the one-axis-at-a-time sequence (also
/// generated) is strictly cheaper and its first step fits the peak.
template <typename Emit>
void SearchSpace::emitReduceScatters(Expansion &x, Emit &emit) const {
  const DimView &v = x.v;
  const int64_t *shards = x.shards;
  const unsigned numPartial = x.numPartial;
  const int64_t bytes = x.bytes;
  Edge &edge = x.edge;
  for (unsigned d = 0; d < rank && numPartial; ++d) {
    bool even = shape[d] % (shards[d] * x.partialProduct) == 0;
    const int64_t outerBlock = (shape[d] + shards[d] - 1) / shards[d];
    uint8_t seq[kMaxMeshAxes];
    auto dfs = [&](auto &&self, unsigned depth, uint8_t used, int64_t q,
                   unsigned big) -> void {
      // Each axis appears once in a layout, so a dim never exceeds
      // kMaxMeshAxes entries; the check makes that visible to the compiler.
      if (depth >= kMaxMeshAxes || v.len[d] + depth >= kMaxMeshAxes)
        return;
      for (unsigned i = 0; i < numPartial; ++i) {
        uint8_t axis = x.partial[i];
        if (used >> i & 1)
          continue;
        seq[depth] = axis;
        int64_t q2 = q * axisSize[axis];
        unsigned big2 = big + (axisSize[axis] > 1);
        if (pruneReduceScatterGroups && big2 >= 2 && even &&
            peakOk(bytes, bytes / axisSize[seq[0]]))
          continue;
        bool exact = outerBlock ==
                     q2 * ((shape[d] + shards[d] * q2 - 1) / (shards[d] * q2));
        bool ordered = !(exact && x.after.kind == OrderMark::ReduceScatter &&
                         int(d) < x.after.dim);
        if (ordered && blocksNest(shape[d], shards[d], q2)) {
          int64_t bytesAfter = bytesWith(shards, d, shards[d] * q2, -1, 0);
          if (peakOk(bytes, bytesAfter)) {
            x.start(MoveKind::ReduceScatter);
            if (exact)
              edge.order = {OrderMark::ReduceScatter, int8_t(d)};
            edge.move.dim = d;
            edge.move.reduction = x.cur.kind;
            edge.move.numAxes = depth + 1;
            for (unsigned j = 0; j <= depth; ++j) {
              edge.move.axes[j] = seq[j];
              edge.next.layout.slot[seq[j]] = dimSlot(d, v.len[d] + j);
            }
            if (numPartial == depth + 1)
              edge.next.layout.kind = 0;
            edge.cost = x.ending + price(MoveKind::ReduceScatter,
                                         edge.move.axes, depth + 1, bytes);
            // Packing the input into one chunk per member (semantics §3b)
            // unless the chunks already lie back to back.
            if (localBeta != 0 && !(exact && chunkMajorBefore(shards, d)))
              edge.cost += localBeta * double(q2) * double(bytesAfter);
            edge.bytesAfter = bytesAfter;
            emit(edge);
          }
        }
        self(self, depth + 1, used | uint8_t(1u << i), q2, big2);
      }
    };
    dfs(dfs, 0, 0, 1, 0);
  }
}

/// all_reduce: any non-empty set of partial axes (order is irrelevant).
template <typename Emit>
void SearchSpace::emitAllReduces(Expansion &x, Emit &emit) const {
  if (!x.numPartial || !peakOk(x.bytes, x.bytes))
    return;
  Edge &edge = x.edge;
  for (unsigned mask = 1; mask < (1u << x.numPartial); ++mask) {
    x.start(MoveKind::AllReduce);
    edge.move.reduction = x.cur.kind;
    for (unsigned i = 0; i < x.numPartial; ++i)
      if (mask >> i & 1) {
        edge.move.axes[edge.move.numAxes++] = x.partial[i];
        edge.next.layout.slot[x.partial[i]] = kReplicatedSlot;
      }
    if (edge.move.numAxes == x.numPartial)
      edge.next.layout.kind = 0;
    edge.cost = x.ending + price(MoveKind::AllReduce, edge.move.axes,
                                 edge.move.numAxes, x.bytes);
    edge.bytesAfter = x.bytes;
    emit(edge);
  }
}

/// replicate_to_partial: axes the target wants partial, with the target's
/// kind. Making any other axis partial only to reduce it again is never
/// cheaper than slicing it (see docs/planner.md) -- except that a size-1
/// axis made partial (with the current kind) can join a multi-axis
/// reduce_scatter for free and save a slice step, so those are offered too
/// while some axis is partial.
template <typename Emit>
void SearchSpace::emitReplicateToPartials(Expansion &x, Emit &emit) const {
  const DimView &v = x.v;
  const unsigned numPartial = x.numPartial;
  const uint8_t r2pKind = numPartial ? x.cur.kind : target.kind;
  uint8_t candidates =
      r2pKind == target.kind ? v.replicatedMask & targetPartialMask : 0;
  if (numPartial)
    candidates |= v.replicatedMask & sizeOneMask;
  // Joiners: replicated axes (of size > 1, not offered above) made partial
  // to join a reduction, alone or together, at any point. On dims whose
  // blocks do not divide evenly a slice may not nest where a reduce_scatter
  // over a group does, which a sequential reduce_scatter and slice cannot
  // always match (found with per-kind parameters, semantics §3b): those
  // join the current partial axes. With slices dearer than sending their
  // bytes (semantics §3b), making any replicated axis partial and reducing
  // it again can beat slicing it: then every one is offered.
  uint8_t joiners = 0;
  if (!slicesNoDearer || numPartial) {
    for (unsigned a = 0; a < numAxes; ++a)
      if ((v.replicatedMask >> a & 1) && axisSize[a] > 1 &&
          !(candidates >> a & 1) &&
          (!slicesNoDearer ||
           joinsOnUnevenBlocks(shape, x.shards,
                               axisSize[a] * x.partialProduct)))
        joiners |= uint8_t(1u << a);
  }
  if (!finalReplicateToPartialOnly) {
    // Joiners and candidates may become partial in one step, and size-1
    // axes with them even while nothing is partial yet (a plan that makes
    // them partial in two steps has one more step at the same cost).
    const uint8_t riders =
        numPartial ? 0
                   : v.replicatedMask & sizeOneMask & ~(joiners | candidates);
    emitReplicateToPartialSets(x, joiners | candidates, /*wholeSetOnly=*/false,
                               r2pKind, riders, emit);
    return;
  }
  // The target's partial axes wait for the last step, but may ride along a
  // joiners' step of their kind: that saves the last step at the same cost
  // (ties go to fewer steps, semantics §3).
  emitReplicateToPartialSets(x, joiners, /*wholeSetOnly=*/false, r2pKind,
                             candidates, emit);
  if (candidates) {
    // Postponed to the last step: only the move that completes the target.
    PackedLayout done = x.cur;
    for (unsigned a = 0; a < numAxes; ++a)
      if (candidates >> a & 1)
        done.slot[a] = kPartialSlot;
    done.kind = target.kind;
    if (done != target || (numPartial && x.cur.kind != target.kind))
      candidates = 0;
  }
  emitReplicateToPartialSets(x, candidates, /*wholeSetOnly=*/true, r2pKind,
                             /*riders=*/0, emit);
}

/// One replicate_to_partial step per non-empty subset of `axesMask` (only
/// the whole set with `wholeSetOnly`), making them partial with
/// `reduction`; `riders` may join any subset that holds one of them.
template <typename Emit>
void SearchSpace::emitReplicateToPartialSets(Expansion &x, uint8_t axesMask,
                                             bool wholeSetOnly,
                                             uint8_t reduction, uint8_t riders,
                                             Emit &emit) const {
  if (!axesMask || !peakOk(x.bytes, x.bytes))
    return;
  Edge &edge = x.edge;
  uint8_t list[kMaxMeshAxes];
  unsigned count = 0, needed = 0;
  for (unsigned a = 0; a < numAxes; ++a)
    if ((axesMask | riders) >> a & 1) {
      if (axesMask >> a & 1)
        needed |= 1u << count;
      list[count++] = a;
    }
  unsigned first = wholeSetOnly ? (1u << count) - 1 : 1;
  for (unsigned mask = first; mask < (1u << count); ++mask) {
    if (!(mask & needed))
      continue;
    x.start(MoveKind::ReplicateToPartial);
    edge.move.reduction = reduction;
    for (unsigned i = 0; i < count; ++i)
      if (mask >> i & 1) {
        edge.move.axes[edge.move.numAxes++] = list[i];
        edge.next.layout.slot[list[i]] = kPartialSlot;
      }
    edge.next.layout.kind = reduction;
    edge.cost = x.ending;
    edge.bytesAfter = x.bytes;
    emit(edge);
  }
}

template <typename Emit>
void SearchSpace::forEachPermuteEdge(const SearchState &state, int64_t bytes,
                                     const uint8_t *lowerTwins,
                                     Emit &&emit) const {
  if (!runMayEnd(state) || !peakOk(bytes, bytes))
    return;
  DimView v;
  view(state.layout, v);
  int64_t shards[kMaxSearchRank];
  shardCounts(v, shards);
  forEachPermute(state, v, shards, bytes, lowerTwins, emit);
}

/// Permute: every layout with the same per-dim shard counts and the same
/// partial axes. Enumerated by filling dims in order with sequences of
/// non-partial axes whose sizes multiply to the dim's shard count.
template <typename Emit>
void SearchSpace::forEachPermute(const SearchState &state, const DimView &v,
                                 const int64_t *shards, int64_t bytes,
                                 const uint8_t *lowerTwins, Emit &&emit) const {
  const PackedLayout &cur = state.layout;
  // Stride of each axis in the current layout (for permuteAxes).
  int64_t curStride[kMaxMeshAxes];
  for (unsigned d = 0; d < rank; ++d) {
    int64_t stride = 1;
    for (unsigned i = v.len[d]; i-- > 0;) {
      curStride[v.axes[d][i]] = stride;
      stride *= axisSize[v.axes[d][i]];
    }
  }
  uint8_t freeMask = 0; // non-partial axes
  for (unsigned a = 0; a < numAxes; ++a)
    if (!(v.partialMask >> a & 1))
      freeMask |= 1u << a;
  // Per axis, its free twins below it: it is placed only after all of them
  // (the twins' first arrangement in the order below).
  uint8_t placeAfter[kMaxMeshAxes] = {};
  if (lowerTwins)
    for (unsigned a = 0; a < numAxes; ++a)
      placeAfter[a] = lowerTwins[a] & freeMask;

  // A permute ends the open slice run.
  const double ending = closeCost(state, bytes);
  Edge edge;
  edge.move = PackedMove();
  edge.move.kind = MoveKind::Permute;
  edge.next.run = SliceRun();
  edge.newStep = true;
  edge.bytesAfter = bytes;

  PackedLayout next = cur;
  for (unsigned a = 0; a < numAxes; ++a)
    if (freeMask >> a & 1)
      next.slot[a] = kReplicatedSlot;
  uint8_t dimList[kMaxSearchRank][kMaxMeshAxes];
  uint8_t dimLen[kMaxSearchRank];
  double uniformPrice = -1; // not yet priced

  auto finish = [&]() {
    if (next == cur)
      return;
    // permuteAxes: an axis of size > 1 that splits dim d now changes
    // coordinate unless it splits d at the same stride afterwards.
    uint8_t changed[kMaxMeshAxes];
    unsigned count = 0;
    for (unsigned a = 0; a < numAxes; ++a) {
      uint8_t s = cur.slot[a];
      if (!isDimSlot(s) || axisSize[a] == 1)
        continue;
      unsigned d = slotDim(s);
      uint8_t t = next.slot[a];
      bool kept = false;
      if (isDimSlot(t) && slotDim(t) == d) {
        int64_t stride = 1;
        for (unsigned i = dimLen[d]; i-- > slotPos(t) + 1;)
          stride *= axisSize[dimList[d][i]];
        kept = stride == curStride[a];
      }
      if (!kept)
        changed[count++] = a;
    }
    edge.move.numAxes = count;
    std::memcpy(edge.move.axes, changed, count);
    edge.next.layout = next;
    double move = 0;
    if (count && uniformPermutePrice) {
      if (uniformPrice < 0)
        uniformPrice = price(MoveKind::Permute, changed, count, bytes);
      move = uniformPrice;
    } else if (count) {
      move = price(MoveKind::Permute, changed, count, bytes);
    }
    edge.cost = ending + move;
    emit(edge);
  };

  // Fill dim d position by position with unused free axes dividing `rem`.
  auto fill = [&](auto &&self, unsigned d, int64_t rem, uint8_t used) -> void {
    if (d == rank) {
      finish();
      return;
    }
    if (rem == 1) {
      // The dim is complete; it may still take size-1 axes, which keep the
      // product but are a different layout.
      self(self, d + 1, d + 1 < rank ? shards[d + 1] : 1, used);
    }
    if (dimLen[d] >= kMaxMeshAxes)
      return;
    for (unsigned a = 0; a < numAxes; ++a) {
      if (!(freeMask >> a & 1) || (used >> a & 1) || rem % axisSize[a] ||
          (placeAfter[a] & ~used))
        continue;
      unsigned pos = dimLen[d]++;
      dimList[d][pos] = a;
      next.slot[a] = dimSlot(d, pos);
      self(self, d, rem / axisSize[a], used | uint8_t(1u << a));
      next.slot[a] = kReplicatedSlot;
      --dimLen[d];
    }
  };
  for (unsigned d = 0; d < rank; ++d)
    dimLen[d] = 0;
  if (rank == 0)
    return;
  fill(fill, 0, shards[0], 0);
}

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_SEARCH_SEARCHSPACE_H
