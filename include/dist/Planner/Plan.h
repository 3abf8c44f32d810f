//===- Plan.h - A reshard plan and its JSON / text forms --------*- C++ -*-===//
//
// A plan is the ordered list of moves from the source layout to the target,
// with per-step bytes and cost, the total, the peak memory per device and a
// lower bound. The JSON form is semantics §4's; planFromJSON reads it back so
// that a persistent cache can store plans (and must then replay them with
// replayPlan before trusting them).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PLANNER_PLAN_H
#define DIST_PLANNER_PLAN_H

#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"
#include "dist/Planner/Move.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace dist::planner {

enum class Strategy { Optimal, Greedy };
llvm::StringRef stringifyStrategy(Strategy strategy); // "optimal", "greedy"
std::optional<Strategy> parseStrategy(llvm::StringRef text);

/// Whether a plan came from the persistent cache; "off" when none is used.
enum class CacheStatus { Off, Hit, Miss };
llvm::StringRef
stringifyCacheStatus(CacheStatus status); // "off", "hit", "miss"
std::optional<CacheStatus> parseCacheStatus(llvm::StringRef text);

struct PlanStep {
  Move move;
  int64_t bytesBefore = 0; // local (padded) bytes per device before the step
  int64_t bytesAfter = 0;
  /// The most bytes one device receives from other devices in the step
  /// (wire traffic; 0 for local moves).
  int64_t recvBytes = 0;
  double cost = 0; // seconds
  Layout layout;   // the layout after this step
};

struct Plan {
  Strategy strategy = Strategy::Optimal;
  std::vector<PlanStep> steps;
  double cost = 0; // sum of the steps' costs
  /// Max over steps of bytesBefore + bytesAfter; for an empty plan, the
  /// source's local bytes.
  int64_t peakBytes = 0;
  /// No plan costs less (see planLowerBound).
  double lowerBound = 0;
  CacheStatus cache = CacheStatus::Off;
};

/// semantics §4's object, one line:
///   {"strategy": "optimal", "cost": 1.2e-05, "peak_bytes": 8192,
///    "lower_bound": 1e-05, "cache": "off", "steps": [{"op": "all_to_all",
///    "axes": ["x"], "dim": 0, "to_dim": 1, "bytes": 4096,
///    "recv_bytes": 3072, "cost": 6e-06,
///    "layout": "[{}, {\"y\", \"x\"}]"}]}
/// `to_dim` appears only for all_to_all and `reduction` only for
/// reduce_scatter, all_reduce and replicate_to_partial; `dim` is null for
/// moves without a dim (all_reduce, replicate_to_partial, permute). Numbers
/// are shortest round-trip doubles.
/// Steps after the transfer of a cross-mesh plan (a redistribute with
/// crossMesh) print their layouts on `targetMesh`, and the transfer step
/// carries `"cross_mesh": true`.
std::string planToJSON(const Mesh &sourceMesh, const Plan &plan,
                       const Mesh *targetMesh = nullptr);

/// Reads planToJSON's output back (moves, bytes, costs, layouts, totals).
/// Checks the syntax and that names exist in `mesh`; whether the moves are
/// valid is replayPlan's job.
llvm::Expected<Plan> planFromJSON(const Mesh &mesh, llvm::StringRef json,
                                  const Mesh *targetMesh = nullptr);

/// Reads a plan given by its moves alone (what `dist-plan --replay` takes,
/// semantics §4): per step `op`, `axes` and what the move names (`dim`,
/// `to_dim`, `reduction`, `segments`, `cross_mesh`, and `layout` for permute
/// and redistribute); every number, and a step's `layout` elsewhere, may be
/// there or not (replayPlan recomputes them). A step's `layout`, when
/// given, is kept in `statedLayouts` (empty optional where not given) for
/// the caller to hold against the replayed one. `strategy` defaults to
/// `defaultStrategy`.
llvm::Expected<Plan>
planMovesFromJSON(const Mesh &mesh, llvm::StringRef json,
                  const Mesh *targetMesh, Strategy defaultStrategy,
                  std::vector<std::optional<Layout>> &statedLayouts);

/// A readable table: step, op, axes, dims, bytes, cost, layout after; then
/// the totals, headed by `title` ("replayed") or else the plan's strategy.
std::string printPlanTable(const Mesh &sourceMesh, const Plan &plan,
                           const Mesh *targetMesh = nullptr,
                           llvm::StringRef title = {});

} // namespace dist::planner

#endif // DIST_PLANNER_PLAN_H
