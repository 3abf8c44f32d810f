//===- BlockCoverage.h - how much of its target a device holds --*- C++ -*-===//
//
// Both lower bounds that hold for every plan (the reported one,
// ReportedLowerBound.cpp, and the exchange's planBound, Redistribute.cpp)
// start from the same per-device numbers: how many elements of its target
// block a device wants, how many of them its source block already holds,
// the same on ideal blocks (block s of P along a dim of N is
// [s*N/P, (s+1)*N/P)), and how many source blocks its target block
// overlaps. Devices that differ only on axes splitting no dim of either
// layout hold the same blocks, so one device per class is visited: the
// coordinates on the splitting axes count up like an odometer and the shard
// indices (semantics §2: the last axis of a dim least significant) follow
// digit by digit, so a visit costs O(rank) and nothing is allocated.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_PLANNER_MOVES_BLOCKCOVERAGE_H
#define DIST_LIB_PLANNER_MOVES_BLOCKCOVERAGE_H

#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"
#include "dist/Support/MixedRadix.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cassert>

namespace dist::planner::detail {

/// One device's target block against its source block, over all dims.
struct BlockCoverage {
  /// Elements of the target block, and of those the source block holds
  /// (blocks of semantics §2).
  double wanted = 1, held = 1;
  /// The same on ideal blocks (fractions of elements).
  double wantedIdeal = 1, heldIdeal = 1;
  /// Source blocks the target block overlaps (0 for an empty target block).
  int64_t sourceBlocks = 1;
};

/// What the coverage walk reads of one layout, worked out once: per axis
/// the dim it splits (rank: none) and its weight in that dim's shard index;
/// per dim the block size and shard count, and the ideal block boundaries
/// i*N/P (a table, unless the dim has thousands of shards).
class LayoutBlocks {
public:
  /// Without `ideal` the boundaries are not tabled (a walk without Ideal
  /// never reads them).
  LayoutBlocks(const Mesh &mesh, const Layout &layout,
               llvm::ArrayRef<int64_t> shape, bool ideal = true)
      : shape(shape), dimOfAxis(mesh.getNumAxes(), shape.size()),
        weight(mesh.getNumAxes(), 0), block(shape.size()), parts(shape.size()),
        edgeAt(shape.size()) {
    const size_t rank = shape.size();
    int64_t totalParts = 0;
    for (unsigned d = 0; d < rank; ++d) {
      int64_t w = 1;
      const AxisList &axes = layout.dimAxes[d];
      for (size_t i = axes.size(); i-- > 0;) {
        dimOfAxis[axes[i]] = d;
        weight[axes[i]] = w;
        w *= mesh.getAxisSize(axes[i]);
      }
      parts[d] = w;
      block[d] =
          std::max<int64_t>(1, dist::mixed_radix::blockSize(shape[d], w));
      totalParts += w;
    }
    tables = ideal && totalParts <= 4096;
    for (unsigned d = 0; tables && d < rank; ++d) {
      edgeAt[d] = edge.size();
      for (int64_t i = 0; i <= parts[d]; ++i)
        edge.push_back(idealEdge(d, i));
    }
  }
  /// The blocks of the layout with `axis` (splitting no dim yet) appended
  /// as the minor-most axis of `dim`. Only for blocks built without `ideal`
  /// (the boundaries are not re-tabled).
  void appendAxis(const Mesh &mesh, unsigned axis, unsigned dim) {
    assert(!tables && dimOfAxis[axis] == shape.size());
    const int64_t size = mesh.getAxisSize(axis);
    for (unsigned a = 0; a < dimOfAxis.size(); ++a)
      if (dimOfAxis[a] == dim)
        weight[a] *= size;
    dimOfAxis[axis] = dim;
    weight[axis] = 1;
    parts[dim] *= size;
    block[dim] = std::max<int64_t>(
        1, dist::mixed_radix::blockSize(shape[dim], parts[dim]));
  }
  /// The ideal block boundary i along d.
  double edgeOf(unsigned d, int64_t i) const {
    return tables ? edge[edgeAt[d] + i] : idealEdge(d, i);
  }

