//===- Passes.h - dist conversion passes ------------------------*- C++ -*-===//

#ifndef DIST_CONVERSION_PASSES_H
#define DIST_CONVERSION_PASSES_H

#include "dist/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace dist {

/// The largest mesh on which dist-localize lowers a permute or a
/// redistribute: both become tables with an entry per device (or per piece
/// exchanged), so compile time and IR size grow with the mesh. Larger meshes
/// are a located error (docs/compiler.md). Collectives over mesh axes have
/// no such tables and no such limit.
constexpr int64_t kMaxTableDevices = int64_t(1) << 20;

#define GEN_PASS_DECL
#include "dist/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dist/Conversion/Passes.h.inc"

} // namespace dist

#endif // DIST_CONVERSION_PASSES_H
