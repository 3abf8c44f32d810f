//===- LayoutProblemJSON.h - the layout solver from JSON --------*- C++ -*-===//
//
// The layout solver (LayoutSolver.h) without MLIR and without dist's own
// op models: a problem given as JSON (strategies per node with their
// compute seconds and bytes, reshard cost tables per edge), solved exactly
// as dist-partition solves the problems it builds, the answer as JSON. For
// dist-plan --layout-problem, the C API (distSolveLayoutsJSON) and Python
// (dist_mlir.solve_layouts); docs/partitioning.md, "The solver on its own",
// gives the format.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_PLANNER_LAYOUTPROBLEMJSON_H
#define DIST_PLANNER_LAYOUTPROBLEMJSON_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace dist::planner::layout {

/// The largest problems read: past these a problem is refused with an error
/// naming the limit (the searches' own limits bound their time).
constexpr int64_t kMaxProblemNodes = 1 << 16;
constexpr int64_t kMaxNodeStrategies = 1 << 12;
constexpr int64_t kMaxProblemTableEntries = int64_t(1) << 24;

/// Solves the problem `json` describes and answers with one JSON object:
///   {"choice": [s0, s1, ...], "time": T, "compute": C, "communication": M,
///    "peak_bytes": P, "optimal": true|false, "lower_bound": L,
///    "fallback_reason": "..."}
/// Errors (not JSON, a missing or ill-typed key naming its path, an index
/// out of range, a limit passed) are llvm errors whose message names the
/// fault; no choice within the memory budget is one whose error code is
/// std::errc::result_out_of_range.
llvm::Expected<std::string> solveLayoutProblemJSON(llvm::StringRef json);

/// What solveLayoutProblemJSON's error says, and whether it is the one of a
/// problem with no choice within its memory budget (else a bad problem).
struct LayoutProblemFailure {
  std::string message;
  bool noChoiceFits = false;
};
LayoutProblemFailure describeLayoutProblemError(llvm::Error error);

} // namespace dist::planner::layout

#endif // DIST_PLANNER_LAYOUTPROBLEMJSON_H