  llvm::ArrayRef<int64_t> shape;
  llvm::SmallVector<unsigned, 8> dimOfAxis;
  llvm::SmallVector<int64_t, 8> weight, block, parts;

private:
  double idealEdge(unsigned d, int64_t i) const {
    return double(i) * double(shape[d]) / double(parts[d]);
  }
  bool tables = false;
  llvm::SmallVector<double, 32> edge;
  llvm::SmallVector<size_t, 8> edgeAt;
};

/// Calls fn(coverage) once for every class of devices of `mesh` that hold
/// the same source and target blocks (every device's coverage is one of
/// them). Both layouts must be valid for the mesh and shape and contiguous
/// (no segments). Without `Ideal`, the ideal-block fields stay 1.
template <bool Ideal = true, typename Fn>
void forEachBlockCoverage(const Mesh &mesh, const LayoutBlocks &source,
                          const LayoutBlocks &target, Fn fn) {
  const unsigned numAxes = mesh.getNumAxes();
  llvm::ArrayRef<int64_t> shape = source.shape;
  const size_t rank = shape.size();
  // Shard indices (one extra slot absorbs axes that split no dim).
  llvm::SmallVector<int64_t, 8> s(rank + 1, 0), t(rank + 1, 0);
  // The axes that split a dim of either layout: the odometer's digits.
  llvm::SmallVector<unsigned, 8> splitting;
  for (unsigned a = 0; a < numAxes; ++a)
    if ((source.dimOfAxis[a] < rank || target.dimOfAxis[a] < rank) &&
        mesh.getAxisSize(a) > 1)
      splitting.push_back(a);
  llvm::SmallVector<int64_t, 8> coord(numAxes, 0);
  // Each dim's factors, recomputed only for the dims whose shard indices the
  // last count changed (bit d of `dirty`; bit rank is the spare slot).
  llvm::SmallVector<double, 8> wanted(rank), held(rank), wantedIdeal(rank),
      heldIdeal(rank);
  llvm::SmallVector<int64_t, 8> sourceBlocks(rank);
  uint64_t dirty = ~uint64_t(0);
  for (;;) {
    for (unsigned d = 0; d < rank; ++d) {
      if (!(dirty >> d & 1))
        continue;
      const int64_t n = shape[d];
      const int64_t tb = std::min(t[d] * target.block[d], n);
      const int64_t te = std::min((t[d] + 1) * target.block[d], n);
      const int64_t sb = std::min(s[d] * source.block[d], n);
      const int64_t se = std::min((s[d] + 1) * source.block[d], n);
      wanted[d] = double(te - tb);
      held[d] =
          double(std::max<int64_t>(0, std::min(te, se) - std::max(tb, sb)));
      sourceBlocks[d] =
          te > tb ? (te - 1) / source.block[d] - tb / source.block[d] + 1 : 0;
      if (!Ideal)
        continue;
      const double itb = target.edgeOf(d, t[d]);
      const double ite = target.edgeOf(d, t[d] + 1);
      const double isb = source.edgeOf(d, s[d]);
      const double ise = source.edgeOf(d, s[d] + 1);
      wantedIdeal[d] = ite - itb;
      heldIdeal[d] = std::max(0.0, std::min(ite, ise) - std::max(itb, isb));
    }
    dirty = 0;
    BlockCoverage c;
    for (unsigned d = 0; d < rank; ++d) {
      c.wanted *= wanted[d];
      c.held *= held[d];
      c.sourceBlocks *= sourceBlocks[d];
      if (Ideal) {
        c.wantedIdeal *= wantedIdeal[d];
        c.heldIdeal *= heldIdeal[d];
      }
    }
    fn(c);
    // Count up; a digit that wraps takes its weight back out of the shard
    // indices, and the last one wrapping ends the walk.
    size_t i = splitting.size();
    for (; i-- > 0;) {
      const unsigned a = splitting[i];
      const int64_t size = mesh.getAxisSize(a);
      dirty |= uint64_t(1) << source.dimOfAxis[a] | uint64_t(1)
                                                        << target.dimOfAxis[a];
      if (++coord[a] < size) {
        s[source.dimOfAxis[a]] += source.weight[a];
        t[target.dimOfAxis[a]] += target.weight[a];
        break;
      }
      coord[a] = 0;
      s[source.dimOfAxis[a]] -= (size - 1) * source.weight[a];
      t[target.dimOfAxis[a]] -= (size - 1) * target.weight[a];
    }
    if (i == size_t(-1))
      return;
  }
}

/// The same for two layouts.
template <bool Ideal = true, typename Fn>
void forEachBlockCoverage(const Mesh &mesh, const Layout &source,
                          const Layout &target, llvm::ArrayRef<int64_t> shape,
                          Fn fn) {
  forEachBlockCoverage<Ideal>(mesh, LayoutBlocks(mesh, source, shape),
                              LayoutBlocks(mesh, target, shape), fn);
}

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_MOVES_BLOCKCOVERAGE_H
