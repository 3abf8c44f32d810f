//===- LowerBound.h - Admissible cost bound (plan report and A*) -*- C++ -*-===//
//
// A lower bound on the cost of any plan from a layout L to the target T, in
// two additive parts (every collective pays a latency term and a bandwidth
// term; see the CostModel contract):
//
// Latency. Partial axes that must still be reduced (R: all of L's partial
// axes when the target's kind differs, else those the target does not keep
// partial) can only be reduced by reduce_scatter or all_reduce, and such a
// step over a group pays at least the sum of axisLatencyBound over it; so
// they cost at least sum_{a in R} axisLatencyBound(a). Independently, a dim
// that now has more shards than the target wants (P_d(L) > P_d(T)) must
// lose that factor through all_gather or all_to_all steps (slices only add
// shards, permutes keep the counts), and a step removing a factor q pays at
// least kappa * log2(q), kappa = min_a axisLatencyBound(a) / log2(size(a)).
// An axis past the common prefix of its dim's list with the target's (size-1
// axes skipped) must leave its place, in a gather or all_to_all that
// includes it, or in a permute (at least minLatency); so the gather term is
// min(max(kappa * excess, sum of their axisLatencyBound), minLatency +
// kappa * excess). Gathers and reductions are distinct steps, so the terms
// add. When none applies but data must move, one collective still costs
// minLatency.
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
// [s N / P, (s + 1) N / P)): the SPEC formulas price the padded buffer,
// never less than the ideal data a step delivers, so the bound holds for
// uneven extents too.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_PLANNER_LOWERBOUND_H
#define DIST_LIB_PLANNER_LOWERBOUND_H

#include "SearchSpace.h"

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
    /// The least that term can add for a layout of this class that has a
    /// misplaced axis.
    double misplacedFloor = 0;
  };
  Latency latencies(const PackedLayout &layout) const;
  double latency(const PackedLayout &layout) const {
    return latencies(layout).full;
  }
  /// The whole bound; never below latency(layout).
  double operator()(const PackedLayout &layout) const;

private:
  /// Elements (on the ideal tensor) some device must receive.
  double neededElements(const DimView &v, uint8_t mustReduce) const;
  uint8_t mustReduce(const PackedLayout &layout, const DimView &v) const;
  Latency latencyOf(const DimView &v, uint8_t mustReduce) const;

  unsigned numAxes;
  int64_t numDevices;
  unsigned rank;
  int64_t axisSize[kMaxMeshAxes];
  double axisLog2[kMaxMeshAxes];
  double axisLatency[kMaxMeshAxes];
  double kappa = 0;
  double minAxisLatency = 0; // over axes of size > 1
  std::vector<int64_t> shape;
  int64_t elementBytes;
  double minLatency, minSecondsPerByte;
  PackedLayout target;
  DimView targetView;
  double targetLog2Shards[kMaxSearchRank];
  uint8_t targetPartialAll = 0;
};

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_LOWERBOUND_H
