//===- SplitStages.h - compute on several meshes as stages -----*- C++ -*-===//
//
// Semantics §3c, stage-local compute: a function whose compute spans several
// meshes is cut into stages, each the ops of one mesh that follow one another
// in program order, outlined into a private function of its own
// (`@<function>_stage<k>`) that dist-partition then partitions on that mesh
// like any other. What is left of the function is the calls, the cross-mesh
// reshards between them (planned by dist-lower-reshard, §3a) and the return.
//
// A function that computes on one mesh alone, calls nothing and whose mesh
// names its devices is marked `dist.stage = @mesh`: its calls run only on
// that mesh's ranks (convert-dist-to-runtime guards them), so a rank outside
// a stage runs none of its compute.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_SPLITSTAGES_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_SPLITSTAGES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace dist::partition {

/// One stage cut out of a function: the new function and how many ops it
/// took.
struct Stage {
  mlir::func::FuncOp func;
  mlir::FlatSymbolRefAttr mesh;
  unsigned ops = 0;
};

/// Cuts `func` into stages when its compute uses tensors on several meshes
/// (nothing to do otherwise: `stages` stays empty). An op whose own tensors
/// lie on several meshes (other than a dist.reshard between them), or a
/// loop whose body does, is a located error.
mlir::LogicalResult splitStages(mlir::func::FuncOp func,
                                mlir::SymbolTable &symbols,
                                llvm::SmallVectorImpl<Stage> &stages);

/// Marks `func` with `dist.stage = @mesh` when every tensor it touches lies
/// on one mesh that names its devices and it calls no function.
void markStageFunction(mlir::func::FuncOp func,
                       mlir::SymbolTableCollection &symbols);

} // namespace dist::partition

#endif // DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_SPLITSTAGES_H
