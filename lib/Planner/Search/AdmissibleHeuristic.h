//===- AdmissibleHeuristic.h - admissible cost bound ------------*- C++ -*-===//
//
// A lower bound on the cost of any plan from a layout L to the target T, in
// two additive parts (every collective pays a latency term and a bandwidth
// term; see the CostModel contract). (Hard searches also use a second,
// table-based bound: PatternDatabaseHeuristic.h.)
//
// Latency. Count per axis the steps it must take part in: a collective
// over a group pays at least the sum of axisLatencyBound over the group, so
// distinct (axis, step) participations add up.
//  - Reductions. Partial axes that must still be reduced (R: all of L's
//    partial axes when the target's kind differs, else those the target
//    does not keep partial) can only be reduced by reduce_scatter or
//    all_reduce: one participation each. When the model says an
//    all_reduce pays its latency twice (allReducePaysLatencyTwice), an
//    axis of R that the target has in no dim pays a second one: after a
//    reduce_scatter it is in a dim it must leave again (a gather or
//    all_to_all that includes it, or a permute).
//  - Shedding. A dim with more shards than the target wants (P_d(L) >
//    P_d(T)) must lose that factor through all_gather or all_to_all steps
//    (slices only add shards, permutes keep the counts), and a step
//    removing a factor q pays at least kappa * log2(q), kappa = min_a
//    axisLatencyBound(a) / log2(size(a)).
//  - Misplaced axes. An axis past the common prefix of its dim's list with
//    the target's (size-1 axes skipped) must leave its place, in a gather
//    or all_to_all that includes it, or in a permute. So must prefix axes
//    whose blocks cannot nest into the target's: gathers, all_to_alls,
//    reduce_scatters and slices all require blocksNest(N, outer, q) with
//    `outer` the smaller of the two shard counts, and for outer > 1 (and
//    N > 1) that says ceil(N / outer) * outer == ceil(N / (outer q)) *
//    outer q -- the "nesting class" ceil(N / P) * P of the dim is the same
//    before and after. If the plan never lets the dim's list shrink below
//    length m, every later count is a multiple of P_m > 1, so P_m must be
//    in the target's class; hence only the longest prefix in the target's
//    class (or the empty one) can stay, and the axes after it must leave.
//    (An open slice run is one step from its start: its axes can stay if
//    the start is in the class.)
//  Without a permute the latency is at least reductions + second
//  participations + max(shedding, misplaced). A coordinate-changing permute
//  costs at least minLatency and may relabel everything, so with one it is
//  at least reductions + minLatency + shedding. The bound is the smaller.
//  Gathers and reductions are distinct participations, so the terms add.
//  When none applies but data must move, one collective still costs
//  minLatency.
//
// Jumps (operator() only). By the nesting argument, a dim whose count must
// change nesting class (with a permute: its count is 1 or not in the
// target's class; without one: no non-empty prefix can stay) must go down
// to one shard and later take, in a single step, a group whose product q
// is in the target's class (q >= jumpQ, the least such product of axis
// sizes). That step appends to one dim, so it is distinct per dim: either
// a collective (all_to_all or reduce_scatter), which pays at least
// groupLatencyExcess(group) >= jumpExcess (the least over such groups) on
// top of the participations counted above, or a slice, whose group must be
// replicated just before: a device then holds a block of at least
// total * q / devices elements, of which it holds at most its current
// block now, so it must receive the difference. Per dim the plan takes one
// of the two; the bound takes the cheapest choice.
//
// Bandwidth. Every byte a device does not hold must reach it, at
// minSecondsPerByte or more (every element of its target block, if some
// partial axis must still be reduced, since the device cannot compute the
// reduced value alone). Partial axes are ignored here, i.e. treated as
// replicated in both layouts:
//  - a target-partial axis that is not partial (with the target's kind) in
//    L can only become partial through replicate_to_partial, which is free;
//    dropping the last such step from any plan leaves a valid plan of equal
//    cost to the target with that axis replicated;
//  - an axis partial (with the target's kind) in both L and T is either
//    never reduced -- then the plan stays valid, at equal cost, with the
//    axis replicated throughout -- or reduced at some point, and then the
//    bound with it in R (every target element needed) is larger still.
// When some axes must still be reduced, a second count applies: each
// element has Q distinct contributions (Q = product of their sizes) and
// must end on k devices (the target's replication); that takes at least
// Q + k - 2 one-way transfers of it, and a step costs at least its busiest
// receiver, hence at least the average over all devices. This is exactly
// the ring reduce_scatter and all_reduce bandwidth terms.
// Blocks are measured on the ideal, unpadded tensor (block s of P is
// [s N / P, (s + 1) N / P)): the formulas of semantics §3 price the padded
// buffer, never less than the ideal data a step delivers, so the bound holds
// for uneven extents too.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_PLANNER_SEARCH_ADMISSIBLEHEURISTIC_H
#define DIST_LIB_PLANNER_SEARCH_ADMISSIBLEHEURISTIC_H

