//===- ReportedLowerBound.cpp - The lower bound a plan reports ------------===//
//
// The `lower_bound` of a plan is defined simply, so that anyone can
// recompute it: for each device, the bytes of its target block it does not
// already hold; the bound is the maximum over devices of that, times the
// smallest beta, plus the smallest alpha when any data must move.
//
// "Holds" means: the element lies in the device's source block *and* its
// value there is already final for the target, i.e. every partial axis of
// the source stays partial (with the same kind) in the target. A device with
// contributions still to be reduced holds none of its target block.
//
// Blocks are measured on the ideal tensor: block s of P along a dim of N is
// [s*N/P, (s+1)*N/P), fractions allowed. When every dim divides evenly that
// is exactly semantics §2's block; on uneven dims it keeps the bound below the
// The costs of semantics §3, which price the padded buffer *before* a step (a
// reduce-scatter of 5 elements over 2 devices costs half of 5 elements of
// bandwidth, although the padded block each device ends with holds 3).
//
// Each received byte costs at least the smallest beta in every move of the
// cost model, and a device missing data needs at least one collective, so
// this never exceeds the cost of a plan. Two refinements hold for every
// plan too: partial axes that must be reduced add their collective latency
// bound, and the bytes that must cross an axis pay that axis's beta
// (crossingBound). The search itself uses the tighter
// bound of Search/AdmissibleHeuristic.h as its A* heuristic.
//
//===----------------------------------------------------------------------===//

#include "Moves/ReportedLowerBound.h"
#include "Moves/BlockCoverage.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

using namespace dist::planner;

/// True when the source's partial values are final values of the target:
/// every partial axis of the source is partial with the same kind in the
/// target, or has size 1 (a "reduction" over one device is the value).
static bool partialsAreFinal(const Mesh &mesh, const Layout &source,
                             const Layout &target) {
  return std::all_of(source.partialAxes.begin(), source.partialAxes.end(),
                     [&](unsigned a) {
                       return mesh.getAxisSize(a) == 1 ||
                              (target.isPartial(a) &&
                               target.partialKind == source.partialKind);
                     });
}

/// True when every dim divides evenly into both layouts' shards: then the
/// ideal blocks are exactly semantics §2's, and one measure gives both.
static bool dividesEvenly(const Mesh &mesh, const Layout &source,
                          const Layout &target, llvm::ArrayRef<int64_t> shape) {
  for (unsigned d = 0; d < shape.size(); ++d)
    if (shape[d] % source.shardCount(mesh, d) ||
        shape[d] % target.shardCount(mesh, d))
      return false;
  return true;
}

namespace {
struct IdealRange {
  double begin, end;
};
} // namespace

/// The ideal block of `coord` along `dim`.
static IdealRange idealBlock(const Mesh &mesh, const Layout &layout,
                             llvm::ArrayRef<int64_t> shape, unsigned dim,
                             llvm::ArrayRef<int64_t> coord) {
  double shards = static_cast<double>(layout.shardCount(mesh, dim));
  double index = static_cast<double>(shardIndex(mesh, layout, dim, coord));
  double extent = static_cast<double>(shape[dim]);
  return {index * extent / shards, (index + 1) * extent / shards};
}

/// The ideal runs of `coord`'s block along `dim`: one per segment of an
/// interleaved dim (segment i of n_i split ideally in P, at its offset), the
/// ideal block otherwise. The collectives price every segment's padded
/// chunk, never less than its ideal share, so the ideal measure bounds them
/// on interleaved dims as on contiguous ones.
static void idealRuns(const Mesh &mesh, const Layout &layout,
                      llvm::ArrayRef<int64_t> shape, unsigned dim,
                      llvm::ArrayRef<int64_t> coord,
                      llvm::SmallVectorImpl<IdealRange> &runs) {
  runs.clear();
  if (!layout.isSegmented(dim)) {
    runs.push_back(idealBlock(mesh, layout, shape, dim, coord));
    return;
  }
  double shards = static_cast<double>(layout.shardCount(mesh, dim));
  double index = static_cast<double>(shardIndex(mesh, layout, dim, coord));
  double offset = 0;
  for (int64_t n : layout.segments[dim]) {
    double extent = static_cast<double>(n);
    runs.push_back({offset + index * extent / shards,
                    offset + (index + 1) * extent / shards});
    offset += extent;
  }
}

