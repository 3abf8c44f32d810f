//===- SharedObject.h - compile a lowered program once ----------*- C++ -*-===//
//
// dist-run compiles the lowered module (LLVM dialect) once, in the front
// process, into a shared object that every rank loads with dlopen: the
// ranks compile nothing, and need neither MLIR nor LLVM (dist-run-worker).
// The shared object exports one symbol, the entry's packed wrapper
// `void(void **)` (common/PackedCall.h); the distRt* functions it calls
// resolve from the loading process (which links libdist_runtime.so).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_SHAREDOBJECT_H
#define DIST_TOOLS_DIST_RUN_SHAREDOBJECT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace dist::run {

struct SharedObjectOptions {
  /// LLVM's optimisation level, 0-3 (IR passes and code generation).
  unsigned optLevel = 2;
  /// The CPU to generate code for (an LLVM CPU name such as x86-64-v3);
  /// empty: this host's CPU and features.
  std::string cpu;
};

/// Whether LLVM knows `cpu` as a CPU of this machine's architecture (what
/// SharedObjectOptions::cpu may name).
bool isKnownCpu(llvm::StringRef cpu);

/// The name of the packed wrapper of `entry` in the shared object.
std::string packedSymbol(llvm::StringRef entry);

/// Translates `lowered` to LLVM IR, adds the packed wrapper of `entry`,
/// optimises and compiles it (position-independent) to `objectPath`, and
/// links that into `libraryPath` with the C compiler dist was configured
/// with (DIST_RUN_CC in the environment overrides it), with compiler-rt's
/// builtins (half and bfloat16 conversions) when they were found at
/// configure time. Only the packed wrapper is exported.
llvm::Error compileSharedObject(mlir::ModuleOp lowered, llvm::StringRef entry,
                                const SharedObjectOptions &options,
                                llvm::StringRef objectPath,
                                llvm::StringRef libraryPath);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_SHAREDOBJECT_H
