//===- Tensors.cpp - placements of a program's tensors on the ranks -------===//

#include "Tensors.h"

#include "llvm/ADT/STLExtras.h"

namespace dist::run {

ShardPlacement placementOf(const TensorSignature &sig, int64_t rank) {
  ShardPlacement placement;
  placement.localShape = sig.localShape();
  placement.runs.resize(placement.localShape.size());
  std::vector<int64_t> coord = sig.mesh.coordinateOfRank(rank);
  if (coord.empty())
    return placement; // outside the mesh: holds nothing
  placement.holds = true;
  // Per dim, the global index of each local position (-1: padding), from
  // the planner's block semantics, compressed into runs of consecutive
  // global indices.
  for (unsigned d = 0; d < placement.localShape.size(); ++d) {
    int64_t shard = planner::shardIndex(sig.mesh, sig.layout, d, coord);
    std::vector<ShardPlacement::Run> &runs = placement.runs[d];
    for (int64_t i = 0; i < placement.localShape[d]; ++i) {
      int64_t global = planner::globalIndexAlong(sig.mesh, sig.layout,
                                                 sig.globalShape, d, shard, i);
      if (global < 0)
        continue;
      if (!runs.empty() && runs.back().local + runs.back().count == i &&
          runs.back().global + runs.back().count == global)
        ++runs.back().count;
      else
        runs.push_back({i, global, 1});
    }
  }
  // A partial value lives on the device with coordinate 0 on every partial
  // axis; the others hold the identity of the reduction, which for max, min
  // and avg is the value itself.
  bool holder = llvm::all_of(sig.layout.partialAxes,
                             [&](unsigned axis) { return coord[axis] == 0; });
  if (!holder && sig.layout.partialKind == planner::ReductionKind::Sum)
    placement.identity = 0;
  if (!holder && sig.layout.partialKind == planner::ReductionKind::Prod)
    placement.identity = 1;
  return placement;
}

TensorJob tensorJobOf(const TensorSignature &sig, int64_t numRanks) {
  TensorJob tensor;
  tensor.element = sig.element;
  tensor.globalShape = sig.globalShape;
  tensor.typeText = sig.typeText;
  for (int64_t rank = 0; rank < numRanks; ++rank)
    tensor.ranks.push_back(placementOf(sig, rank));
  return tensor;
}

void materializeArgument(const TensorSignature &sig, const InputSpec &input,
                         int64_t rank, void *buffer) {
  materializeShard(
      placementOf(sig, rank), sig.globalShape, sig.element,
      [&](int64_t index, void *dst) {
        storeGlobalElement(input, sig.element, index, dst);
      },
      buffer);
}

} // namespace dist::run
