//===- ReportedBound.cpp - The lower bound a plan reports -----------------===//
//
// The `lower_bound` of a plan is the one issue 3 defines, so that anyone can
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
// is exactly SPEC §2's block; on uneven dims it keeps the bound below the
// SPEC's costs, which price the padded buffer *before* a step (a
// reduce-scatter of 5 elements over 2 devices costs half of 5 elements of
// bandwidth, although the padded block each device ends with holds 3).
//
// Each received byte costs at least the smallest beta in every move of the
// cost model, and a device missing data needs at least one collective, so
// this never exceeds the cost of a plan. The search itself uses the tighter
// bound of LowerBound.h as its A* heuristic.
//
//===----------------------------------------------------------------------===//

#include "ReportedBound.h"

#include <algorithm>

using namespace dist::planner;

/// True when the source's partial values are final values of the target:
/// every partial axis of the source is partial with the same kind in the
/// target, or has size 1 (a "reduction" over one device is the value).
static bool partialsAreFinal(const Mesh &mesh, const Layout &source,
                             const Layout &target) {
  return std::all_of(
      source.partialAxes.begin(), source.partialAxes.end(), [&](unsigned a) {
        return mesh.getAxisSize(a) == 1 ||
               (target.isPartial(a) && target.partialKind == source.partialKind);
      });
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

double dist::planner::detail::reportedLowerBound(
    const Mesh &mesh, const Layout &source, const Layout &target,
    llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
    const CostModel &model) {
  bool final = partialsAreFinal(mesh, source, target);
  double worst = 0;
  for (int64_t device = 0; device < mesh.getNumDevices(); ++device) {
    std::vector<int64_t> coord = mesh.coordinateOf(device);
    double wanted = 1, held = final ? 1 : 0;
    for (unsigned d = 0; d < shape.size(); ++d) {
      IdealRange want = idealBlock(mesh, target, shape, d, coord);
      wanted *= want.end - want.begin;
      if (final) {
        IdealRange have = idealBlock(mesh, source, shape, d, coord);
        held *= std::max(0.0, std::min(want.end, have.end) -
                                  std::max(want.begin, have.begin));
      }
    }
    worst = std::max(worst, wanted - held);
  }
  // Below a hundredth of an element is rounding, not data.
  if (worst < 1e-2)
    return 0;
  return worst * static_cast<double>(elementBytes) *
             model.minSecondsPerByte() +
         model.minLatency();
}
