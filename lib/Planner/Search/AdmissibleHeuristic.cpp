//===- AdmissibleHeuristic.cpp - Admissible cost bound --------------------===//

#include "Search/AdmissibleHeuristic.h"
#include "dist/Support/MixedRadix.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace dist::planner;
using namespace dist::planner::detail;

using dist::mixed_radix::ceilDiv;

LowerBound::LowerBound(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
                       int64_t elementBytes, const CostModel &model,
                       const PackedLayout &target)
    : numAxes(mesh.getNumAxes()), numDevices(mesh.getNumDevices()),
      rank(shape.size()), shape(shape.begin(), shape.end()),
      elementBytes(elementBytes), minLatency(model.minLatency()),
      minSecondsPerByte(model.minSecondsPerByte()), target(target) {
  bool anyKappa = false;
  for (unsigned a = 0; a < kMaxMeshAxes; ++a) {
    axisSize[a] = a < numAxes ? mesh.getAxisSize(a) : 1;
    axisLog2[a] = std::log2(double(axisSize[a]));
    axisLatency[a] = a < numAxes ? std::max(0.0, model.axisLatencyBound(a)) : 0;
    if (axisSize[a] > 1) {
      double k = axisLatency[a] / axisLog2[a];
      kappa = anyKappa ? std::min(kappa, k) : k;
      anyKappa = true;
    }
  }
  allReduceTwice = model.allReducePaysLatencyTwice();
  viewOf(target, numAxes, targetView);
  targetPartialAll = targetView.partialMask;
  for (unsigned d = 0; d < rank; ++d) {
    targetLog2Shards[d] = 0;
    int64_t product = 1;
    for (unsigned i = 0; i < targetView.len[d]; ++i) {
      targetLog2Shards[d] += axisLog2[targetView.axes[d][i]];
      product *= axisSize[targetView.axes[d][i]];
    }
    targetSpan[d] = ceilDiv(this->shape[d], product) * product;
    targetCount[d] = product;
    targetBlockElements *= double(this->shape[d]) / double(product);
  }
  for (unsigned a = 0; a < kMaxMeshAxes; ++a)
    targetDimOf[a] = -1;
  for (unsigned d = 0; d < rank; ++d) {
    // Bit p: the product of the target's first p axes of size > 1 along d
    // is in the target's nesting class (see latencyOf's common prefix).
    prefixNests[d] = 0;
    int64_t product = 1;
    unsigned position = 0;
    for (unsigned i = 0; i < targetView.len[d]; ++i) {
      int64_t size = axisSize[targetView.axes[d][i]];
      if (size == 1)
        continue;
      product *= size;
      ++position;
      if (this->shape[d] <= 1 ||
          ceilDiv(this->shape[d], product) * product == targetSpan[d])
        prefixNests[d] |= 1u << position;
    }
    targetBigLen[d] = 0;
    for (unsigned i = 0; i < targetView.len[d]; ++i)
      if (axisSize[targetView.axes[d][i]] > 1)
        targetBig[d][targetBigLen[d]++] = targetView.axes[d][i];
    targetSplitters[d] = 0;
    for (unsigned i = 0; i < targetView.len[d]; ++i) {
      targetDimOf[targetView.axes[d][i]] = d;
      if (axisSize[targetView.axes[d][i]] > 1)
        targetSplitters[d] |= 1u << targetView.axes[d][i];
    }
  }
  // Jumps (see the header): per dim, the smallest group product q >= 2
  // whose blocks are in the target's nesting class, and the least
  // groupLatencyExcess of such a group. Worth knowing only when no single
  // axis is such a group (else the excess is 0 and q is one axis size, no
  // more than a slice needs anyway... so it is still recorded).
  for (unsigned d = 0; d < kMaxSearchRank; ++d) {
    jumpQ[d] = 0;
    jumpExcess[d] = 0;
  }
  unsigned numSubsets = 1u << numAxes;
  for (unsigned d = 0; d < rank; ++d) {
    if (targetCount[d] <= 1 || this->shape[d] <= 1)
      continue;
    int64_t bestQ = 0;
    bool single = false;
    for (unsigned mask = 1; mask < numSubsets; ++mask) {
      int64_t q = 1;
      unsigned count = 0;
      for (unsigned a = 0; a < numAxes; ++a)
        if (mask >> a & 1) {
          q *= axisSize[a];
          count += axisSize[a] > 1;
        }
      if (q < 2 || ceilDiv(this->shape[d], q) * q != targetSpan[d])
        continue;
      bestQ = bestQ ? std::min(bestQ, q) : q;
      single |= count == 1;
    }
    jumpQ[d] = bestQ;
    if (single || !bestQ)
      continue;
    double best = std::numeric_limits<double>::infinity();
    for (unsigned mask = 1; mask < numSubsets; ++mask) {
      int64_t q = 1;
      unsigned list[kMaxMeshAxes], count = 0;
      for (unsigned a = 0; a < numAxes; ++a)
        if (mask >> a & 1) {
          q *= axisSize[a];
          list[count++] = a;
        }
      if (q < 2 || ceilDiv(this->shape[d], q) * q != targetSpan[d])
        continue;
      best = std::min(best, std::max(0.0, model.groupLatencyExcess(
                                              llvm::ArrayRef(list, count))));
    }
    jumpExcess[d] = best;
  }
  for (unsigned d = 0; d < rank; ++d)
    anyJump |= jumpQ[d] > 0;
  for (unsigned a = 0; a < numAxes; ++a)
    if (axisSize[a] > 1)
      bigAxes |= 1u << a;
  // reducedElements: every element has Q distinct contributions (one per
  // coordinate on the axes to reduce) and must end on k devices (the
  // target's replication). Getting the combined value of Q sources to k
  // sinks takes at least Q + k - 2 one-way transfers, and each transfer is
  // a byte some device receives; no step is cheaper than its busiest
  // receiver, so the average over devices bounds the cost too. And every
  // device needs its whole target block.
  double blockElements = 1;
  for (unsigned d = 0; d < rank; ++d)
    blockElements *= double(this->shape[d]) / double(targetCount[d]);
  double sinks = double(numDevices), elements = 1;
  for (unsigned d = 0; d < rank; ++d) {
    elements *= double(this->shape[d]);
    for (unsigned i = 0; i < targetView.len[d]; ++i)
      sinks /= double(axisSize[targetView.axes[d][i]]);
  }
  const unsigned numMasks = 1u << numAxes;
  for (unsigned mask = 0; mask < numMasks; ++mask) {
    double q = 1;
    for (unsigned a = 0; a < numAxes; ++a)
      if (mask >> a & 1)
        q *= double(axisSize[a]);
    reducedTable[mask] = std::max(blockElements, elements * (q + sinks - 2) /
                                                     double(numDevices));
    double reduceCost = 0, leaveCost = 0;
    for (unsigned a = 0; a < numAxes; ++a)
      if (mask >> a & 1) {
        reduceCost += axisLatency[a];
        // Reduced, but not into a dim of the target: a reduce_scatter puts
        // it in a dim it must leave again, an all_reduce pays twice.
        if (allReduceTwice && !isDimSlot(target.slot[a]))
          leaveCost += axisLatency[a];
      }
    reduceLatency[mask] = reduceCost;
    leaveLatency[mask] = leaveCost;
  }
}

