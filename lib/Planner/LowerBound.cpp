//===- LowerBound.cpp - Admissible cost bound -----------------------------===//

#include "LowerBound.h"

#include <algorithm>
#include <cmath>

using namespace dist::planner;
using namespace dist::planner::detail;

LowerBound::LowerBound(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
                       int64_t elementBytes, const CostModel &model,
                       const PackedLayout &target)
    : numAxes(mesh.getNumAxes()), numDevices(mesh.getNumDevices()),
      rank(shape.size()),
      shape(shape.begin(), shape.end()), elementBytes(elementBytes),
      minLatency(model.minLatency()),
      minSecondsPerByte(model.minSecondsPerByte()), target(target) {
  bool anyKappa = false;
  for (unsigned a = 0; a < kMaxMeshAxes; ++a) {
    axisSize[a] = a < numAxes ? mesh.getAxisSize(a) : 1;
    axisLog2[a] = std::log2(double(axisSize[a]));
    axisLatency[a] = a < numAxes ? std::max(0.0, model.axisLatencyBound(a)) : 0;
    if (axisSize[a] > 1) {
      double k = axisLatency[a] / axisLog2[a];
      kappa = anyKappa ? std::min(kappa, k) : k;
      minAxisLatency =
          anyKappa ? std::min(minAxisLatency, axisLatency[a]) : axisLatency[a];
      anyKappa = true;
    }
  }
  viewOf(target, numAxes, rank, targetView);
  targetPartialAll = targetView.partialMask;
  for (unsigned d = 0; d < rank; ++d) {
    targetLog2Shards[d] = 0;
    for (unsigned i = 0; i < targetView.len[d]; ++i)
      targetLog2Shards[d] += axisLog2[targetView.axes[d][i]];
  }
}

uint8_t LowerBound::mustReduce(const PackedLayout &layout,
                               const DimView &v) const {
  uint8_t partial = 0;
  for (unsigned a = 0; a < numAxes; ++a)
    if ((v.partialMask >> a & 1) && axisSize[a] > 1)
      partial |= 1u << a;
  if (partial && targetPartialAll && layout.kind == target.kind)
    return partial & ~targetPartialAll;
  return partial;
}

LowerBound::Latency LowerBound::latencyOf(const DimView &v,
                                          uint8_t reduce) const {
  double reduceCost = 0;
  for (unsigned a = 0; a < numAxes; ++a)
    if (reduce >> a & 1)
      reduceCost += axisLatency[a];
  double excess = 0, misplaced = 0;
  for (unsigned d = 0; d < rank; ++d) {
    double log2Shards = 0;
    // Common prefix of the dim's axis lists, size-1 axes skipped (they can
    // be moved around for free).
    unsigned t = 0;
    bool agree = true;
    for (unsigned i = 0; i < v.len[d]; ++i) {
      unsigned a = v.axes[d][i];
      if (axisSize[a] == 1)
        continue;
      log2Shards += axisLog2[a];
      while (t < targetView.len[d] && axisSize[targetView.axes[d][t]] == 1)
        ++t;
      agree = agree && t < targetView.len[d] && targetView.axes[d][t] == a;
      ++t;
      if (!agree)
        misplaced += axisLatency[a];
    }
    excess += std::max(0.0, log2Shards - targetLog2Shards[d]);
  }
  // Shard counts are integers, so a real excess is at least log2(1 + 1/P);
  // this only guards against rounding in the sums of logarithms.
  if (excess < 1e-9)
    excess = 0;
  double shed = kappa * excess;
  // A misplaced axis (past the common prefix with the target's list) must
  // leave its place: through gathers/all_to_alls that include it, or
  // through a permute, which costs at least minLatency.
  auto withMisplaced = [&](double m) {
    return std::min(std::max(shed, m), minLatency + shed);
  };
  Latency result;
  result.classOnly = reduceCost + shed;
  result.full = reduceCost + (misplaced > 0 ? withMisplaced(misplaced) : shed);
  result.misplacedFloor = withMisplaced(minAxisLatency) - shed;
  return result;
}

LowerBound::Latency LowerBound::latencies(const PackedLayout &layout) const {
  DimView v;
  viewOf(layout, numAxes, rank, v);
  Latency result = latencyOf(v, mustReduce(layout, v));
  if (layout == target)
    result.full = 0;
  return result;
}

