//===- RandomCases.h - random meshes, shapes and layouts --------*- C++ -*-===//
#ifndef DIST_TEST_PLANNER_RANDOMCASES_H
#define DIST_TEST_PLANNER_RANDOMCASES_H

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include <cstdlib>
#include <random>
#include <string>

namespace dist::planner::test {

using Rng = std::mt19937_64;

/// DIST_PLANNER_PROPERTY_SCALE=N runs N times as many random cases (with
/// different seeds) for stress runs; the default keeps the suites fast.
inline int propertyScale() {
  const char *text = std::getenv("DIST_PLANNER_PROPERTY_SCALE");
  int n = text ? std::atoi(text) : 1;
  return n > 0 ? n : 1;
}

inline int64_t uniform(Rng &rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

/// 1..maxAxes axes named a, b, c, ... with sizes 1..maxSize, at most
/// maxDevices devices, sometimes with a shuffled device table.
inline Mesh randomMesh(Rng &rng, unsigned maxAxes, int64_t maxSize,
                       int64_t maxDevices) {
  while (true) {
    unsigned numAxes = uniform(rng, 1, maxAxes);
    std::vector<MeshAxis> axes;
    int64_t devices = 1;
    for (unsigned a = 0; a < numAxes; ++a) {
      int64_t size = uniform(rng, 1, maxSize);
      axes.push_back({std::string(1, char('a' + a)), size});
      devices *= size;
    }
    if (devices > maxDevices)
      continue;
    std::vector<int64_t> table;
    if (uniform(rng, 0, 3) == 0) {
      for (int64_t i = 0; i < devices; ++i)
        table.push_back(i);
      std::shuffle(table.begin(), table.end(), rng);
    }
    return cantFail(Mesh::create(axes, table));
  }
}

/// Each axis independently replicated, partial (when allowed) or splitting
/// a random dim; random order within dims; partial kind from `kinds`.
inline Layout randomLayout(Rng &rng, const Mesh &mesh, unsigned rank,
                           bool allowPartial,
                           const std::vector<ReductionKind> &kinds = {
                               ReductionKind::Sum, ReductionKind::Max}) {
  Layout layout = Layout::replicated(rank);
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    int64_t choice = uniform(rng, -2, int64_t(rank) - 1);
    if (choice == -1 && allowPartial)
      layout.partialAxes.push_back(a);
    else if (choice >= 0)
      layout.dimAxes[choice].push_back(a);
  }
  for (auto &axes : layout.dimAxes)
    std::shuffle(axes.begin(), axes.end(), rng);
  layout.partialKind = kinds[uniform(rng, 0, kinds.size() - 1)];
  layout.canonicalize();
  return layout;
}

inline std::vector<int64_t> randomShape(Rng &rng, unsigned rank,
                                        int64_t maxExtent) {
  std::vector<int64_t> shape;
  for (unsigned d = 0; d < rank; ++d)
    shape.push_back(uniform(rng, 1, maxExtent));
  return shape;
}

/// Per-axis alpha/beta drawn from a few magnitudes, so that the
/// latency-bound and bandwidth-bound regimes and non-uniform axes all occur.
/// Random per-axis parameters; with `ops`, also random per-move-kind ones
/// (semantics §3b) on each axis: each non-local kind gets its own alpha,
/// beta, both or neither. With `local`, a random local copy rate (semantics
/// §3b) from far below to far above the links' betas, so that slices are
/// both cheaper and dearer than sending their bytes.
inline Topology randomTopology(Rng &rng, const Mesh &mesh, bool ops = false,
                               bool local = false) {
  static const double alphas[] = {1e-5, 2e-6, 5e-5, 1e-7};
  static const double betas[] = {1.0 / 370e9, 1e-9, 4e-8, 1e-11};
  Topology topology;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    const std::string &name = mesh.getAxis(a).name;
    topology.axes[name] = {alphas[uniform(rng, 0, 3)],
                           betas[uniform(rng, 0, 3)]};
    if (!ops)
      continue;
    for (MoveKind kind : kAllMoveKinds) {
      if (isLocalMove(kind))
        continue;
      int64_t which = uniform(rng, 0, 3);
      if (which == 0)
        continue;
      MoveCostOverride &o = topology.axisOps[name][kind];
      if (which & 1)
        o.alpha = alphas[uniform(rng, 0, 3)];
      if (which & 2)
        o.beta = betas[uniform(rng, 0, 3)];
    }
  }
  if (local) {
    static const double locals[] = {1e-13, 1e-12, 3e-11, 2e-10, 1e-8, 1e-6};
    topology.localBeta = locals[uniform(rng, 0, 5)];
  }
  return topology;
}

} // namespace dist::planner::test

#endif