uint8_t LowerBound::mustReduce(const PackedLayout &layout,
                               const DimView &v) const {
  uint8_t partial = v.partialMask & bigAxes;
  if (partial && targetPartialAll && layout.kind == target.kind)
    return partial & ~targetPartialAll;
  return partial;
}

LowerBound::Latency LowerBound::latencyOf(const DimView &v, uint8_t reduce,
                                          const SliceRun &run,
                                          Parts *parts) const {
  const double reduceCost = reduceLatency[reduce];
  const double leaveCost = leaveLatency[reduce];
  double excess = 0, misplaced = 0;
  for (unsigned d = 0; d < rank; ++d) {
    double log2Shards = 0;
    // Common prefix of the dim's axis lists, size-1 axes skipped (they can
    // be moved around for free). Of that prefix, only the first `kept`
    // axes can stay for good: the rest must leave too when the blocks
    // after them do not nest into the target's (see the header).
    unsigned t = 0, position = 0, kept = 0;
    bool agree = true;
    // An open slice run onto d is one step from its start: the axes it
    // added so far can stay if its start nests into the target's blocks.
    const bool runHere = run.open && run.dim == d;
    bool startNests = true;
    const uint8_t *targetAxes = targetBig[d];
    const unsigned targetLen = targetBigLen[d];
    // The dim's axes of size > 1, in order.
    uint8_t big[kMaxMeshAxes];
    unsigned numBig = 0;
    for (unsigned i = 0; i < v.len[d]; ++i) {
      unsigned a = v.axes[d][i];
      if (axisSize[a] == 1)
        continue;
      big[numBig++] = a;
      log2Shards += axisLog2[a];
      agree = agree && t < targetLen && targetAxes[t] == a;
      ++t;
      if (agree) {
        bool inRun = runHere && i >= run.startLen;
        if (inRun && position == kept && startNests)
          kept = position + 1;
        ++position;
        if (!inRun && (prefixNests[d] >> position & 1))
          kept = position;
        if (!inRun)
          startNests = kept == position;
      }
    }
    if (parts && jumpQ[d] && !runHere) {
      // Blocks along d change their nesting class (ceil(N/P) P) only
      // when the dim goes through P = 1 (see the header).
      if (kept == 0)
        parts->jumpWithoutPermute |= 1u << d;
      int64_t shards = 1;
      for (unsigned i = 0; i < v.len[d]; ++i)
        shards *= axisSize[v.axes[d][i]];
      if (shards == 1 || ceilDiv(shape[d], shards) * shards != targetSpan[d])
        parts->jumpWithPermute |= 1u << d;
    }
    // The non-size-1 axes at positions >= kept must leave.
    for (unsigned j = kept; j < numBig; ++j)
      misplaced += axisLatency[big[j]];
    excess += std::max(0.0, log2Shards - targetLog2Shards[d]);
  }
  // Shard counts are integers, so a real excess is at least log2(1 + 1/P);
  // this only guards against rounding in the sums of logarithms.
  if (excess < 1e-9)
    excess = 0;
  double shed = kappa * excess;
  // Misplaced axes must leave their place through gathers/all_to_alls that
  // include them, and reduced axes that leave pay a second time -- or a
  // permute (at least minLatency) does the relabelling.
  auto withMisplaced = [&](double m) {
    return std::min(leaveCost + std::max(shed, m), minLatency + shed);
  };
  if (parts) {
    parts->withoutPermute = reduceCost + leaveCost + std::max(shed, misplaced);
    parts->withPermute = reduceCost + minLatency + shed;
  }
  Latency result;
  result.classOnly =
      reduceCost + shed + (leaveCost > 0 ? std::min(leaveCost, minLatency) : 0);
  result.full =
      reduceCost +
      (misplaced > 0 || leaveCost > 0 ? withMisplaced(misplaced) : shed);
  return result;
}

