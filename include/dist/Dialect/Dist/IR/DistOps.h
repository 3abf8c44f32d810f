//===- DistOps.h - dist operations ------------------------------*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_IR_DISTOPS_H
#define DIST_DIALECT_DIST_IR_DISTOPS_H

#include "dist/Dialect/Dist/IR/DistAttrs.h"
#include "dist/Dialect/Dist/IR/DistCollectives.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dist/Dialect/Dist/IR/DistOps.h.inc"

namespace dist {
/// The debug label of dist.reshard's canonicalization (composing a chain
/// of reshards into one).
inline constexpr llvm::StringLiteral kComposeReshardsLabel =
    "dist-compose-reshards";
} // namespace dist

#endif // DIST_DIALECT_DIST_IR_DISTOPS_H
