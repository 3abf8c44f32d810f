//===- Planner.h - Planning a reshard ---------------------------*- C++ -*-===//
//
// planReshard finds the cheapest sequence of semantics §3 moves from a source
// to a target layout (strategy Optimal: an exact A* search) or the classic
// greedy similarity walk (strategy Greedy, the baseline). docs/planner.md
// describes the search, the move set it explores and why that set loses no
// optimum.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PLANNER_PLANNER_H
#define DIST_PLANNER_PLANNER_H

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"
#include "dist/Planner/Move.h"
#include "dist/Planner/Plan.h"

#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace dist::planner {

/// Bumped whenever a change can alter the plan returned for some request
/// (move set, tie-breaking, cost formulas). Persistent caches key on it.
constexpr unsigned kPlannerVersion = 6;

/// Which moves a plan may use (`dist-plan --moves`): every semantics §3 move,
/// or the collectives only (no point-to-point `redistribute`).
enum class MoveSet { All, Collective };
llvm::StringRef stringifyMoveSet(MoveSet moves); // "all", "collective"
std::optional<MoveSet> parseMoveSet(llvm::StringRef text);

struct PlanRequest {
  PlanRequest(Mesh mesh, std::vector<int64_t> globalShape, int64_t elementBytes,
              Layout source, Layout target)
      : mesh(std::move(mesh)), globalShape(std::move(globalShape)),
        elementBytes(elementBytes), source(std::move(source)),
        target(std::move(target)) {}

  Mesh mesh;
  std::vector<int64_t> globalShape;
  int64_t elementBytes;
  Layout source, target;
  Strategy strategy = Strategy::Optimal;
  /// Not owned; must be bound to `mesh`. Null: the semantics §3 default ring
  /// model (alpha = 1e-5 s, beta = 1/370e9 s/B on every axis).
  const CostModel *costModel = nullptr;
  /// Plans whose peak bytes (semantics §3) exceed this are not considered.
  std::optional<int64_t> maxPeakBytes;
  MoveSet moves = MoveSet::All;

  /// Cross-mesh reshards (semantics §3a): `target` is a layout on this mesh.
  /// The plan is moves on `mesh`, one redistribute onto `targetMesh`
  /// (Move::crossMesh), then moves on `targetMesh`.
  std::optional<Mesh> targetMesh;
  /// Not owned; bound to `targetMesh`. Null: the default model.
  const CostModel *targetCostModel = nullptr;
  /// The link between the meshes; unset: the slowest axis of either mesh.
  std::optional<AxisCostParams> transfer;

  bool isCrossMesh() const { return targetMesh.has_value(); }
  const Mesh &getTargetMesh() const { return targetMesh ? *targetMesh : mesh; }
};

/// The largest mesh the planner plans on: its bounds and point-to-point
/// exchanges enumerate devices, so planning time grows with the mesh (about
/// 5 s at 2^25 devices, minutes at 2^31). Larger meshes are an error that
/// says so, at once.
constexpr int64_t kMaxPlannedDevices = int64_t(1) << 24;

/// Checks everything planReshard relies on: shape and element size, both
/// layouts against the mesh and the rank, the cost model's mesh, the limit.
llvm::Error verifyRequest(const PlanRequest &request);

/// Counters for benchmarks and tests.
struct SearchStats {
  uint64_t expanded = 0;  // states whose moves were generated (summed)
  uint64_t generated = 0; // edges looked at
  uint64_t states = 0;    // distinct states stored (summed over calls)
};

/// Plans the reshard. Errors: an invalid request (message names the bad
/// part), or no plan within maxPeakBytes. Never crashes on bad input.
llvm::Expected<Plan> planReshard(const PlanRequest &request,
                                 SearchStats *stats = nullptr);

/// Replays `plan.steps` moves from request.source through the shape-aware
/// applyMove and recomputes every derived field (layouts, bytes, costs,
/// totals, peak, lower bound). Fails when a move does not apply, the last
/// layout is not request.target, or the peak exceeds maxPeakBytes. A cache
/// must call this on every plan it loads.
llvm::Error replayPlan(const PlanRequest &request, Plan &plan);

/// The lower bound every plan reports (bytes a device lacks, see
/// lib/Planner/Moves/ReportedLowerBound.h): the most bytes of its target block
/// one device does not already hold, times the smallest beta, plus the smallest
/// alpha when anything must move. The search uses a tighter admissible
/// bound internally (lib/Planner/Search/AdmissibleHeuristic.h).
llvm::Expected<double> planLowerBound(const PlanRequest &request);

/// Text that determines the plan: planner version, strategy, move set, cost
/// model fingerprints (per-axis parameters), meshes (sizes and devices),
/// transfer link, shape, element bytes, source, target and the peak limit.
/// Equal keys give equal plans, so a persistent cache can hash it.
std::string planCacheKey(const PlanRequest &request);

/// A tensor type written as on the command line: `1024x1024xf32`.
struct TensorSpec {
  std::vector<int64_t> shape;
  std::string elementType;
  int64_t elementBytes = 0;
};
/// Element types: f16, bf16, f32, f64, i1 (stored as a byte), i8, i16, i32,
/// i64. A scalar is just the element type (`f32`).
llvm::Expected<TensorSpec> parseTensorSpec(llvm::StringRef text);

} // namespace dist::planner

#endif // DIST_PLANNER_PLANNER_H
