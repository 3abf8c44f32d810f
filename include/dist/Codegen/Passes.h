//===- Passes.h - code generation of the local compute ----------*- C++ -*-===//

#ifndef DIST_CODEGEN_PASSES_H
#define DIST_CODEGEN_PASSES_H

#include "dist/Codegen/Defaults.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace dist {

#define GEN_PASS_DECL
#include "dist/Codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dist/Codegen/Passes.h.inc"

} // namespace dist

#endif // DIST_CODEGEN_PASSES_H
