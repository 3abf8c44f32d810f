//===- LocalizeCompute.h - the per-device form of partitioned compute -*- C++ -*-===//
//
// After dist-partition every compute op works on sharded tensors, with every
// operand laid out so that the op runs unchanged on each device's block:
// the local op is the same op on the local padded types. Two things remain
// for dist-localize, and neither is a decision:
//
//  - padding must never take part in a reduction: where a reduction loop is
//    split unevenly, the op (generalized to linalg.generic) skips the
//    iterations past the end of this device's block, leaving its
//    accumulator as it was, so padding acts as the combiner's identity
//    whatever the body computes;
//  - the types: every linalg op and tensor.empty is rebuilt on local types.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_CONVERSION_DISTTOLOCAL_LOCALIZECOMPUTE_H
#define DIST_LIB_CONVERSION_DISTTOLOCAL_LOCALIZECOMPUTE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace dist {

/// Compute ops dist-localize rewrites (besides the dist ops).
bool isLocalizableCompute(mlir::Operation *op);

/// Global view, before retyping: masks the padded iterations of unevenly
/// split reduction loops.
mlir::LogicalResult maskPaddedReductions(mlir::ModuleOp module);

/// Rebuilds linalg ops and tensor.empty on the converted (local) types.
void populateComputeLocalizationPatterns(const mlir::TypeConverter &converter,
                                         mlir::RewritePatternSet &patterns);

} // namespace dist

#endif
