//===- PartialAlgebra.h - where partial values flow -------------*- C++ -*-===//
//
// A value that is `partial = KIND` over some axes is held as one piece per
// device; its global value is the KIND-reduction of the pieces. An op may
// consume such pieces directly, and produce a partial result over the same
// axes, exactly when reducing after the op equals the op after reducing:
//
//   sum/avg: the result must be linear in the partial operands (add, sub,
//            neg of partial values; mul/div by values replicated over the
//            axes); avg also allows adding a replicated value.
//   max/min: the result must be a monotone non-decreasing function of one
//            partial value per element (exp, tanh, add of a replicated
//            value, max/min with a replicated value, max (for max) or min
//            (for min) of two partial values, widening/narrowing casts).
//   prod:    products of partial values only.
//
// The analysis classifies each value of a linalg body by abstract
// interpretation; docs/partitioning.md has the full table, and the unit test
// checks every entry against a reference reduction.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_PARTIALALGEBRA_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_PARTIALALGEBRA_H

#include "dist/Planner/Layout.h"

#include "mlir/IR/Block.h"
#include "llvm/ADT/ArrayRef.h"

#include <optional>

namespace dist::partition {

/// How a scalar value of a body depends on the partial operands.
enum class Flow {
  /// Independent of them (the same on every device of the partial group).
  Replicated,
  /// Partial of the kind under analysis: reducing it gives the true value.
  Partial,
  /// Neither: the op cannot produce a partial result from these operands.
  Broken
};

/// The flow of one scalar op's result given its operands' flows, for
/// partial `kind`. Exposed for the exhaustive unit test.
Flow transferFlow(mlir::Operation *op, planner::ReductionKind kind,
                  llvm::ArrayRef<Flow> operands);

/// True when every value the body yields is Partial, given which block
/// arguments are partial (`argIsPartial`, one per block argument).
bool yieldsPartial(mlir::Block &body, planner::ReductionKind kind,
                   llvm::ArrayRef<bool> argIsPartial);

/// The reduction kind of the combiner `op` (addf -> sum, maximumf -> max,
/// ...), if it is one.
std::optional<planner::ReductionKind> combinerKind(mlir::Operation *op);

} // namespace dist::partition

#endif
