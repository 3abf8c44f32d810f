//===- LowerBound.cpp - Admissible cost bound -----------------------------===//

#include "LowerBound.h"

#include <algorithm>

using namespace dist::planner;
using namespace dist::planner::detail;

static void viewOf(const PackedLayout &layout, unsigned numAxes, unsigned rank,
                   DimView &v) {
  for (unsigned d = 0; d < rank; ++d)
    v.len[d] = 0;
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
      v.len[d] = std::max<unsigned>(v.len[d], pos + 1);
    }
  }
}

LowerBound::LowerBound(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
                       int64_t elementBytes, const CostModel &model,
                       const PackedLayout &target)
    : numAxes(mesh.getNumAxes()), rank(shape.size()),
      shape(shape.begin(), shape.end()), elementBytes(elementBytes),
      minLatency(model.minLatency()),
      minSecondsPerByte(model.minSecondsPerByte()), target(target) {
  for (unsigned a = 0; a < kMaxMeshAxes; ++a)
    axisSize[a] = a < numAxes ? mesh.getAxisSize(a) : 1;
  viewOf(target, numAxes, rank, targetView);
  targetPartialAll = targetView.partialMask;
  for (unsigned a = 0; a < numAxes; ++a)
    if (targetPartialAll >> a & 1) {
      groupSize *= axisSize[a];
      if (axisSize[a] > 1)
        targetPartial |= 1u << a;
    }
}

double LowerBound::operator()(const PackedLayout &layout) const {
  if (layout == target)
    return 0;
  DimView v;
  viewOf(layout, numAxes, rank, v);
  uint8_t partial = 0;
  for (unsigned a = 0; a < numAxes; ++a)
    if ((v.partialMask >> a & 1) && axisSize[a] > 1)
      partial |= 1u << a;
  // Partial axes that some reduce_scatter or all_reduce must still reduce:
  // all of them when the target's kind differs, else those the target does
  // not keep partial.
  uint8_t mustReduce = partial;
  if (partial && (!targetPartialAll || layout.kind == target.kind))
    mustReduce = partial & ~targetPartialAll;

  // Axes whose coordinate decides a block: those splitting a dim in either
  // layout, except the target's partial axes, over which a group ranges.
  uint8_t fixed = 0;
  for (unsigned d = 0; d < rank; ++d) {
    for (unsigned i = 0; i < v.len[d]; ++i)
      fixed |= 1u << v.axes[d][i];
    for (unsigned i = 0; i < targetView.len[d]; ++i)
      fixed |= 1u << targetView.axes[d][i];
  }
  fixed &= ~targetPartialAll;
  int64_t coord[kMaxMeshAxes] = {};
  uint8_t fixedList[kMaxMeshAxes];
  unsigned numFixed = 0;
  for (unsigned a = 0; a < numAxes; ++a)
    if ((fixed >> a & 1) && axisSize[a] > 1)
      fixedList[numFixed++] = a;

  int64_t maxNeeded = 0;
  while (true) {
    int64_t total = 1, covered = 1;
    for (unsigned d = 0; d < rank; ++d) {
      int64_t n = shape[d];
      int64_t tShard = 0, tCount = 1;
      for (unsigned i = 0; i < targetView.len[d]; ++i) {
        unsigned a = targetView.axes[d][i];
        tShard = tShard * axisSize[a] + coord[a];
        tCount *= axisSize[a];
      }
      int64_t tBlock = (n + tCount - 1) / tCount;
      int64_t tb = std::min(tShard * tBlock, n),
              te = std::min((tShard + 1) * tBlock, n);
      total *= te - tb;
      if (mustReduce)
        continue;
      // Union of the current blocks over the group's varying coordinates
      // (target-partial axes that split this dim now), intersected with the
      // target block. Distinct shard indices give disjoint blocks.
      int64_t lCount = 1, base = 0;
      int64_t varyStride[kMaxMeshAxes], varySize[kMaxMeshAxes];
      unsigned numVary = 0;
      for (unsigned i = v.len[d]; i-- > 0;) {
        unsigned a = v.axes[d][i];
        if ((targetPartialAll >> a & 1) && axisSize[a] > 1) {
          varyStride[numVary] = lCount;
          varySize[numVary++] = axisSize[a];
        } else {
          base += coord[a] * lCount;
        }
        lCount *= axisSize[a];
      }
      int64_t lBlock = (n + lCount - 1) / lCount;
      int64_t vary[kMaxMeshAxes] = {};
      int64_t cov = 0;
      while (true) {
        int64_t s = base;
        for (unsigned i = 0; i < numVary; ++i)
          s += vary[i] * varyStride[i];
        int64_t lb = std::min(s * lBlock, n), le = std::min((s + 1) * lBlock, n);
        cov += std::max<int64_t>(0, std::min(le, te) - std::max(lb, tb));
        unsigned i = 0;
        for (; i < numVary; ++i) {
          if (++vary[i] < varySize[i])
            break;
          vary[i] = 0;
        }
        if (i == numVary)
          break;
      }
      covered *= cov;
    }
    int64_t needed = mustReduce ? total : total - covered;
    maxNeeded = std::max(maxNeeded, needed);
    unsigned i = 0;
    for (; i < numFixed; ++i) {
      unsigned a = fixedList[i];
      if (++coord[a] < axisSize[a])
        break;
      coord[a] = 0;
    }
    if (i == numFixed)
      break;
  }
  if (!mustReduce && maxNeeded == 0)
    return 0;
  return minLatency + minSecondsPerByte * double(elementBytes) *
                          double(maxNeeded) / double(groupSize);
}