double LowerBound::neededElements(const DimView &v, uint8_t reduce) const {
  // On the ideal tensor every target block of dim d has N_d / P_d(T)
  // elements, so the device that misses most is the one whose current
  // block overlaps its target block least. The overlap is a product over
  // dims; dims that share no axis (between L's and T's lists) vary
  // independently, so the minimum is a product of per-component minima.
  double total = 1;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t tCount = 1;
    for (unsigned i = 0; i < targetView.len[d]; ++i)
      tCount *= axisSize[targetView.axes[d][i]];
    total *= double(shape[d]) / double(tCount);
  }
  if (reduce)
    return total;

  // Components of dims linked by an axis that splits one in L and another
  // in T (union-find over at most 31 dims).
  unsigned parent[kMaxSearchRank];
  for (unsigned d = 0; d < rank; ++d)
    parent[d] = d;
  auto find = [&](unsigned d) {
    while (parent[d] != d)
      d = parent[d] = parent[parent[d]];
    return d;
  };
  int lDim[kMaxMeshAxes], tDim[kMaxMeshAxes];
  for (unsigned a = 0; a < kMaxMeshAxes; ++a)
    lDim[a] = tDim[a] = -1;
  for (unsigned d = 0; d < rank; ++d) {
    for (unsigned i = 0; i < v.len[d]; ++i)
      lDim[v.axes[d][i]] = d;
    for (unsigned i = 0; i < targetView.len[d]; ++i)
      tDim[targetView.axes[d][i]] = d;
  }
  for (unsigned a = 0; a < numAxes; ++a)
    if (lDim[a] >= 0 && tDim[a] >= 0)
      parent[find(lDim[a])] = find(tDim[a]);

  double minCovered = 1;
  for (unsigned root = 0; root < rank && minCovered > 0; ++root) {
    if (find(root) != root)
      continue;
    unsigned dims[kMaxSearchRank], numDims = 0;
    for (unsigned d = 0; d < rank; ++d)
      if (find(d) == root)
        dims[numDims++] = d;
    uint8_t axesList[kMaxMeshAxes];
    unsigned numList = 0;
    for (unsigned a = 0; a < numAxes; ++a) {
      int d = lDim[a] >= 0 ? lDim[a] : tDim[a];
      if (d >= 0 && axisSize[a] > 1 && find(d) == root)
        axesList[numList++] = a;
    }
    int64_t coord[kMaxMeshAxes] = {};
    double best = -1;
    while (true) {
      double covered = 1;
      for (unsigned k = 0; k < numDims && covered > 0; ++k) {
        unsigned d = dims[k];
        double n = double(shape[d]);
        int64_t tShard = 0, tCount = 1, lShard = 0, lCount = 1;
        for (unsigned i = 0; i < targetView.len[d]; ++i) {
          unsigned a = targetView.axes[d][i];
          tShard = tShard * axisSize[a] + coord[a];
          tCount *= axisSize[a];
        }
        for (unsigned i = 0; i < v.len[d]; ++i) {
          unsigned a = v.axes[d][i];
          lShard = lShard * axisSize[a] + coord[a];
          lCount *= axisSize[a];
        }
        double tb = n * double(tShard) / double(tCount);
        double te = n * double(tShard + 1) / double(tCount);
        double lb = n * double(lShard) / double(lCount);
        double le = n * double(lShard + 1) / double(lCount);
        covered *= std::max(0.0, std::min(le, te) - std::max(lb, tb));
      }
      if (best < 0 || covered < best)
        best = covered;
      if (best == 0)
        break;
      unsigned i = 0;
      for (; i < numList; ++i) {
        unsigned a = axesList[i];
        if (++coord[a] < axisSize[a])
          break;
        coord[a] = 0;
      }
      if (i == numList)
        break;
    }
    minCovered *= best;
  }
  double needed = total - minCovered;
  // Rounding in the interval arithmetic must not invent missing data.
  return needed < 1e-9 * total + 1e-9 ? 0 : needed;
}

double LowerBound::operator()(const PackedLayout &layout) const {
  if (layout == target)
    return 0;
  DimView v;
  viewOf(layout, numAxes, rank, v);
  uint8_t reduce = mustReduce(layout, v);
  double needed = neededElements(v, reduce);
  if (reduce) {
    // Every element has Q distinct contributions (one per coordinate on
    // the axes to reduce) and must end on k devices (the target's
    // replication). Getting the combined value of Q sources to k sinks
    // takes at least Q + k - 2 one-way transfers, and each transfer is a
    // byte some device receives; no step is cheaper than its busiest
    // receiver, so the average over devices bounds the cost too.
    double q = 1, sinks = double(numDevices);
    for (unsigned a = 0; a < numAxes; ++a)
      if (reduce >> a & 1)
        q *= double(axisSize[a]);
    double elements = 1;
    for (unsigned d = 0; d < rank; ++d) {
      elements *= double(shape[d]);
      for (unsigned i = 0; i < targetView.len[d]; ++i)
        sinks /= double(axisSize[targetView.axes[d][i]]);
    }
    needed = std::max(needed, elements * (q + sinks - 2) / double(numDevices));
  }
  double lat = latencyOf(v, reduce).full;
  if (reduce || needed > 0)
    lat = std::max(lat, minLatency);
  return lat + minSecondsPerByte * double(elementBytes) * needed;
}