LowerBound::Latency LowerBound::latencies(const PackedLayout &layout,
                                          const SliceRun &run) const {
  DimView v;
  viewOf(layout, numAxes, v);
  uint8_t reduce = mustReduce(layout, v);
  Latency result = latencyOf(v, reduce, run);
  result.classBandwidth =
      minSecondsPerByte * double(elementBytes) * classNeededElements(v, reduce);
  if (layout == target)
    result.full = 0;
  return result;
}

double LowerBound::classNeededElements(const DimView &v, uint8_t reduce) const {
  if (reduce)
    return reducedElements(reduce);
  // Per dim, a device's current block and its target block overlap in at
  // most the shorter of the two (ideal) lengths, whichever axes split it.
  double total = 1, overlap = 1;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t lCount = 1;
    for (unsigned i = 0; i < v.len[d]; ++i)
      lCount *= axisSize[v.axes[d][i]];
    double n = double(shape[d]);
    double tLen = n / double(targetCount[d]), lLen = n / double(lCount);
    total *= tLen;
    overlap *= std::min(tLen, lLen);
  }
  // Stay below what neededElements computes for any layout of the class,
  // whatever its rounding.
  double needed = total - overlap - 1e-9 * total;
  return needed < 1e-9 * total + 1e-9 ? 0 : needed;
}