/// The most elements any device lacks (see reportedLowerBound) when a layout
/// is interleaved: on ideal runs (idealRuns) and on the runs of semantics
/// §2, the smaller of the two. (Contiguous layouts take
/// forEachBlockCoverage.)
static double segmentedMissing(const Mesh &mesh, const Layout &source,
                               const Layout &target,
                               llvm::ArrayRef<int64_t> shape, bool final) {
  double worst = 0;
  llvm::SmallVector<IdealRange, 4> wantIdeal, haveIdeal;
  for (int64_t device = 0; device < mesh.getNumDevices(); ++device) {
    std::vector<int64_t> coord = mesh.coordinateOf(device);
    // Ideal blocks (for the collectives' padded pricing) and blocks of
    // semantics §2 (for redistribute, which moves exactly the elements a device
    // lacks); each device counts the smaller of the two.
    double wanted = 1, held = final ? 1 : 0;
    double wantedExact = 1, heldExact = final ? 1 : 0;
    for (unsigned d = 0; d < shape.size(); ++d) {
      // blocks of semantics §2: the runs (one per segment of an interleaved
      // dim).
      std::vector<BlockPiece> want = blockPieces(
          mesh, target, shape, d, shardIndex(mesh, target, d, coord));
      std::vector<BlockPiece> have = blockPieces(
          mesh, source, shape, d, shardIndex(mesh, source, d, coord));
      double wantLength = 0, overlap = 0;
      for (const BlockPiece &w : want) {
        wantLength += double(w.global.size());
        for (const BlockPiece &h : have)
          overlap += double(std::max<int64_t>(
              0, std::min(w.global.end, h.global.end) -
                     std::max(w.global.begin, h.global.begin)));
      }
      wantedExact *= wantLength;
      if (final)
        heldExact *= overlap;
      idealRuns(mesh, target, shape, d, coord, wantIdeal);
      idealRuns(mesh, source, shape, d, coord, haveIdeal);
      double wantIdealLength = 0, overlapIdeal = 0;
      for (const IdealRange &w : wantIdeal) {
        wantIdealLength += w.end - w.begin;
        for (const IdealRange &h : haveIdeal)
          overlapIdeal += std::max(0.0, std::min(w.end, h.end) -
                                            std::max(w.begin, h.begin));
      }
      wanted *= wantIdealLength;
      if (final)
        held *= overlapIdeal;
    }
    worst = std::max(worst, std::min(wanted - held, wantedExact - heldExact));
  }
  return worst;
}

double dist::planner::detail::reportedLowerBound(const Mesh &mesh,
                                                 const Layout &source,
                                                 const Layout &target,
                                                 llvm::ArrayRef<int64_t> shape,
                                                 int64_t elementBytes,
                                                 const CostModel &model) {
  bool final = partialsAreFinal(mesh, source, target);
  double worst = 0;
  if (!source.hasSegments() && !target.hasSegments()) {
    // Where every dim divides evenly the ideal blocks are semantics §2's.
    if (dividesEvenly(mesh, source, target, shape))
      forEachBlockCoverage</*Ideal=*/false>(
          mesh, LayoutBlocks(mesh, source, shape, /*ideal=*/false),
          LayoutBlocks(mesh, target, shape, /*ideal=*/false),
          [&](const BlockCoverage &c) {
            worst = std::max(worst, c.wanted - (final ? c.held : 0));
          });
    else
      forEachBlockCoverage(
          mesh, source, target, shape, [&](const BlockCoverage &c) {
            worst = std::max(worst,
                             std::min(c.wantedIdeal - (final ? c.heldIdeal : 0),
                                      c.wanted - (final ? c.held : 0)));
          });
  } else
    worst = segmentedMissing(mesh, source, target, shape, final);
  // Below a hundredth of an element is rounding, not data.
  double perDevice = worst < 1e-2 ? 0
                                  : worst * static_cast<double>(elementBytes) *
                                            model.minSecondsPerByte() +
                                        model.minLatency();
  // Partial axes whose values are not final must be reduced by collectives
  // over groups containing them, each paying at least its axis's latency
  // bound (CostModel's contract) on top of the bytes received.
  double reduction = 0;
  for (unsigned a : source.partialAxes)
    if (mesh.getAxisSize(a) > 1 &&
        !(target.isPartial(a) && target.partialKind == source.partialKind))
      reduction += model.axisLatencyBound(a);
  if (reduction > 0)
    perDevice = std::max(perDevice,
                         reduction + worst * static_cast<double>(elementBytes) *
                                         model.minSecondsPerByte());
  return std::max(perDevice, crossingBound(mesh, source, target, shape,
                                           elementBytes, model));
}

