//===- PatternDatabaseHeuristic.h - abstracted exact distances --*- C++ -*-===//
//
// A second admissible heuristic for the optimal search, in the style of a
// pattern database: every layout is mapped to an *abstract state* that
// keeps, per mesh axis, only whether it is replicated, partial, or splits
// dim d (the order of the axes inside a dim is dropped), plus the partial
// kind. The abstract graph has an edge X -> Y for every kind of move that
// can map a layout of X onto a layout of Y, weighted by the least such a
// move can cost; the exact cheapest distance from every abstract state to
// the target's is then computed once, by a backward Dijkstra.
//
// Why it never overestimates. Map any plan L = L0 -> L1 -> ... -> T to the
// abstract states a(L0), a(L1), ..., a(T). Each step either keeps the
// abstract state (a self-loop, cost >= 0 dropped) or is one of the edges
// below, whose weight is at most the step's cost:
//  - The per-dim shard counts P_d are products over the axes splitting d,
//    so they (and hence the padded local bytes, elementBytes * prod_d
//    ceil(N_d / P_d)) are a function of the abstract state: the bytes a
//    step is priced with are known exactly.
//  - all_gather, all_to_all, reduce_scatter and all_reduce over a group S
//    are priced with collectiveCost(kind, S, bytes) on that exact byte
//    count. The concrete step lists S in some order; the abstract edge is
//    used only when the model says the order does not matter
//    (CostModel::groupCostIgnoresAxisOrder), so the prices are equal.
//    Abstract edges exist for every subset S (of one dim's axes, of the
//    partial axes), a superset of what is legal (minor-most suffixes,
//    nesting, peak limits are ignored): more edges only lower distances.
//  - all_slice and replicate_to_partial are free, and so are their
//    abstract edges (replicate_to_partial one axis at a time: a multi-axis
//    step is a chain of them, allowed by the same rules as the search's
//    generator; kinds are the source's and the target's, the only ones a
//    search creates).
//  - A permute keeps the shard counts and the partial axes, so it maps
//    into the class of abstract states with the same counts, partial axes
//    and kind. Between two different abstract states some axis changes
//    place; when every axis has size > 1 that changes a coordinate, and a
//    coordinate-changing permute costs at least minLatency +
//    minSecondsPerByte * bytes (the CostModel contract). With size-1 axes
//    the abstract change may be one of those only, so the edge is free.
// So the abstract path is no dearer than the plan, and the abstract
// distance (the cheapest abstract path) is a lower bound on every plan.
// It is also consistent on the abstraction (a shortest-path distance), and
// the maximum of two admissible bounds is admissible; the search reopens
// states whose cost improves, so switching to the larger bound in the
// middle of a search keeps it exact.
//
// The permutes out of a state reach only its class, so the least distance
// over the class also bounds every permute child (permuteFloor); the class
// contains the state itself, so that is at most the state's own bound.
//
// Blocks must nest for gathers, all_to_alls, reduce_scatters and slice
// runs (blocksNest on the shard counts before and after, which the
// abstract state knows), and every step must fit the peak limit (bytes
// before + after, known too): abstract edges are only created where these
// hold, which keeps them a superset of the concrete steps. A slice *run*
// is one abstract edge (any group of axes onto a dim, nesting checked on
// the whole group, as the search checks the run when it ends); a search
// state inside an open run gets no abstract bound, since its layout's
// distance assumes the run ended there.
//
// Relevance. A search from the source only meets states whose partial
// axes are partial in the source (with its kind) or may be made partial by
// the replicate_to_partials it generates (target-partial axes with the
// target's kind, size-1 axes while something is partial); every move
// shrinks that set or adds to it by those rules, so paths from such states
// stay among them, and only they are searched (the abstract
// replicate_to_partial edges follow the same rules). The bound is 0 for
// any other state.
//
// Symmetry: axes of equal size that the model cannot tell apart
// (axesInterchangeable) and that the target treats alike (the same code)
// can be swapped in any abstract path without changing its cost or its
// end, so states that differ by such swaps have equal distances; only one
// canonical state per orbit (codes sorted within each class of such axes)
// is searched.
//
// Size. The table has (2 + rank)^axes * (1 + kinds) entries (15625 * 3 for
// six axes and three dims). It is filled lazily: the backward Dijkstra
// stops once the source is settled; every state not settled by then is at
// least `frontier` (the queue's least key) away, and that is what the
// bound says for it. Even so, it costs milliseconds, so the search builds
// it only once a request has proved hard, and drops it when it is no
// better than the closed form at the source (see OptimalSearch.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_PLANNER_SEARCH_PATTERNDATABASEHEURISTIC_H
#define DIST_LIB_PLANNER_SEARCH_PATTERNDATABASEHEURISTIC_H

