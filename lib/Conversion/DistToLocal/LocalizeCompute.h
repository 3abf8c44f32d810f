//===- LocalizeCompute.h - per-device partitioned compute -------*- C++ -*-===//
//
// After dist-partition every compute op works on sharded tensors, with every
// operand laid out so that the op runs on each device's block. Its
// partitioning model (dist::PartitionableOpInterface) builds that per-device
// form: usually the same op on the local types; where the op depends on
// positions (linalg.index, padded reductions, slices) the model adds the
// device's offsets. Nothing here decides a layout: they are in the types.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_CONVERSION_DISTTOLOCAL_LOCALIZECOMPUTE_H
#define DIST_LIB_CONVERSION_DISTTOLOCAL_LOCALIZECOMPUTE_H

#include "dist/Dialect/Dist/Interfaces/PartitionableOpInterface.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace dist {

/// Compute ops dist-localize rewrites (besides the dist ops): those with a
/// partitioning model.
bool isLocalizableCompute(mlir::Operation *op);

/// Rebuilds every op with a partitioning model through its `localize`, and
/// structured control flow (scf.for, scf.yield) on the local types.
void populateComputeLocalizationPatterns(const mlir::TypeConverter &converter,
                                         const LocalizeContext &context,
                                         mlir::RewritePatternSet &patterns,
                                         mlir::ConversionTarget &target);

} // namespace dist

#endif
