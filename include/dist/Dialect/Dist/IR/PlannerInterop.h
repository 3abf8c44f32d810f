//===- PlannerInterop.h - dist IR <-> planner data --------------*- C++ -*-===//
//
// The planner (dist/Planner) is MLIR-free and speaks in mesh-axis indices; the
// IR speaks in symbols and axis names. These helpers translate, reporting
// unknown meshes and axes as located diagnostics. Move semantics live in the
// planner only, so the op verifiers and dist-lower-reshard can never disagree.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_PLANNERINTEROP_H
#define DIST_DIALECT_DIST_IR_PLANNERINTEROP_H

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"
#include "dist/Planner/Move.h"

#include "mlir/IR/SymbolTable.h"

namespace dist {

/// Resolves the mesh a sharding refers to, from the point of view of `user`.
mlir::FailureOr<MeshOp> lookupMesh(mlir::Operation *user,
                                   mlir::FlatSymbolRefAttr meshName,
                                   mlir::SymbolTableCollection &symbolTable);

/// The planner's view of a verified `dist.mesh`.
mlir::FailureOr<planner::Mesh>
getPlannerMesh(MeshOp mesh,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// Translates axis names to indices; unknown axes are errors.
mlir::FailureOr<planner::Layout>
getPlannerLayout(ShardingAttr sharding, MeshOp mesh,
                 llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

mlir::FailureOr<llvm::SmallVector<unsigned>>
getAxisIndices(mlir::ArrayAttr axisNames, MeshOp mesh,
               llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

/// A move from one sharding to another, in planner terms. `targetMesh` is
/// `mesh` unless the target sharding names another mesh (a cross-mesh
/// reshard, semantics §3a).
struct ResolvedShardings {
  MeshOp mesh;
  planner::Mesh plannerMesh;
  planner::Layout source, target;
  MeshOp targetMesh;
  std::optional<planner::Mesh> targetPlannerMesh; // set when cross-mesh

  bool isCrossMesh() const { return targetPlannerMesh.has_value(); }
  const planner::Mesh &getTargetPlannerMesh() const {
    return targetPlannerMesh ? *targetPlannerMesh : plannerMesh;
  }
};
/// Resolves the meshes of `source` and `target` and translates both
/// layouts; errors are reported on `user`. With `allowCrossMesh` false, the
/// two must be on the same mesh.
mlir::FailureOr<ResolvedShardings>
resolveShardings(mlir::Operation *user, ShardingAttr source,
                 ShardingAttr target, mlir::SymbolTableCollection &symbolTable,
                 bool allowCrossMesh = false);

/// Builds the attribute for a planner layout on `mesh`.
ShardingAttr getShardingAttr(mlir::MLIRContext *context, MeshOp mesh,
                             const planner::Layout &layout);

ReductionKind toDialect(planner::ReductionKind kind);
planner::ReductionKind toPlanner(ReductionKind kind);

} // namespace dist

#endif // DIST_DIALECT_DIST_IR_PLANNERINTEROP_H
