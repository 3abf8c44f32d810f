//===- CrossMesh.h - Planning a reshard onto another mesh -------*- C++ -*-===//
#ifndef DIST_LIB_PLANNER_SEARCH_CROSSMESH_H
#define DIST_LIB_PLANNER_SEARCH_CROSSMESH_H

#include "dist/Planner/Planner.h"

#include <vector>

namespace dist::planner::detail {

/// The request's transfer link, or the semantics §3a default.
AxisCostParams transferParamsOf(const PlanRequest &request,
                                const CostModel &srcModel,
                                const CostModel &dstModel);

/// The moves of the cheapest plan "moves on the source mesh, one
/// redistribute onto the target mesh, moves on the target mesh" (semantics
/// §3a). The request is verified and cross-mesh.
llvm::Expected<std::vector<Move>> searchCrossMesh(const PlanRequest &request,
                                                  const CostModel &srcModel,
                                                  const CostModel &dstModel,
                                                  SearchStats *stats);

/// No cross-mesh plan costs less: every byte of the tensor that no rank of
/// the target mesh holds already must cross the transfer link, and at best
/// the target's ranks share that evenly in the one transfer step.
double crossMeshLowerBound(const Mesh &srcMesh, const Layout &source,
                           const Mesh &dstMesh, const Layout &target,
                           llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
                           AxisCostParams transfer);

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_SEARCH_CROSSMESH_H