namespace {
/// A union of disjoint blocks along one dim, as sorted ranges (inline for
/// the shard counts of real meshes: this runs on every plan).
using Ranges = llvm::SmallVector<std::pair<double, double>, 64>;

/// The blocks along `dim` (split into `parts` shards) of the devices whose
/// coordinate on `axis` is `c` (all of them when `axis` does not split the
/// dim), on the ideal tensor (`ideal`) or with semantics §2's blocks.
void blocksWith(const Mesh &mesh, const Layout &layout,
                llvm::ArrayRef<int64_t> shape, unsigned dim, int64_t parts,
                unsigned axis, int64_t c, bool ideal, Ranges &out) {
  const AxisList &axes = layout.dimAxes[dim];
  // The axis's digit in the shard index: (s / stride) % size.
  int64_t stride = 0, size = 1;
  for (size_t i = 0; i < axes.size(); ++i)
    if (axes[i] == axis) {
      stride = 1;
      for (size_t j = i + 1; j < axes.size(); ++j)
        stride *= mesh.getAxisSize(axes[j]);
      size = mesh.getAxisSize(axis);
    }
  double n = double(shape[dim]);
  int64_t block = (shape[dim] + parts - 1) / parts;
  out.clear();
  auto add = [&](int64_t s) {
    double b = ideal ? double(s) * n / double(parts)
                     : double(std::min(s * block, shape[dim]));
    double e = ideal ? double(s + 1) * n / double(parts)
                     : double(std::min((s + 1) * block, shape[dim]));
    if (e > b)
      out.push_back({b, e});
  };
  if (!stride) {
    for (int64_t s = 0; s < parts; ++s)
      add(s);
    return;
  }
  // The shard indices whose digit for the axis is c, in increasing order:
  // hi * (size * stride) + c * stride + lo.
  for (int64_t hi = 0; hi < parts; hi += size * stride)
    for (int64_t lo = 0; lo < stride; ++lo)
      add(hi + c * stride + lo);
}

double measure(const Ranges &r) {
  double total = 0;
  for (auto [b, e] : r)
    total += e - b;
  return total;
}

double intersection(const Ranges &x, const Ranges &y) {
  double total = 0;
  size_t i = 0, j = 0;
  while (i < x.size() && j < y.size()) {
    double lo = std::max(x[i].first, y[j].first);
    double hi = std::min(x[i].second, y[j].second);
    if (hi > lo)
      total += hi - lo;
    if (x[i].second < y[j].second)
      ++i;
    else
      ++j;
  }
  return total;
}
} // namespace

