//===- PatternDatabaseHeuristic.cpp - exact distances, abstracted ---------===//

#include "Search/PatternDatabaseHeuristic.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <type_traits>

using namespace dist::planner;
using namespace dist::planner::detail;

// Axis codes in the abstract state.
static constexpr unsigned kRep = 0, kPart = 1, kDim0 = 2;

static unsigned codeOf(uint8_t slot) {
  return slot == kReplicatedSlot ? kRep
         : slot == kPartialSlot  ? kPart
                                 : kDim0 + slotDim(slot);
}

bool AbstractBound::applicable(const Mesh &mesh, unsigned rank,
                               const CostModel &model) {
  if (!model.groupCostIgnoresAxisOrder())
    return false;
  // Slices dearer than sending (semantics §3b) let the search make any axis
  // partial with any kind it meets (SearchSpace.h), beyond the relevant
  // states and kinds the table is built over.
  if (!model.localCopiesNeverDearerThanSending())
    return false;
  size_t entries = 3; // kind indices: none, source's, target's
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    entries *= 2 + rank;
    if (entries > kMaxEntries)
      return false;
  }
  return true;
}

AbstractBound::AbstractBound(const Mesh &mesh, llvm::ArrayRef<int64_t> shape,
                             int64_t elementBytes, const CostModel &model,
                             const PackedLayout &source,
                             const PackedLayout &target,
                             std::optional<int64_t> maxPeak)
    : model(model), maxPeak(maxPeak), numAxes(mesh.getNumAxes()),
      rank(shape.size()), base(2 + rank), shape(shape.begin(), shape.end()),
      elementBytes(elementBytes) {
  for (unsigned a = 0; a < kMaxMeshAxes; ++a) {
    axisSize[a] = a < numAxes ? mesh.getAxisSize(a) : 1;
    sizeOneAxes |= a < numAxes && axisSize[a] == 1;
  }
  power[0] = 1;
  for (unsigned a = 0; a < numAxes; ++a)
    power[a + 1] = power[a] * base;
  // (Sum is kind 0: whether anything is partial is read from the slots.)
  auto hasPartial = [&](const PackedLayout &l) {
    for (unsigned a = 0; a < numAxes; ++a)
      if (l.slot[a] == kPartialSlot)
        return true;
    return false;
  };
  if (hasPartial(source))
    kinds[numKinds++] = source.kind;
  if (hasPartial(target) && !(numKinds && kinds[0] == target.kind))
    kinds[numKinds++] = target.kind;
  for (unsigned k = 0; k < numKinds && hasPartial(target); ++k)
    if (kinds[k] == target.kind)
      targetKindIndex = k + 1;
  for (unsigned a = 0; a < numAxes; ++a) {
    sourcePartialMask |= uint8_t(source.slot[a] == kPartialSlot) << a;
    targetPartialMask |= uint8_t(target.slot[a] == kPartialSlot) << a;
    sizeOneMask |= uint8_t(axisSize[a] == 1) << a;
  }
  permuteLatency = model.minLatency();
  permutePerByte = model.minSecondsPerByte();
  build(source, target);
}

size_t AbstractBound::indexOf(const PackedLayout &layout) const {
  size_t index = 0;
  bool partial = false;
  for (unsigned a = 0; a < numAxes; ++a) {
    unsigned code = codeOf(layout.slot[a]);
    partial |= code == kPart;
    index += code * power[a];
  }
  index = canon[index];
  if (!partial)
    return index;
  // (No other kind, and no state outside the relevant ones, occurs in a
  // search from the source; the bound is 0 for them.)
  for (unsigned k = 0; k < numKinds; ++k)
    if (kinds[k] == layout.kind)
      return partialOfCodes[index] & ~allowedPartial[k + 1]
                 ? kNone
                 : (k + 1) * power[numAxes] + index;
  return kNone;
}

