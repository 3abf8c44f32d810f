//===- FunctionError.h - errors about a whole function ----------*- C++ -*-===//
//
// An error about a whole function, at its location and worded as
// Operation::emitOpError words it ("'func.func' op ..."), but without the
// function attached: MLIR prints the operation a diagnostic is attached to
// (-mlir-print-op-on-diagnostic, on by default), and for a function that is
// the whole program, printed again under one line of error.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_FUNCTIONERROR_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_FUNCTIONERROR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"

namespace dist::partition {

inline mlir::InFlightDiagnostic emitFunctionError(mlir::func::FuncOp func,
                                                  const llvm::Twine &message) {
  return mlir::emitError(func.getLoc())
         << "'" << func->getName() << "' op " << message;
}

} // namespace dist::partition

#endif // DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_FUNCTIONERROR_H
