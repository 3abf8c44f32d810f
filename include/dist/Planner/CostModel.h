//===- CostModel.h - Pricing collective steps (semantics §3) ----*- C++ -*-===//
//
// The planner prices each step through this interface, so that other models
// (a measured table, a hierarchical node/rail model) can replace the default
// ring alpha-beta model without touching the search. A model is bound to one
// mesh because its parameters are per mesh axis.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PLANNER_COSTMODEL_H
#define DIST_PLANNER_COSTMODEL_H

#include "dist/Planner/Mesh.h"
#include "dist/Planner/Move.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace dist::planner {

/// semantics §3 defaults: an 8-GPU NVLink node.
constexpr double kDefaultAlpha = 1e-5;
constexpr double kDefaultBeta = 1.0 / 370e9;

struct AxisCostParams {
  double alpha = kDefaultAlpha; // seconds per message step
  double beta = kDefaultBeta;   // seconds per byte
  bool operator==(const AxisCostParams &o) const {
    return alpha == o.alpha && beta == o.beta;
  }
};

/// One move kind's own parameters on one axis (semantics §3b, "ops"): a
/// field left out is the axis's.
struct MoveCostOverride {
  std::optional<double> alpha, beta;
  bool operator==(const MoveCostOverride &o) const {
    return alpha == o.alpha && beta == o.beta;
  }
};

/// Per-axis parameters by axis name, from a topology file or the command
/// line. Axes not listed use `defaults`.
/// One device (semantics §3b): peak flop/s by element type, memory
/// bandwidth (bytes/s) and memory (bytes; 0: unlimited).
struct DeviceParams {
  /// By element type ("bf16", "f16", "f32", "f64", "i1" ... "i64"); a type
  /// left out runs at the largest rate given.
  std::map<std::string, double> flops;
  double memBandwidth = 0, memory = 0;

  /// flop/s on elements of `elementType` (its MLIR spelling; `index` is
  /// i64, other types take the largest rate).
  double flopsFor(llvm::StringRef elementType) const;
  /// The element types a `flops` object may name.
  static llvm::ArrayRef<llvm::StringRef> elementTypes();
  /// The default device (semantics §3b): one H100 SXM at 70% of its peak,
  /// memory unlimited. Compute is never free.
  static DeviceParams defaults();
};

struct Topology {
  AxisCostParams defaults;
  /// The device, when the file describes it (fields it leaves out are the
  /// default device's, semantics §3b).
  std::optional<DeviceParams> device;
  /// The device compute is priced on: the file's, else the default one.
  DeviceParams effectiveDevice() const {
    return device ? *device : DeviceParams::defaults();
  }
  std::map<std::string, AxisCostParams> axes;
  /// The link between two meshes (semantics §3a), when given.
  std::optional<AxisCostParams> transfer;
  /// Per axis name, the move kinds (never local ones) priced with their own
  /// parameters on that axis (semantics §3b).
  std::map<std::string, std::map<MoveKind, MoveCostOverride>> axisOps;
  /// Seconds per byte of local copying (semantics §3b "local"); 0 when the
  /// file gives none: local work is then free, as in semantics §3.
  double localBeta = 0;

  /// Parses `{"axes": {"x": {"alpha": 1e-5, "beta": 2.7e-12}, ...}}`. Either
  /// field of an axis may be left out (the default is used). An optional
  /// top-level "default": {"alpha": ..., "beta": ...} replaces the defaults.
  /// Values must be finite and >= 0; unknown keys are errors (a typo must
  /// not silently fall back to defaults).
  /// An optional top-level "transfer": {"alpha": ..., "beta": ...} gives
  /// the link between two meshes (cross-mesh reshards). An optional
  /// "device": {"flops": F or {"bf16": F, ...}, "mem_bw": B, "memory":
  /// BYTES} describes one device (each field optional, finite and >= 0,
  /// flops and mem_bw > 0; left out: the default device's).
  /// An axis may carry "ops": {KIND: {"alpha": ..., "beta": ...}} for the
  /// non-local move kinds (semantics §3b); "local": {"beta": ...} prices
  /// local copies; "calibration" (dist-calibrate's provenance) is read past.
  static llvm::Expected<Topology> parseJSON(llvm::StringRef text);
  /// The axes of `mesh` only (a cross-mesh topology names the axes of both
  /// meshes); the defaults and the transfer link are kept.
  Topology restrictedTo(const Mesh &mesh) const;
  /// Applies `x=1e-5,y=2e-5` to the alpha (or beta) of the named axes.
  llvm::Error setFromList(llvm::StringRef list, bool alpha);
};