void AbstractBound::build(const PackedLayout &source,
                          const PackedLayout &target) {
  const size_t codes = power[numAxes];
  const size_t total = codes * (1 + numKinds);
  bytesOfCodes.assign(codes, 0);
  partialOfCodes.assign(codes, 0);
  {
    unsigned code[kMaxMeshAxes] = {};
    int64_t shards[kMaxSearchRank];
    for (size_t i = 0; i < codes; ++i) {
      for (unsigned d = 0; d < rank; ++d)
        shards[d] = 1;
      for (unsigned a = 0; a < numAxes; ++a)
        if (code[a] >= kDim0)
          shards[code[a] - kDim0] *= axisSize[a];
      int64_t bytes = elementBytes;
      for (unsigned d = 0; d < rank; ++d)
        bytes *= (shape[d] + shards[d] - 1) / shards[d];
      bytesOfCodes[i] = bytes;
      uint8_t partial = 0;
      for (unsigned a = 0; a < numAxes; ++a)
        partial |= uint8_t(code[a] == kPart) << a;
      partialOfCodes[i] = partial;
      for (unsigned a = 0; a < numAxes && ++code[a] == base; ++a)
        code[a] = 0;
    }
  }
  // Symmetry (see the header): within each class of interchangeable axes,
  // codes sorted (non-decreasing by axis index).
  canon.resize(codes);
  {
    std::vector<std::vector<unsigned>> classes;
    std::vector<bool> taken(numAxes, false);
    for (unsigned a = 0; a < numAxes; ++a) {
      if (taken[a])
        continue;
      std::vector<unsigned> cls = {a};
      for (unsigned b = a + 1; b < numAxes; ++b)
        if (!taken[b] && axisSize[b] == axisSize[a] &&
            codeOf(target.slot[b]) == codeOf(target.slot[a]) &&
            model.axesInterchangeable(a, b)) {
          cls.push_back(b);
          taken[b] = true;
        }
      if (cls.size() > 1)
        classes.push_back(cls);
    }
    // Relevance: the search only meets states whose partial axes are
    // partial in the source (with its kind) or may be made partial by
    // replicate_to_partial (target-partial axes with the target's kind,
    // size-1 axes with the current kind). Moves only shrink that set or add
    // to it within these rules, so the other states lie on no path from a
    // state the search meets, and are skipped. (Closed under the symmetry,
    // so that canonical forms of relevant states are relevant.) On a shape
    // with a dim the mesh does not divide, any axis may join a partial
    // group (SearchSpace.h's uneven joiners), so every axis is relevant
    // for a kind that has partial axes.
    int64_t devices = 1;
    for (unsigned a = 0; a < numAxes; ++a)
      devices *= axisSize[a];
    const std::vector<int64_t> unsharded(rank, 1);
    const bool uneven = joinsOnUnevenBlocks(shape, unsharded.data(), devices);
    for (unsigned k = 1; k <= numKinds; ++k) {
      uint8_t mask = sizeOneMask;
      if (kinds[k - 1] == source.kind && sourcePartialMask)
        mask |= sourcePartialMask;
      if (targetKindIndex == k)
        mask |= targetPartialMask;
      if (uneven && (mask & ~sizeOneMask))
        mask = uint8_t((1u << numAxes) - 1);
      for (const std::vector<unsigned> &cls : classes) {
        bool any = false;
        for (unsigned a : cls)
          any |= mask >> a & 1;
        if (any)
          for (unsigned a : cls)
            mask |= 1u << a;
      }
      allowedPartial[k] = mask;
    }
    unsigned code[kMaxMeshAxes] = {};
    for (size_t i = 0; i < codes; ++i) {
      unsigned sorted[kMaxMeshAxes];
      for (unsigned a = 0; a < numAxes; ++a)
        sorted[a] = code[a];
      for (const std::vector<unsigned> &cls : classes) {
        unsigned values[kMaxMeshAxes];
        for (unsigned k = 0; k < cls.size(); ++k)
          values[k] = code[cls[k]];
        std::sort(values, values + cls.size());
        for (unsigned k = 0; k < cls.size(); ++k)
          sorted[cls[k]] = values[k];
      }
      size_t index = 0;
      for (unsigned a = 0; a < numAxes; ++a)
        index += sorted[a] * power[a];
      canon[i] = uint32_t(index);
      for (unsigned a = 0; a < numAxes && ++code[a] == base; ++a)
        code[a] = 0;
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  dist.assign(total, inf);
  classFloor.assign(total, inf);
  classDone.assign(total, 0);
  const unsigned numMasks = 1u << numAxes;
  maskPower.assign(numMasks, 0);
  maskProduct.assign(numMasks, 1);
  for (unsigned m = 1; m < numMasks; ++m) {
    unsigned a = __builtin_ctz(m);
    maskPower[m] = maskPower[m & (m - 1)] + long(power[a]);
    maskProduct[m] = maskProduct[m & (m - 1)] * axisSize[a];
  }
  nestMemo.assign(size_t(rank) << (2 * numAxes), 0);
  from = indexOf(source);
  size_t goal = indexOf(target);
  if (goal == kNone || from == kNone) {
    frontier = 0;
    return;
  }
  dist[goal] = 0;
  queue.push_back({0, uint32_t(goal)});
  // Settle everything up to the source's own distance (so that the bound
  // at the source is exact); the rest is at least the frontier away.
  settle();
}

void AbstractBound::settle() {
  const size_t codes = power[numAxes];
  const double inf = std::numeric_limits<double>::infinity();
  auto peakOk = [&](int64_t before, int64_t after) {
    return !maxPeak || before + after <= *maxPeak;
  };
  auto later = [](const Item &a, const Item &b) { return a > b; };
  unsigned list[kMaxMeshAxes];
  auto price = [&](MoveKind kind, unsigned mask, size_t xCodes) {
    unsigned count = 0;
    for (unsigned a = 0; a < numAxes; ++a)
      if (mask >> a & 1)
        list[count++] = a;
    return model.collectiveCost(kind, llvm::ArrayRef<unsigned>(list, count),
                                bytesOfCodes[xCodes]);
  };
  auto shift = [&](unsigned mask, long delta) {
    return delta * maskPower[mask];
  };
  // Whether blocks of the first product nest into blocks of both
  // (memoised per dim and pair of axis masks; 0: not computed yet).
  auto nest = [&](unsigned d, unsigned outerMask, unsigned groupMask) {
    uint8_t &m = nestMemo[(size_t(d) << (2 * numAxes)) |
                          (size_t(outerMask) << numAxes) | groupMask];
    if (!m)
      m = blocksNest(shape[d], maskProduct[outerMask], maskProduct[groupMask])
              ? 2
              : 1;
    return m == 2;
  };

  while (!queue.empty()) {
    auto [dy, y] = queue.front();
    if (dist[from] < dy)
      break; // the source is settled

    std::pop_heap(queue.begin(), queue.end(), later);
    queue.pop_back();
    if (dy > dist[y])
      continue;
    // `cost` is a price or a function computing it, called only when the
    // edge could improve x (most edges reach states already settled).
    // x is given as its kind index and code part (no divisions here).
    auto relax = [&](unsigned kx, size_t xCodes, auto &&cost) {
      const uint32_t c = canon[xCodes];
      const size_t x = kx * codes + c;
      if (dist[x] <= dy || (partialOfCodes[c] & ~allowedPartial[kx]))
        return;
      double d;
      if constexpr (std::is_arithmetic_v<std::decay_t<decltype(cost)>>)
        d = dy + cost;
      else
        d = dy + cost();
      if (d < dist[x]) {
        dist[x] = d;
        queue.push_back({d, uint32_t(x)});
        std::push_heap(queue.begin(), queue.end(), later);
      }
    };
    const size_t yCodes = y % codes;
    const unsigned ky = unsigned(y / codes);
    const int64_t yBytes = bytesOfCodes[yCodes];
    unsigned code[kMaxMeshAxes];
    unsigned repMask = 0, partMask = 0, dimMask[kMaxSearchRank] = {};
    int64_t shards[kMaxSearchRank];
    for (unsigned d = 0; d < rank; ++d)
      shards[d] = 1;
    for (unsigned a = 0; a < numAxes; ++a) {
      code[a] = unsigned(yCodes / power[a] % base);
      if (code[a] == kRep)
        repMask |= 1u << a;
      else if (code[a] == kPart)
        partMask |= 1u << a;
      else {
        dimMask[code[a] - kDim0] |= 1u << a;
        shards[code[a] - kDim0] *= axisSize[a];
      }
    }
    // The kind indices a predecessor may have when it had `mask` partial
    // on top of y's partial axes (which are then all it reduced).
    auto forKinds = [&](auto &&fn) {
      if (partMask) {
        fn(ky);
        return;
      }
      for (unsigned k = 1; k <= numKinds; ++k)
        fn(k);
    };
    // all_slice of a group S onto dim d (a slice run; x had S replicated):
    // free, if the blocks nest.
    for (unsigned d = 0; d < rank; ++d)
      for (unsigned s = dimMask[d]; s; s = (s - 1) & dimMask[d]) {
        size_t xCodes = yCodes + shift(s, -long(kDim0 + d));
        if (nest(d, dimMask[d] & ~s, s) && peakOk(bytesOfCodes[xCodes], yBytes))
          relax(ky, xCodes, 0.0);
      }
    // An axis that may join a partial group on uneven blocks
    // (joinsOnUnevenBlocks). A chain of such single-axis steps covers the
    // search's multi-axis one: a larger group stays uneven.
    auto unevenJoiner = [&](unsigned a, unsigned otherPartial) {
      int64_t group = axisSize[a];
      for (unsigned b = 0; b < numAxes; ++b)
        if (otherPartial >> b & 1)
          group *= axisSize[b];
      return joinsOnUnevenBlocks(shape, shards, group);
    };
    // replicate_to_partial of one axis (free), as the search generates
    // it: a target-partial axis when the kind is (or, with nothing
    // partial, becomes) the target's; a size-1 axis or an uneven joiner
    // while something is partial.
    if (peakOk(yBytes, yBytes))
      for (unsigned a = 0; a < numAxes; ++a) {
        if (code[a] != kPart)
          continue;
        size_t xCodes = yCodes - power[a];
        const bool targetAxis = targetPartialMask >> a & 1;
        if (partMask != (1u << a)) {
          if ((targetAxis && ky == targetKindIndex) || (sizeOneMask >> a & 1) ||
              unevenJoiner(a, partMask & ~(1u << a)))
            relax(ky, xCodes, 0.0);
        } else if (targetAxis && ky == targetKindIndex) {
          relax(0, xCodes, 0.0);
        }
      }
    // all_gather of a group S (replicated in y) from dim d.
    for (unsigned s = repMask; s; s = (s - 1) & repMask) {
      for (unsigned d = 0; d < rank; ++d) {
        size_t xCodes = yCodes + shift(s, long(kDim0 + d));
        if (nest(d, dimMask[d], s) && peakOk(bytesOfCodes[xCodes], yBytes))
          relax(ky, xCodes,
                [&] { return price(MoveKind::AllGather, s, xCodes); });
      }
    }
    // all_to_all of a group S from dim d into dim e.
    for (unsigned e = 0; e < rank; ++e)
      for (unsigned s = dimMask[e]; s; s = (s - 1) & dimMask[e]) {
        if (!nest(e, dimMask[e] & ~s, s))
          continue;
        for (unsigned d = 0; d < rank; ++d) {
          if (d == e || !nest(d, dimMask[d], s))
            continue;
          size_t xCodes = yCodes + shift(s, long(d) - long(e));
          if (peakOk(bytesOfCodes[xCodes], yBytes))
            relax(ky, xCodes,
                  [&] { return price(MoveKind::AllToAll, s, xCodes); });
        }
      }
    // reduce_scatter of partial axes S into dim d.
    for (unsigned d = 0; d < rank; ++d)
      for (unsigned s = dimMask[d]; s; s = (s - 1) & dimMask[d]) {
        size_t xCodes = yCodes + shift(s, long(kPart) - long(kDim0 + d));
        if (!nest(d, dimMask[d] & ~s, s) ||
            !peakOk(bytesOfCodes[xCodes], yBytes))
          continue;
        forKinds([&](unsigned kx) {
          relax(kx, xCodes,
                [&] { return price(MoveKind::ReduceScatter, s, xCodes); });
        });
      }
    // all_reduce of partial axes S.
    if (peakOk(yBytes, yBytes))
      for (unsigned s = repMask; s; s = (s - 1) & repMask) {
        size_t xCodes = yCodes + shift(s, long(kPart) - long(kRep));
        forKinds([&](unsigned kx) {
          relax(kx, xCodes,
                [&] { return price(MoveKind::AllReduce, s, xCodes); });
        });
      }
    // permute: every other state of y's class (same shard counts, partial
    // axes and kind); y is the class's first (nearest) state popped. (With
    // symmetry, the canonical forms of its members: their classes are
    // images of y's, with the same least distance.)
    if (!classDone[y]) {
      const bool allowed = peakOk(yBytes, yBytes);
      const double cost =
          sizeOneAxes ? 0 : permuteLatency + permutePerByte * double(yBytes);
      int64_t rem[kMaxSearchRank];
      for (unsigned d = 0; d < rank; ++d)
        rem[d] = shards[d];
      const size_t kindBase = ky * codes;
      // The product of the free (non-partial) axes from a on: what the
      // dims still missing (remAll) must divide.
      int64_t freeFrom[kMaxMeshAxes + 1];
      freeFrom[numAxes] = 1;
      for (unsigned a = numAxes; a-- > 0;)
        freeFrom[a] = freeFrom[a + 1] * (partMask >> a & 1 ? 1 : axisSize[a]);
      int64_t remAll = 1;
      for (unsigned d = 0; d < rank; ++d)
        remAll *= shards[d];
      auto fill = [&](auto &&self, unsigned a, size_t index) -> void {
        if (freeFrom[a] % remAll)
          return;
        if (a == numAxes) {
          size_t x = kindBase + canon[index];
          classDone[x] = 1;
          classFloor[x] = dy;
          if (x != y && allowed)
            relax(ky, index, cost);
          return;
        }
        if (partMask >> a & 1) {
          self(self, a + 1, index + kPart * power[a]);
          return;
        }
        self(self, a + 1, index);
        for (unsigned d = 0; d < rank; ++d) {
          if (rem[d] % axisSize[a])
            continue;
          rem[d] /= axisSize[a];
          remAll /= axisSize[a];
          self(self, a + 1, index + (kDim0 + d) * power[a]);
          rem[d] *= axisSize[a];
          remAll *= axisSize[a];
        }
      };
      fill(fill, 0, 0);
    }
  }
  frontier = queue.empty() ? inf : queue.front().first;
}
