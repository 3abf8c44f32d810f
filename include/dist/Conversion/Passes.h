//===- Passes.h - dist conversion passes ------------------------*- C++ -*-===//

#ifndef DIST_CONVERSION_PASSES_H
#define DIST_CONVERSION_PASSES_H

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/Transforms/PassOptionValues.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace dist {

/// The largest mesh on which dist-localize lowers a redistribute (a table
/// with an entry per piece exchanged, so compile time and IR size grow with
/// the mesh); larger meshes are a located error (docs/compiler.md). A
/// permute carries its layouts instead of a table past this size (or past
/// the pass's permute-table-devices), and collectives over mesh axes have no
/// tables at all: neither has such a limit.
constexpr int64_t kMaxTableDevices = int64_t(1) << 20;

#define GEN_PASS_DECL
#include "dist/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dist/Conversion/Passes.h.inc"

} // namespace dist

#endif // DIST_CONVERSION_PASSES_H
