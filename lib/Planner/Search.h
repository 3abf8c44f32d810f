//===- Search.h - The two search strategies ---------------------*- C++ -*-===//
#ifndef DIST_LIB_PLANNER_SEARCH_H
#define DIST_LIB_PLANNER_SEARCH_H

#include "dist/Planner/Planner.h"

#include <cmath>
#include <vector>

namespace dist::planner::detail {

/// Costs closer than one part in 10^12 count as equal, so that rounding
/// noise between two plans of the same mathematical cost cannot override
/// the fewer-steps rule.
inline double costTolerance(double a, double b) {
  return 1e-12 * std::max(std::fabs(a), std::fabs(b)) + 1e-24;
}
inline bool costLess(double a, double b) {
  return a < b - costTolerance(a, b);
}
inline bool costEqual(double a, double b) {
  return std::fabs(a - b) <= costTolerance(a, b);
}

/// Refuses requests that would need more states than this (about 200 MB
/// and seconds of search) with an error that suggests the greedy strategy.
constexpr size_t kMaxSearchStates = 1000000;

/// The optimal search builds the abstract-distance bound (AbstractBound.h)
/// once it has expanded this many states (before that, the closed-form
/// LowerBound alone, which costs nothing to set up) and the f values it
/// pops exceed kAbstractWeakness times the closed form at the source, and
/// keeps it when it is at least kAbstractGain times the closed form there.
/// (Performance only: any choice keeps the search exact.)
constexpr size_t kAbstractBoundAfter = 1000;
constexpr double kAbstractWeakness = 1.1;
constexpr double kAbstractGain = 1.02;
/// For tests: build it after `expansions` instead, and keep it whatever it
/// says at the source when `keepAlways`. Not thread-safe with searches
/// running.
void setAbstractBoundPolicy(size_t expansions, bool keepAlways);

/// Both return the moves from request.source to request.target; the caller
/// replays them to fill in the plan. The request is already verified.
llvm::Expected<std::vector<Move>>
searchOptimal(const PlanRequest &request, const CostModel &model,
              SearchStats *stats);
llvm::Expected<std::vector<Move>>
searchGreedy(const PlanRequest &request, const CostModel &model,
             SearchStats *stats);
/// Requests with interleaved (segmented) layouts (SegmentedSearch.cpp):
/// the cheapest plan of per-segment collectives and exchanges. Layouts are
/// canonical.
llvm::Expected<std::vector<Move>>
searchSegmented(const PlanRequest &request, const CostModel &model,
                const Layout &source, const Layout &target,
                SearchStats *stats);

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_SEARCH_H
