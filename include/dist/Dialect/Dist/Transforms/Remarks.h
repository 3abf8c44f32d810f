//===- Remarks.h - the -dist-remarks flag shared by the passes --*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_REMARKS_H
#define DIST_DIALECT_DIST_TRANSFORMS_REMARKS_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"

namespace dist {
/// True when the tool was given -dist-remarks.
bool remarksRequested();

/// A pass's summary remark about the whole module (or whatever op the pass
/// runs on): at that op's location, but not attached to the op. MLIR prints
/// the op a diagnostic is attached to after it (-mlir-print-op-on-diagnostic,
/// on by default), which for a module is the whole program after every
/// summary line.
inline mlir::InFlightDiagnostic emitSummaryRemark(mlir::Operation *root) {
  return mlir::emitRemark(root->getLoc());
}
} // namespace dist

#endif // DIST_DIALECT_DIST_TRANSFORMS_REMARKS_H
