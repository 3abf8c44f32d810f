//===- Program.h - load, lower, JIT and call a dist program -----*- C++ -*-===//
//
// What dist-run and dist-reshard-bench (tools/dist-reshard-bench) share:
// reading the signature of a global-view entry function (mesh, layout,
// global shape and element type of every argument and result, semantics
// §1-§2), lowering the module with
// dist::buildDistToLLVMPipeline, JIT-compiling the result with MLIR's
// ExecutionEngine, and calling the entry with the expanded memref descriptors
// of include/dist/Conversion/Pipelines.h.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_PROGRAM_H
#define DIST_TOOLS_DIST_RUN_PROGRAM_H

#include "common/Elements.h"
#include "common/PackedCall.h"

#include "dist/Conversion/Pipelines.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace dist::run {

/// One argument or result of the entry as the global-view program declares
/// it, recorded before lowering erases the layouts.
struct TensorSignature {
  std::string meshName;
  planner::Mesh mesh;
  planner::Layout layout;
  std::vector<int64_t> globalShape;
  ElementKind element;
  /// The MLIR type as written, for messages.
  std::string typeText;

  /// The padded local shape every device holds (semantics §2).
  std::vector<int64_t> localShape() const;
  int64_t localElements() const;
  int64_t localBytes() const { return localElements() * elementBytes(element); }
};

struct EntrySignature {
  std::string name;
  std::vector<TensorSignature> arguments;
  std::vector<TensorSignature> results;

  /// Every distinct mesh the entry uses, by symbol name.
  std::vector<std::pair<std::string, planner::Mesh>> meshes() const;
};

/// Registers the dialects of global-view programs and of the lowered module,
/// and the LLVM IR translations the JIT needs.
void registerDistRunDialects(mlir::DialectRegistry &registry);

/// Parses `path` (text or bytecode). Diagnostics go to the context's handler.
mlir::OwningOpRef<mlir::ModuleOp> parseProgram(llvm::StringRef path,
                                               mlir::MLIRContext &context);
mlir::OwningOpRef<mlir::ModuleOp> parseProgramText(llvm::StringRef text,
                                                   mlir::MLIRContext &context);

/// The public functions of `module` that have a body, in order.
std::vector<std::string> publicFunctions(mlir::ModuleOp module);

/// Finds the entry (`entryName`, or the only public function when empty) and
/// records its signature. Fails with a message naming the problem: no or
/// several candidates, a private or bodiless function, an argument or result
/// that is not a sharded tensor, an element type dist-run cannot feed.
llvm::Expected<EntrySignature> readEntrySignature(mlir::ModuleOp module,
                                                  llvm::StringRef entryName);

/// Runs the whole dist-to-LLVM pipeline on `module`. Diagnostics go to the
/// context's handler.
mlir::LogicalResult lowerToLLVM(mlir::ModuleOp module,
                                const DistToLLVMPipelineOptions &options);
/// The same pipeline in two halves. planProgram runs dist-partition and the
/// reshard lowering: the module stays the global view, with a layout on
/// every tensor and every reshard planned, so what each rank will hold can
/// be read off it. lowerPlannedToLLVM runs the rest.
/// With `modelledSeconds`, also returns the modelled cost of every reshard
/// of the program (dist-lower-reshard's summary, -dist-remarks' total).
mlir::LogicalResult planProgram(mlir::ModuleOp module,
                                const DistToLLVMPipelineOptions &options,
                                double *modelledSeconds = nullptr);
mlir::LogicalResult
lowerPlannedToLLVM(mlir::ModuleOp module,
                   const DistToLLVMPipelineOptions &options);

/// Checks that the lowered module has `llvm.func @name` taking the expanded
/// descriptors the calling convention promises for `signature`, so that a
/// mismatch is an error instead of a call with a wrong argument list.
llvm::Error checkLoweredEntry(mlir::ModuleOp lowered,
                              const EntrySignature &signature);

/// Writes the lowered module as bytecode, and reads it back.
llvm::Error writeBytecode(mlir::ModuleOp module, llvm::StringRef path);

/// JIT-compiles a lowered module. `optLevel` (0-3) drives both the LLVM IR
/// optimisation pipeline and code generation. `symbols` (may be null) maps
/// names to addresses that take precedence over the process's own symbols.
llvm::Expected<std::unique_ptr<mlir::ExecutionEngine>> createExecutionEngine(
    mlir::ModuleOp lowered, unsigned optLevel,
    llvm::function_ref<llvm::orc::SymbolMap(llvm::orc::MangleAndInterner)>
        symbols = nullptr);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_PROGRAM_H