double dist::planner::detail::crossingBound(const Mesh &mesh,
                                            const Layout &source,
                                            const Layout &target,
                                            llvm::ArrayRef<int64_t> shape,
                                            int64_t elementBytes,
                                            const CostModel &model) {
  // Enumerating shard indices per dim is cheap for real meshes; skip the
  // refinement for absurd ones rather than spend time on it. The work is
  // (values of each axis) x (shards of every dim): with 46321 devices on one
  // axis that was 2 * 46321^2 steps, 15 s (found by fuzzing).
  if (mesh.getNumDevices() > (int64_t(1) << 16) || source.hasSegments() ||
      target.hasSegments())
    return 0;
  const size_t rank = shape.size();
  // Shard counts per dim, once (this runs on every plan).
  llvm::SmallVector<int64_t, 8> srcParts(rank), dstParts(rank);
  for (unsigned d = 0; d < rank; ++d) {
    srcParts[d] = source.shardCount(mesh, d);
    dstParts[d] = target.shardCount(mesh, d);
  }
  const bool even = dividesEvenly(mesh, source, target, shape);
  int64_t work = 0;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
    for (unsigned d = 0; d < rank; ++d)
      work += mesh.getAxisSize(a) * (srcParts[d] + dstParts[d]);
  if (work > (int64_t(1) << 22))
    return 0;
  bool final = partialsAreFinal(mesh, source, target);
  double best = 0;
  // Where every dim divides evenly in both layouts, the blocks of
  // semantics §2 are the ideal ones, and one measure gives both.
  const bool measures[2] = {true, false};
  const llvm::ArrayRef<bool> idealMeasures(measures, even ? 1 : 2);
  Ranges t, src;
  // A dim that the axis splits in neither layout contributes the same
  // factors for every axis and value: all blocks, in both layouts.
  // Where the dims divide evenly every block is a whole number of elements,
  // N / P along a dim split P ways, so the measures below have closed forms,
  // exactly equal (integers in doubles) to the sums over blocks: all blocks
  // cover N, and the blocks of one value of an axis of size p, N / p.
  llvm::SmallVector<double, 16> wholeWanted(2 * rank), wholeKept(2 * rank);
  for (unsigned d = 0; d < rank; ++d)
    for (bool ideal : idealMeasures) {
      if (even) {
        wholeWanted[2 * d + ideal] = wholeKept[2 * d + ideal] =
            double(shape[d]);
        continue;
      }
      blocksWith(mesh, target, shape, d, dstParts[d], ~0u, 0, ideal, t);
      blocksWith(mesh, source, shape, d, srcParts[d], ~0u, 0, ideal, src);
      wholeWanted[2 * d + ideal] = measure(t);
      wholeKept[2 * d + ideal] = intersection(t, src);
    }
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    int64_t p = mesh.getAxisSize(a);
    if (p == 1)
      continue;
    // A partial axis whose values are not final (pending: partial in the
    // source, not partial of the same kind in the target): every element
    // needs contributions from across it. Other pending reductions can
    // happen within the hyperplane.
    bool pending =
        source.isPartial(a) &&
        !(target.isPartial(a) && target.partialKind == source.partialKind);
    bool held = final || !pending;
    double beta = model.axisSecondsPerByte(a);
    const unsigned srcDim = source.dimOf(a).value_or(rank),
                   dstDim = target.dimOf(a).value_or(rank);
    double perHyperplane = double(mesh.getNumDevices() / p);
    // An axis that splits no dim of either layout cuts every hyperplane
    // alike: one value stands for all. So does one that splits different
    // dims, or a dim of one layout only, where dims divide evenly (the
    // closed forms do not depend on the value).
    const bool closedForm = even && srcDim != dstDim;
    const int64_t values =
        (srcDim == rank && dstDim == rank) || closedForm ? 1 : p;
    for (int64_t c = 0; c < values; ++c) {
      double crossing = -1;
      for (bool ideal : idealMeasures) {
        double wanted = 1, kept = held ? 1 : 0;
        for (unsigned d = 0; d < rank; ++d) {
          if (d != srcDim && d != dstDim) {
            wanted *= wholeWanted[2 * d + ideal];
            if (held)
              kept *= wholeKept[2 * d + ideal];
            continue;
          }
          if (closedForm) {
            // The layout the axis splits d in holds N / p of it per value,
            // and the other layout all of it.
            const double part = double(shape[d] / p);
            wanted *= d == dstDim ? part : double(shape[d]);
            if (held)
              kept *= part;
            continue;
          }
          blocksWith(mesh, target, shape, d, dstParts[d], a, c, ideal, t);
          wanted *= measure(t);
          if (held) {
            blocksWith(mesh, source, shape, d, srcParts[d], a, c, ideal, src);
            kept *= intersection(t, src);
          }
        }
        double missing = wanted - kept;
        crossing = crossing < 0 ? missing : std::min(crossing, missing);
      }
      if (crossing < 1e-2)
        continue;
      best = std::max(best, model.minLatency() + beta * crossing *
                                                     double(elementBytes) /
                                                     perHyperplane);
    }
  }
  return best;
}