class CostModel {
public:
  explicit CostModel(Mesh mesh) : mesh(std::move(mesh)) {}
  virtual ~CostModel();

  const Mesh &getMesh() const { return mesh; }
  virtual llvm::StringRef getName() const = 0;

  /// Seconds for one collective step of `kind` (never a local move) over
  /// the product group of `axes` (all of size >= 1; for permute, the axes
  /// whose coordinate changes), where every device holds `bytesBefore`
  /// bytes before the step.
  virtual double collectiveCost(MoveKind kind, llvm::ArrayRef<unsigned> axes,
                                int64_t bytesBefore) const = 0;

  /// The link a point-to-point message uses between two devices whose
  /// coordinates differ on `axes` (semantics §3 redistribute): alpha and beta
  /// of one message of that class. Empty `axes`: the same device.
  virtual AxisCostParams
  pointToPointLink(llvm::ArrayRef<unsigned> axes) const = 0;
  /// The slowest link of the mesh (largest alpha, largest beta over its axes
  /// of size > 1): the default `transfer` link to another mesh (semantics §3a).
  virtual AxisCostParams slowestLink() const = 0;
  /// The beta every byte crossing `axis` pays at least: a step in which one
  /// device receives r bytes from devices that differ from it on `axis`
  /// costs at least minLatency() + axisSecondsPerByte(axis) * r. The
  /// reported lower bound prices the bytes that must cross each axis with
  /// it. Returning minSecondsPerByte() is always safe.
  virtual double axisSecondsPerByte(unsigned axis) const {
    (void)axis;
    return minSecondsPerByte();
  }

  /// Bounds the search and the plan's lower bound rely on. They must hold
  /// for every collective step whose group has more than one device, where
  /// `received` is the number of bytes one device receives in it:
  ///   cost >= minLatency() + minSecondsPerByte() * received
  ///   cost >= sum of axisLatencyBound(a) over the group's axes
  ///           + minSecondsPerByte() * received
  /// (the second for all_gather, all_to_all, reduce_scatter and all_reduce,
  /// not for permute). Returning 0 is always safe, only slower.
  virtual double minLatency() const = 0;
  virtual double minSecondsPerByte() const = 0;
  virtual double axisLatencyBound(unsigned axis) const {
    (void)axis;
    return 0;
  }

  /// What a collective over the group `axes` (all_gather, all_to_all,
  /// reduce_scatter or all_reduce) costs at least on top of the sum of
  /// axisLatencyBound over its axes and minSecondsPerByte() * received.
  /// The heuristic uses it for steps that must move several axes at once.
  /// Returning 0 is always safe.
  virtual double groupLatencyExcess(llvm::ArrayRef<unsigned> axes) const {
    (void)axes;
    return 0;
  }

  /// True when an all_reduce over a group costs at least twice the sum of
  /// axisLatencyBound over its axes (plus minSecondsPerByte() * received),
  /// as a reduce_scatter followed by an all_gather would. The heuristic then
  /// charges an axis that must be reduced and end outside the target's dims
  /// two latencies. False is safe.
  virtual bool allReducePaysLatencyTwice() const { return false; }

