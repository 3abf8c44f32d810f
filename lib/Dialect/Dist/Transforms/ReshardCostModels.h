//===- ReshardCostModels.h - per-mesh cost models ---------------*- C++ -*-===//
//
// The passes that price reshards (dist-lower-reshard plans them,
// dist-partition chooses layouts by their cost) read the same options in the
// same order of precedence: the defaults of semantics §3, the topology file's
// default, the mesh's own `cost`, the file's entry for the axis, then the
// per-axis alpha/beta overrides. This class parses those options once and
// builds (and keeps) one cost model per mesh, so the two passes can never price
// a reshard differently.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_RESHARDCOSTMODELS_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_RESHARDCOSTMODELS_H

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/Planner/CostModel.h"
#include "dist/Planner/Mesh.h"
#include "dist/Planner/PlanCache.h"
#include "dist/Planner/Planner.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <memory>
#include <optional>
#include <string>

namespace dist {

class ReshardCostModels {
public:
  /// Parses the options; errors are reported through `emitError` and name
  /// `passName`.
  mlir::LogicalResult
  initialize(llvm::StringRef passName, llvm::StringRef topologyFile,
             llvm::ArrayRef<std::string> alpha,
             llvm::ArrayRef<std::string> beta,
             llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

  /// `topology=auto`: with the whole module in view, the installed
  /// resolver's file for its meshes (TopologyResolver.h); errors on `root`.
  /// Nothing to do for a file or no topology.
  mlir::LogicalResult resolveAuto(mlir::Operation *root);

  /// With the whole module in view, an override for an axis no mesh has is
  /// a typo: reports it on `root`.
  mlir::LogicalResult checkAxesExist(mlir::Operation *root) const;

  /// The cost model of `mesh` (built on first use, then kept).
  mlir::FailureOr<const planner::AlphaBetaCostModel *>
  get(MeshOp mesh, const planner::Mesh &plannerMesh);

  /// The planner's request for `reshard` under these models: both layouts
  /// resolved, each mesh's model and, across meshes, the transfer (semantics
  /// §3, §3a), and in `resolved` (if given) its meshes and layouts. Errors
  /// are reported at the reshard.
  mlir::FailureOr<planner::PlanRequest>
  requestFor(ReshardOp reshard, mlir::SymbolTableCollection &symbolTable,
             std::optional<ResolvedShardings> *resolved = nullptr);

  /// The link between two meshes from the topology file's "transfer", if
  /// it has one (else the planner's default, semantics §3a).
  std::optional<planner::AxisCostParams> transfer() const {
    return fileTopology ? fileTopology->transfer : std::nullopt;
  }

  /// The device compute is priced on (semantics §3b, §6a): the topology
  /// file's, else the default device.
  planner::DeviceParams device() const {
    return fileTopology ? fileTopology->effectiveDevice()
                        : planner::DeviceParams::defaults();
  }

private:
  /// Reads and parses the topology file.
  mlir::LogicalResult
  loadFile(llvm::StringRef topologyFile,
           llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

  std::string passName;
  /// `topology=auto`, not resolved yet.
  bool autoPending = false;
  std::optional<planner::Topology> fileTopology;
  std::map<std::string, double> alphaOverrides, betaOverrides;
  llvm::DenseMap<mlir::Operation *,
                 std::shared_ptr<planner::AlphaBetaCostModel>>
      models;
};

/// The context's plan cache for `directory` (empty: memory only); warnings
/// about its entries become unlocated MLIR warnings.
planner::PlanCache &getPlanCache(mlir::MLIRContext *context,
                                 llvm::StringRef directory);

/// Bytes per element as the runtime stores them (i1 takes a byte).
std::optional<int64_t> getElementBytes(mlir::Type type);

} // namespace dist

#endif // DIST_LIB_DIALECT_DIST_TRANSFORMS_RESHARDCOSTMODELS_H
