//===- LowerBound.h - Admissible cost bound (plan report and A*) -*- C++ -*-===//
//
// Every byte a device does not already hold must reach it, and every
// collective that delivers b bytes to a device costs at least
// minLatency + b * minSecondsPerByte (the CostModel contract). So
//
//   bound = minLatency + minSecondsPerByte * (bytes some device must receive)
//
// whenever anything must move, else 0. With partial values the "bytes a
// device must receive" are counted per target partial group G (devices that
// differ only on the target's partial axes; they share a block and may hold
// any split of its value): the group as a whole must receive every element
// of its target block that none of its members holds, or every element when
// some partial axis must still be reduced. A single device then receives at
// least that total divided by |G|.
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

  /// Admissible: no sequence of moves from `layout` to the target costs
  /// less.
  double operator()(const PackedLayout &layout) const;

private:
  unsigned numAxes, rank;
  int64_t axisSize[kMaxMeshAxes];
  std::vector<int64_t> shape;
  int64_t elementBytes;
  double minLatency, minSecondsPerByte;
  PackedLayout target;
  DimView targetView;
  uint8_t targetPartial = 0; // target partial axes of size > 1
  uint8_t targetPartialAll = 0;
  int64_t groupSize = 1; // devices per target partial group
};

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_LOWERBOUND_H