  /// True when, on a dim whose extent divides evenly, a reduce_scatter over
  /// a group with two or more axes of size > 1 always costs strictly more
  /// than the same reduce-scatters one axis at a time. The search then skips
  /// such groups. False (the safe answer) unless a model proves it (the
  /// ring model: every alpha > 0 and free local copies, since a sequence
  /// may pack its input once per step, semantics §3b).
  virtual bool sequentialReduceScatterIsCheaper() const { return false; }

  /// True when every permute that changes at least one coordinate costs the
  /// same for a given buffer size, whichever axes change. The search then
  /// generates the permutes out of a class of layouts (equal shard counts
  /// and partial axes) once, from its cheapest member. False is safe.
  virtual bool permuteCostIsUniform() const { return false; }

  /// True when two all_gathers on different dims, or two reduce_scatters on
  /// different dims, cost the same in either order whenever each changes
  /// the buffer by exactly its group size. The search then tries one order.
  /// False is safe.
  virtual bool sameKindStepsCommute() const { return false; }

  /// True when swapping axes `a` and `b` (of equal size) in any step never
  /// changes its cost. The search then treats layouts that differ only by
  /// such a swap, among axes the target treats alike, as one state. False
  /// is safe.
  virtual bool axesInterchangeable(unsigned a, unsigned b) const {
    (void)a;
    (void)b;
    return false;
  }

  /// True when collectiveCost depends on the set of axes only, never on the
  /// order they are listed in. The search then prices groups of axes
  /// without knowing their order
  /// (lib/Planner/Search/PatternDatabaseHeuristic.h). False is safe.
  virtual bool groupCostIgnoresAxisOrder() const { return false; }

  /// Seconds per byte a device copies within its own memory (semantics
  /// §3b "local"). 0, the default, makes local work free as in semantics §3.
  virtual double localSecondsPerByte() const { return 0; }
  double localCost(int64_t bytes) const {
    return localSecondsPerByte() * double(bytes);
  }
  /// True when copying a byte locally never costs more than sending it in
  /// any collective or exchange (localSecondsPerByte() <= the smallest beta
  /// of any move on any axis of size > 1). The exact search then keeps two
  /// rules that rest on slices being no dearer than moves: the axes only
  /// the target holds partial become partial in the last step, and a
  /// replicated axis never becomes partial only to be reduced again
  /// (docs/planner.md). False makes the search offer those steps too.
  bool localCopiesNeverDearerThanSending() const {
    return localSecondsPerByte() <= minSecondsPerByte();
  }

  /// Appends a stable text that identifies the model and every parameter it
  /// uses for this mesh (the plan cache keys on it).
  virtual void appendFingerprint(std::string &out) const = 0;

  /// The cost of one step that is not a redistribute (semantics §3, §3b):
  /// its collective's cost (0 for local moves and for a permute that
  /// changes no coordinate) plus the local copying of `localBytes` bytes
  /// (localStepBytes in Move.h says how many a move writes).
  double stepCost(const Move &move, int64_t bytesBefore,
                  int64_t localBytes) const;

protected:
  Mesh mesh;
};

/// The ring model of semantics §3, with the per-move-kind parameters of §3b.
/// For a step over several axes, p is the product of their sizes and alpha,
/// beta are the maxima over them of that kind's parameters.
///   all_gather          (p-1) a + (p-1) n b
///   all_to_all          (p-1) a + (p-1)/p n b
///   reduce_scatter      (p-1) a + (p-1)/p n b
///   all_reduce          2(p-1) a + 2(p-1)/p n b
///   permute             max a + n max b   (over the axes that change)
class AlphaBetaCostModel final : public CostModel {
public:
  /// Fails when the topology names an axis the mesh does not have.
  static llvm::Expected<AlphaBetaCostModel>
  create(const Mesh &mesh, const Topology &topology = {});