double LowerBound::neededElements(const DimView &v, uint8_t reduce) const {
  // On the ideal tensor every target block of dim d has N_d / P_d(T)
  // elements, so the device that misses most is the one whose current
  // block overlaps its target block least. The overlap is a product over
  // dims; dims that share no axis (between L's and T's lists) vary
  // independently, so the minimum is a product of per-component minima.
  const double total = targetBlockElements;
  if (reduce)
    return total;
  // A dim that both layouts split, by disjoint sets of axes, has a device
  // whose block along it misses its target block entirely: the first L
  // block and the last T block (the axes vary independently) overlap in
  // N (1/P(L) + 1/P(T) - 1) <= 0 elements. That device covers nothing, so
  // the minimum below is 0; this test finds it without enumerating.
  for (unsigned d = 0; d < rank; ++d) {
    uint32_t splitters = 0;
    for (unsigned i = 0; i < v.len[d]; ++i)
      if (axisSize[v.axes[d][i]] > 1)
        splitters |= 1u << v.axes[d][i];
    if (splitters && targetSplitters[d] && !(splitters & targetSplitters[d]))
      return total < 1e-9 * total + 1e-9 ? 0 : total;
  }

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
  int lDim[kMaxMeshAxes];
  const int *tDim = targetDimOf;
  for (unsigned a = 0; a < kMaxMeshAxes; ++a)
    lDim[a] = -1;
  for (unsigned d = 0; d < rank; ++d)
    for (unsigned i = 0; i < v.len[d]; ++i)
      lDim[v.axes[d][i]] = d;
  for (unsigned a = 0; a < numAxes; ++a)
    if (lDim[a] >= 0 && tDim[a] >= 0)
      parent[find(lDim[a])] = find(tDim[a]);
  unsigned rootOf[kMaxSearchRank];
  for (unsigned d = 0; d < rank; ++d)
    rootOf[d] = find(d);

  double minCovered = 1;
  for (unsigned root = 0; root < rank && minCovered > 0; ++root) {
    if (rootOf[root] != root)
      continue;
    unsigned dims[kMaxSearchRank], numDims = 0;
    for (unsigned d = 0; d < rank; ++d)
      if (rootOf[d] == root)
        dims[numDims++] = d;
    uint8_t axesList[kMaxMeshAxes];
    unsigned numList = 0;
    for (unsigned a = 0; a < numAxes; ++a) {
      int d = lDim[a] >= 0 ? lDim[a] : tDim[a];
      if (d >= 0 && axisSize[a] > 1 && rootOf[d] == root)
        axesList[numList++] = a;
    }
    // Odometer over the component's axes. A step changes the coordinates of
    // the axes it carries through, so only the dims those axes split are
    // measured again; the product is still taken over every dim in order
    // (the same multiplications, so the same value bit for bit).
    int64_t coord[kMaxMeshAxes] = {};
    double overlap[kMaxSearchRank];
    auto measure = [&](unsigned k) {
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
      overlap[k] = std::max(0.0, std::min(le, te) - std::max(lb, tb));
    };
    unsigned slotOfDim[kMaxSearchRank];
    for (unsigned k = 0; k < numDims; ++k) {
      slotOfDim[dims[k]] = k;
      measure(k);
    }
    double best = -1;
    while (true) {
      double covered = 1;
      for (unsigned k = 0; k < numDims && covered > 0; ++k)
        covered *= overlap[k];
      if (best < 0 || covered < best)
        best = covered;
      if (best == 0)
        break;
      uint32_t dirty = 0;
      unsigned i = 0;
      for (; i < numList; ++i) {
        unsigned a = axesList[i];
        if (lDim[a] >= 0)
          dirty |= 1u << slotOfDim[lDim[a]];
        if (tDim[a] >= 0)
          dirty |= 1u << slotOfDim[tDim[a]];
        if (++coord[a] < axisSize[a])
          break;
        coord[a] = 0;
      }
      if (i == numList)
        break;
      for (; dirty; dirty &= dirty - 1)
        measure(unsigned(__builtin_ctz(dirty)));
    }
    minCovered *= best;
  }
  double needed = total - minCovered;
  // Rounding in the interval arithmetic must not invent missing data.
  return needed < 1e-9 * total + 1e-9 ? 0 : needed;
}

