//===- BruteForce.h - Exhaustive plan search for small cases ----*- C++ -*-===//
//
// An independent oracle for the optimal planner: Dijkstra over every layout
// of the mesh and rank, with every move semantics §3 allows -- all ordered axis
// groups for slices and reduce-scatters, every subset and every kind for
// replicate_to_partial, every permute target -- each checked by the public
// applyMove and priced by the cost model. It shares none of the planner's
// packed representation, move generation, pruning or heuristic.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TEST_PLANNER_BRUTEFORCE_H
#define DIST_TEST_PLANNER_BRUTEFORCE_H

#include "dist/Planner/Planner.h"

#include <optional>
#include <string>
#include <vector>

namespace dist::planner::test {

struct BruteForceResult {
  double cost = 0;
  unsigned steps = 0;
  /// The plan, one printed move per step (for failure messages).
  std::vector<std::string> moves;
};

/// Which redistribute steps the exhaustive search tries (when the request
/// allows them): the planner's move set (redistributeCandidates: checks that
/// the search is exact over it) or every layout with the same partial axes
/// (the whole move of semantics §3, to measure what that restriction costs).
enum class RedistributeTargets { Planner, Every };

/// Cheapest (cost, then steps) plan, or nullopt when the target cannot be
/// reached within request.maxPeakBytes.
std::optional<BruteForceResult>
bruteForcePlan(const PlanRequest &request, const CostModel &model,
               RedistributeTargets targets = RedistributeTargets::Planner);

/// Every valid layout of `rank` dims over `mesh` (all partial kinds).
std::vector<Layout> allLayouts(const Mesh &mesh, unsigned rank);

} // namespace dist::planner::test

#endif