#include "Search/SearchSpace.h"

#include <array>

namespace dist::planner::detail {

class LowerBound {
public:
  LowerBound(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
             int64_t elementBytes, const CostModel &model,
             const PackedLayout &target);

  struct Latency {
    /// The latency part of the bound: cheap (no device enumeration).
    double full = 0;
    /// Without the misplaced-axes term: the same for every layout with L's
    /// shard counts and partial axes (so it bounds every permute out of L).
    double classOnly = 0;
    /// A bandwidth bound (seconds) that holds for every layout with L's
    /// per-dim shard counts and partial axes: its needed elements are at
    /// least the target block minus the largest possible overlap.
    double classBandwidth = 0;
  };
  /// `run`: the state's open slice run, if any (see SearchState).
  Latency latencies(const PackedLayout &layout,
                    const SliceRun &run = SliceRun()) const;
  double latency(const PackedLayout &layout,
                 const SliceRun &run = SliceRun()) const {
    return latencies(layout, run).full;
  }
  /// The whole bound; never below latency(layout, run).
  double operator()(const PackedLayout &layout,
                    const SliceRun &run = SliceRun()) const;

private:
  /// Elements (on the ideal tensor) some device must receive.
  double neededElements(const DimView &v, uint8_t mustReduce) const;
  uint8_t mustReduce(const PackedLayout &layout, const DimView &v) const;
  /// The latency terms by plan shape, and the dims that must jump (see
  /// the header), for operator().
  struct Parts {
    double withoutPermute = 0, withPermute = 0;
    uint32_t jumpWithoutPermute = 0, jumpWithPermute = 0;
  };
  Latency latencyOf(const DimView &v, uint8_t mustReduce, const SliceRun &run,
                    Parts *parts = nullptr) const;
  double classNeededElements(const DimView &v, uint8_t mustReduce) const;
  /// Elements some device must receive when `reduce` is not empty.
  double reducedElements(uint8_t reduce) const { return reducedTable[reduce]; }

  unsigned numAxes;
  int64_t numDevices;
  unsigned rank;
  int64_t axisSize[kMaxMeshAxes];
  double axisLog2[kMaxMeshAxes];
  double axisLatency[kMaxMeshAxes];
  double kappa = 0;
  std::vector<int64_t> shape;
  int64_t elementBytes;
  double minLatency, minSecondsPerByte;
  PackedLayout target;
  DimView targetView;
  double targetLog2Shards[kMaxSearchRank];
  /// ceil(N_d / P_d(T)) * P_d(T): what padded blocks span along dim d.
  int64_t targetSpan[kMaxSearchRank];
  int64_t targetCount[kMaxSearchRank]; // P_d(T)
  /// Elements of a target block on the ideal tensor: prod_d N_d / P_d(T).
  double targetBlockElements = 1;
  /// The dim each axis splits in the target, -1 if none.
  int targetDimOf[kMaxMeshAxes];
  /// Per dim, the target's axes of size > 1 splitting it (a bit per axis),
  /// and the same in order.
  uint32_t targetSplitters[kMaxSearchRank];
  uint8_t targetBig[kMaxSearchRank][kMaxMeshAxes];
  uint8_t targetBigLen[kMaxSearchRank];
  /// Per dim, bit p: a common prefix of p such axes with the target's list
  /// ends on blocks in the target's nesting class (latencyOf).
  uint32_t prefixNests[kMaxSearchRank];
  bool allReduceTwice = false;
  /// Per dim: the smallest group product a jump can land on (0: no jump
  /// analysis), and the least groupLatencyExcess of such a group.
  int64_t jumpQ[kMaxSearchRank];
  double jumpExcess[kMaxSearchRank];
  bool anyJump = false;
  uint8_t targetPartialAll = 0;
  /// Axes of size > 1 (only they can need reducing).
  uint8_t bigAxes = 0;
  /// Per set of axes to reduce: reducedElements, and the latency its
  /// reductions pay at least (reduce) and a second time (leave); see
  /// latencyOf. Functions of the set alone, so tabulated once.
  std::array<double, 1u << kMaxMeshAxes> reducedTable, reduceLatency,
      leaveLatency;
};

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_SEARCH_ADMISSIBLEHEURISTIC_H