#include "Search/SearchSpace.h"

#include <algorithm>
#include <vector>

namespace dist::planner::detail {

class AbstractBound {
public:
  /// Whether the table is worth and safe to build for this request: the
  /// model prices groups regardless of axis order, and the table has at
  /// most kMaxEntries entries.
  static bool applicable(const Mesh &mesh, unsigned rank,
                         const CostModel &model);
  static constexpr size_t kMaxEntries = size_t(1) << 18;

  AbstractBound(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
                int64_t elementBytes, const CostModel &model,
                const PackedLayout &source, const PackedLayout &target,
                std::optional<int64_t> maxPeakBytes);

  /// The abstract distance of `layout` to the target (infinity: the target
  /// cannot be reached from it at all). Meant for layouts a search from
  /// `source` can meet; 0 for those with partial axes it cannot create.
  double operator()(const PackedLayout &layout) const {
    size_t i = indexOf(layout);
    return i == kNone ? 0 : std::min(dist[i], frontier);
  }
  /// The least abstract distance over the layouts a permute of `layout`
  /// can reach (its class).
  double permuteFloor(const PackedLayout &layout) const {
    size_t i = indexOf(layout);
    return i == kNone ? 0 : std::min(classFloor[i], frontier);
  }

private:
  /// Runs the backward Dijkstra until the source is settled.
  void settle();

  static constexpr size_t kNone = ~size_t(0);
  size_t indexOf(const PackedLayout &layout) const;
  void build(const PackedLayout &source, const PackedLayout &target);

  const CostModel &model;
  std::optional<int64_t> maxPeak;
  unsigned numAxes, rank, base;
  int64_t axisSize[kMaxMeshAxes];
  size_t power[kMaxMeshAxes + 1]; // base^a
  /// Non-zero partial kinds that occur (the source's, the target's); a
  /// state's kind index is 0 (nothing partial) or 1 + position here.
  uint8_t kinds[2];
  unsigned numKinds = 0;
  unsigned targetKindIndex = 0;
  uint8_t sourcePartialMask = 0, targetPartialMask = 0, sizeOneMask = 0;
  /// Per kind index: the axes that may be partial in states the search
  /// can meet (see build).
  uint8_t allowedPartial[3] = {0, 0, 0};
  bool sizeOneAxes = false;
  double permuteLatency = 0, permutePerByte = 0;
  std::vector<int64_t> shape;
  int64_t elementBytes;
  /// Padded bytes per axis-code part of the index.
  std::vector<int64_t> bytesOfCodes;
  /// The partial axes per axis-code part.
  std::vector<uint8_t> partialOfCodes;
  /// The canonical code part of each code part (see the symmetry below).
  std::vector<uint32_t> canon;
  std::vector<double> dist, classFloor;
  /// No state left out of `dist` is nearer than this.
  double frontier = 0;
  // The backward Dijkstra (see settle).
  using Item = std::pair<double, uint32_t>;
  std::vector<Item> queue; // a min-heap
  std::vector<uint8_t> classDone;
  size_t from = 0;                  // the source's index
  std::vector<long> maskPower;      // per axis mask: sum of base^a
  std::vector<int64_t> maskProduct; // per axis mask: product of sizes
  std::vector<uint8_t> nestMemo;
};

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_SEARCH_PATTERNDATABASEHEURISTIC_H
