//===- Search.h - The two search strategies ---------------------*- C++ -*-===//
#ifndef DIST_LIB_PLANNER_SEARCH_SEARCH_H
#define DIST_LIB_PLANNER_SEARCH_SEARCH_H

#include "dist/Planner/Planner.h"
#include "dist/Planner/Redistribute.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace dist::planner::detail {

/// Costs closer than one part in 10^12 count as equal, so that rounding
/// noise between two plans of the same mathematical cost cannot override
/// the fewer-steps rule.
inline double costTolerance(double a, double b) {
  return 1e-12 * std::max(std::fabs(a), std::fabs(b)) + 1e-24;
}
inline bool costLess(double a, double b) { return a < b - costTolerance(a, b); }
inline bool costEqual(double a, double b) {
  return std::fabs(a - b) <= costTolerance(a, b);
}

/// Refuses requests that would need more states than this (about 200 MB
/// and seconds of search) with an error that suggests the greedy strategy.
constexpr size_t kMaxSearchStates = 1000000;
/// And requests whose optimal search runs longer than this, in seconds of
/// wall-clock time (the state limit alone let some requests search for
/// minutes). Far above any request the benchmarks plan (the worst
/// 6-D case takes milliseconds), so only pathological requests meet it.
constexpr double kMaxSearchSeconds = 30;
/// The optimal search builds the abstract-distance bound
/// (PatternDatabaseHeuristic.h) once it has expanded this many states (before
/// that, the closed-form LowerBound alone, which costs nothing to set up) and
/// the f values it pops exceed kAbstractWeakness times the closed form at the
/// source, and keeps it when it is at least kAbstractGain times the closed form
/// there. (Performance only: any choice keeps the search exact. 600 rather than
/// 1000: on dist-plan-bench's 6-D cases the worst plan time fell from 10.8
/// to 9.4 ms and the median from 200 to 194 us, the p90 rose from 2.05 to
/// 2.19 ms; 400 raised the p90 to 3.4 ms.)
constexpr size_t kAbstractBoundAfter = 600;
constexpr double kAbstractWeakness = 1.1;
constexpr double kAbstractGain = 1.02;
/// The limits and tuning of one optimal search.
struct OptimalSearchOptions {
  /// Deterministic limits: the states stored and the moves generated.
  size_t maxStates = kMaxSearchStates;
  uint64_t maxEdges = std::numeric_limits<uint64_t>::max();
  /// Wall-clock seconds.
  double maxSeconds = kMaxSearchSeconds;
  /// See kAbstractBoundAfter; with abstractBoundAlways the bound is kept
  /// whatever it says at the source.
  size_t abstractBoundAfter = kAbstractBoundAfter;
  bool abstractBoundAlways = false;

  /// What searches on this thread start from: the constants above unless a
  /// ScopedSearchOptions on this thread says otherwise.
  static const OptimalSearchOptions &threadDefaults();
};

/// For tests and fuzzers: other default options for the searches this
/// thread runs while it lives (planReshard takes no options of its own).
class ScopedSearchOptions {
public:
  explicit ScopedSearchOptions(const OptimalSearchOptions &options);
  ~ScopedSearchOptions();
  ScopedSearchOptions(const ScopedSearchOptions &) = delete;
  ScopedSearchOptions &operator=(const ScopedSearchOptions &) = delete;

private:
  OptimalSearchOptions saved;
};

/// Both return the moves from request.source to request.target; the caller
/// replays them to fill in the plan. The request is already verified.
llvm::Expected<std::vector<Move>> searchOptimal(const PlanRequest &request,
                                                const CostModel &model,
                                                SearchStats *stats);
/// searchOptimal pricing its exchanges with `exchange` (for `model`, the
/// request's shape and element size), which then remembers them for the
/// replay of the plan.
llvm::Expected<std::vector<Move>>
searchOptimalWith(const PlanRequest &request, const CostModel &model,
                  SearchStats *stats, ExchangeCostEvaluator &exchange);
/// searchOptimal with other options (searchOptimal's are the thread's
/// defaults) and, when not null, `exchange` as in searchOptimalWith.
llvm::Expected<std::vector<Move>>
searchOptimalWithin(const PlanRequest &request, const CostModel &model,
                    SearchStats *stats, const OptimalSearchOptions &options,
                    ExchangeCostEvaluator *exchange = nullptr);
llvm::Expected<std::vector<Move>> searchGreedy(const PlanRequest &request,
                                               const CostModel &model,
                                               SearchStats *stats);
using SearchFunction = llvm::Expected<std::vector<Move>> (*)(
    const PlanRequest &request, const CostModel &model, SearchStats *stats);

/// Runs `search` on the mesh without its size-1 axes and maps the moves back
/// with zero-cost steps that drop and restore those axes (UnitAxes.cpp).
/// std::nullopt when the mesh has no size-1 axis, a layout has segments, or
/// the model charges for a collective over one device (then the caller
/// searches the full mesh). With `exact` (the optimal strategy), a plan that
/// keeps steps on size-1 axes alone (so that fewer steps of the same cost
/// might exist) is searched again on the full mesh within
/// kUnitAxesRecheckStates states, and that plan is taken when it settles.
std::optional<llvm::Expected<std::vector<Move>>>
searchWithoutUnitAxes(const PlanRequest &request, const CostModel &model,
                      SearchStats *stats, SearchFunction search, bool exact);
/// See searchWithoutUnitAxes: large enough for every mesh of up to four axes
/// the property tests compare with an exhaustive search, small enough to
/// take well under a second.
constexpr size_t kUnitAxesRecheckStates = 50000;
constexpr uint64_t kUnitAxesRecheckMoves = 1000000;

/// Requests with interleaved (segmented) layouts (SegmentedSearch.cpp):
/// the cheapest plan of per-segment collectives and exchanges. Layouts are
/// canonical.
llvm::Expected<std::vector<Move>>
searchSegmented(const PlanRequest &request, const CostModel &model,
                const Layout &source, const Layout &target, SearchStats *stats);

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_SEARCH_SEARCH_H
