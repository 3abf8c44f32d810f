//===- RuntimeCalls.h - building calls into the dist runtime ----*- C++ -*-===//
//
// The C ABI of include/dist/Runtime/DistRuntime.h as seen from MLIR:
// declarations, constant tables, buffer pointers, mesh and group handles.
// Kept apart from the patterns so that a GPU target reuses it unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_CONVERSION_DISTTORUNTIME_RUNTIMECALLS_H
#define DIST_LIB_CONVERSION_DISTTORUNTIME_RUNTIMECALLS_H

#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include <map>
#include <vector>

namespace dist {

/// The runtime entry points compiled code calls, one per row of
/// RuntimeEntryPoints.def (next to this header).
enum class RuntimeEntry {
#define DIST_RT_ENTRY(Enum, Symbol, ...) Enum,
#include "RuntimeEntryPoints.def"
};

/// The C symbol of `entry` (its row's).
llvm::StringRef runtimeEntrySymbol(RuntimeEntry entry);

/// The runtime's element type code (DIST_RT_F16 ...), if it has one.
std::optional<int32_t> getRuntimeDType(mlir::Type elementType);
/// The runtime's reduction code (DIST_RT_SUM ...).
int32_t getRuntimeReduction(ReductionKind kind);

class RuntimeCalls {
public:
  explicit RuntimeCalls(mlir::ModuleOp module) : module(module) {}

  /// Declares (once) `func.func private @name(...)` at the module's top.
  mlir::func::FuncOp declare(llvm::StringRef name, mlir::FunctionType type);
  /// Calls `entry`, declared (once) with its row's C signature; the
  /// arguments must have exactly those types (an internal error otherwise).
  mlir::ValueRange call(mlir::OpBuilder &b, mlir::Location loc,
                        RuntimeEntry entry, mlir::ValueRange args);

  mlir::Value i64(mlir::OpBuilder &b, mlir::Location loc, int64_t value);
  mlir::Value i32(mlir::OpBuilder &b, mlir::Location loc, int32_t value);
  mlir::Value nullPtr(mlir::OpBuilder &b, mlir::Location loc);
  /// A pointer to a private constant array (deduplicated per module).
  mlir::Value constArray(mlir::OpBuilder &b, mlir::Location loc,
                         llvm::ArrayRef<int64_t> values);
  /// A private constant memref<1xT> holding `value` (host memory).
  mlir::Value constScalar(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::TypedAttr value);
  /// The address of a contiguous buffer's first element.
  mlir::Value bufferPtr(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value memref);
  /// The address of any memref's first element: its aligned pointer plus
  /// its offset (a view of a larger buffer).
  mlir::Value elementPtr(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value memref);
  /// The address `elements` (an index) elements past that first element.
  mlir::Value elementPtr(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value memref, mlir::Value elements);

  /// distRtMeshCreate(sizes, devices): the runtime caches the handle.
  mlir::Value mesh(mlir::OpBuilder &b, mlir::Location loc, MeshOp mesh);
  /// distRtGroup(mesh, axes).
  mlir::Value group(mlir::OpBuilder &b, mlir::Location loc, mlir::Value mesh,
                    llvm::ArrayRef<int64_t> axes);
  /// This device's index in the group over `axes` (first axis major), from
  /// its mesh coordinates: local, no communication.
  mlir::Value groupIndex(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value mesh, MeshOp meshOp,
                         llvm::ArrayRef<int64_t> axes);

private:
  mlir::ModuleOp module;
  std::string uniqueName(llvm::StringRef prefix);
  std::map<std::vector<int64_t>, std::string> arrays;
  unsigned nextArray = 0;
};

} // namespace dist

#endif // DIST_LIB_CONVERSION_DISTTORUNTIME_RUNTIMECALLS_H