  llvm::StringRef getName() const override { return "alpha-beta-ring"; }
  double collectiveCost(MoveKind kind, llvm::ArrayRef<unsigned> axes,
                        int64_t bytesBefore) const override;
  double minLatency() const override { return minAlpha; }
  double minSecondsPerByte() const override { return minBeta; }
  /// Maxima of redistribute's alpha and beta over `axes`.
  AxisCostParams pointToPointLink(llvm::ArrayRef<unsigned> axes) const override;
  /// Over redistribute's parameters: the transfer is point-to-point too.
  AxisCostParams slowestLink() const override;
  /// The smallest beta of any move kind on the axis.
  double axisSecondsPerByte(unsigned axis) const override {
    return axis < minBetaOfAxis.size() ? minBetaOfAxis[axis] : minBeta;
  }
  /// (p - 1) * the smallest alpha of the four collectives on the axis: a
  /// group's latency term (P - 1) * max alpha is at least the sum of
  /// (p_a - 1) * alpha_a over its axes, as P - 1 >= sum (p_a - 1).
  double axisLatencyBound(unsigned axis) const override;
  bool sequentialReduceScatterIsCheaper() const override;
  /// 2 (P - 1) max alpha >= 2 sum of (p_a - 1) alpha_a.
  bool allReducePaysLatencyTwice() const override { return true; }
  /// (P - 1 - sum (p_a - 1)) * max alpha: a step's (P - 1) max alpha is at
  /// least sum (p_a - 1) alpha_a plus that.
  double groupLatencyExcess(llvm::ArrayRef<unsigned> axes) const override;
  /// True when all axes of size > 1 share one alpha and one beta.
  bool permuteCostIsUniform() const override;
  /// Equal size, alpha and beta.
  bool axesInterchangeable(unsigned a, unsigned b) const override;
  /// Gathering groups of p then q devices costs (p-1) n b1 + (q-1) p n b2,
  /// the other order (q-1) n b2 + (p-1) q n b1: equal exactly when b1 == b2
  /// (alpha terms add up the same either way); reduce-scatters likewise. So
  /// true when all axes of size > 1 share one beta and local copies are
  /// free (a gather's own-block copy is n then p n, or n then q n).
  bool sameKindStepsCommute() const override;
  /// p is a product and alpha, beta are maxima: order-free.
  bool groupCostIgnoresAxisOrder() const override { return true; }
  double localSecondsPerByte() const override { return localBeta; }
  void appendFingerprint(std::string &out) const override;

  /// The axis's own parameters (those of a kind without "ops").
  const AxisCostParams &getParams(unsigned axis) const { return params[axis]; }
  /// What a move of `kind` pays on the axis.
  const AxisCostParams &getParams(unsigned axis, MoveKind kind) const {
    return kindParams[axis][static_cast<unsigned>(kind)];
  }

private:
  static constexpr size_t kNumKinds = std::size(kAllMoveKinds);
  using KindParams = std::array<AxisCostParams, kNumKinds>;
  AlphaBetaCostModel(Mesh mesh, std::vector<AxisCostParams> params,
                     std::vector<KindParams> kindParams, double localBeta);
  /// The largest alpha and beta of `kind` over `axes`.
  AxisCostParams maxima(MoveKind kind, llvm::ArrayRef<unsigned> axes) const;
  /// True when every axis of size > 1 has the same parameters for `kind`
  /// (only beta with `betaOnly`).
  bool uniformOverAxes(MoveKind kind, bool betaOnly) const;
  std::vector<AxisCostParams> params; // by mesh axis index
  std::vector<KindParams> kindParams; // by mesh axis index, then kind
  std::vector<double> minBetaOfAxis;  // over the non-local kinds
  double minAlpha = 0, minBeta = 0;   // over axes of size > 1 and kinds
  double localBeta = 0;               // semantics §3b "local"
};

/// Shortest text that reads back as the same double (std::to_chars), e.g.
/// 1.2e-05, 0.5, 4096.
std::string formatDouble(double value);

} // namespace dist::planner

#endif // DIST_PLANNER_COSTMODEL_H