double LowerBound::operator()(const PackedLayout &layout,
                              const SliceRun &run) const {
  if (layout == target)
    return 0;
  DimView v;
  viewOf(layout, numAxes, v);
  uint8_t reduce = mustReduce(layout, v);
  double needed = reduce ? reducedElements(reduce) : neededElements(v, 0);
  Parts parts;
  double lat = latencyOf(v, reduce, run, anyJump ? &parts : nullptr).full;
  if (reduce || needed > 0)
    lat = std::max(lat, minLatency);
  const double perElement = minSecondsPerByte * double(elementBytes);
  double result = lat + perElement * needed;
  if (!parts.jumpWithoutPermute && !parts.jumpWithPermute)
    return result;

  // Dims that must go through one shard and then jump to a nesting class
  // of the target's in one step (see the header): a collective pays
  // jumpExcess on top of what the other terms count, a slice needs its
  // group replicated first, so the device must hold (and so receive) at
  // least total * jumpQ / devices elements at that point.
  double total = 1, held = 1;
  for (unsigned d = 0; d < rank; ++d) {
    int64_t shards = 1;
    for (unsigned i = 0; i < v.len[d]; ++i)
      shards *= axisSize[v.axes[d][i]];
    total *= double(shape[d]);
    held *= double(shape[d]) / double(shards);
  }
  // As above, one collective at least when something must move.
  const double floor = reduce || needed > 0 ? minLatency : 0;
  auto branch = [&](double latency, uint32_t jumps) {
    // Each jumping dim pays its excess (a collective) or makes the device
    // hold `fat` elements first (a slice). Slicing every dim whose fat is
    // at most some threshold is the cheapest choice for that threshold.
    // (The excess adds to counted participations, not to the floor.)
    double fat[kMaxSearchRank], excess[kMaxSearchRank];
    unsigned count = 0;
    double allExcess = 0;
    for (unsigned d = 0; d < rank; ++d)
      if (jumps >> d & 1) {
        fat[count] =
            total * double(jumpQ[d]) / double(numDevices) - held - 1e-9 * total;
        excess[count] = jumpExcess[d];
        allExcess += excess[count++];
      }
    double best = std::max(latency + allExcess, floor) + perElement * needed;
    for (unsigned k = 0; k < count; ++k) {
      double saved = 0;
      for (unsigned j = 0; j < count; ++j)
        if (fat[j] <= fat[k])
          saved += excess[j];
      best = std::min(best, std::max(latency + allExcess - saved, floor) +
                                perElement * std::max(needed, fat[k]));
    }
    return best;
  };
  double jumpBound =
      std::min(branch(parts.withoutPermute, parts.jumpWithoutPermute),
               branch(parts.withPermute, parts.jumpWithPermute));
  return std::max(result, jumpBound);
}
