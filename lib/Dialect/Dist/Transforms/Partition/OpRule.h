//===- OpRule.h - how one op may be partitioned, from its indexing maps -*- C++ -*-===//
//
// One mechanism for every op dist-partition handles (all of them are linalg
// structured ops by then: elementwise arith/math ops are rewritten to
// linalg.generic first). An op iterates over loop dimensions; each operand
// dimension is indexed by an affine expression of them. The rule records:
//
//  - for every operand and tensor dim, the loop it is indexed by, when the
//    expression is a single loop dimension (a projected permutation);
//  - which loops may be split: a loop that also appears inside a compound
//    expression (a window such as d0 + d1) may not, since a device's block
//    of one operand would need neighbours' elements; a reduction loop may be
//    split only when every result combines with a known combiner (add, max,
//    min, mul), which the partial result is then reduced with;
//  - per result, that combiner.
//
// A *strategy* assigns mesh axes to loops (major to minor within a loop) and
// optionally lets some inputs arrive partial. From it follow the layout every
// operand must have and the layout of every result (SPEC §2), which is all
// the layout search needs.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_OPRULE_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_OPRULE_H

#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <string>

namespace dist::partition {

struct OpRule {
  mlir::linalg::LinalgOp op;
  unsigned numLoops = 0;
  unsigned numInputs = 0;
  llvm::SmallVector<int64_t> loopExtents;
  llvm::SmallVector<bool> isReduction;
  llvm::SmallVector<bool> splittable;
  /// Per op operand: per tensor dim the loop indexing it, or -1. Empty for
  /// operands that are not ranked tensors (scalars of linalg.fill, ...).
  llvm::SmallVector<llvm::SmallVector<int64_t>> operandDimLoops;
  llvm::SmallVector<bool> operandIsTensor;
  /// Per result: the combiner of its reduction loops, if it has a known one.
  llvm::SmallVector<std::optional<planner::ReductionKind>> combiners;

  /// Describes `op`, or returns a message saying why it cannot be
  /// partitioned.
  static llvm::Expected<OpRule> get(mlir::linalg::LinalgOp op);
};

/// A partial value one strategy accepts on some inputs.
struct PartialSpec {
  planner::ReductionKind kind = planner::ReductionKind::Sum;
  std::vector<unsigned> axes; // sorted
  bool operator==(const PartialSpec &o) const {
    return kind == o.kind && axes == o.axes;
  }
};

struct Strategy {
  /// Per loop: mesh axes, major to minor.
  llvm::SmallVector<llvm::SmallVector<unsigned, 2>> loopAxes;
  std::optional<PartialSpec> partial;
  /// Bit i: input i arrives partial (only with `partial`).
  uint32_t partialInputs = 0;
  /// Per loop (or empty): the segments a split loop is interleaved in (SPEC
  /// §2 `segments`), empty for a contiguous split. Every operand dim the
  /// loop indexes is then split per segment alike, so each device still
  /// iterates over the same indices of all of them.
  std::vector<std::vector<int64_t>> loopSegments;
};

struct StrategyLayouts {
  /// Per op operand (empty layout for non-tensors).
  llvm::SmallVector<planner::Layout> operands;
  llvm::SmallVector<planner::Layout> results;
  /// Iterations one device runs (the padded local iteration space).
  double localWork = 0;
};

/// The layouts `strategy` requires and produces, or nullopt when it is not
/// valid for the rule (a kind mismatch between partial inputs and the
/// combiner, or a body through which the partial inputs cannot flow).
std::optional<StrategyLayouts> layoutsOf(const OpRule &rule,
                                         const planner::Mesh &mesh,
                                         const Strategy &strategy);

/// Every assignment of the mesh's axes (of size > 1, not in `excluded`) to
/// the rule's splittable loops, each loop's axes in every order. Stops at
/// `limit` assignments (a mesh of many axes); then only mesh order within a
/// loop is tried.
std::vector<llvm::SmallVector<llvm::SmallVector<unsigned, 2>>>
enumerateAssignments(const OpRule &rule, const planner::Mesh &mesh,
                     llvm::ArrayRef<unsigned> excluded, size_t limit);

using Assignment = llvm::SmallVector<llvm::SmallVector<unsigned, 2>>;

/// The assignments worth trying for an op, at most `budget` of them: all of
/// them when there are that few; otherwise (a mesh of many axes, where
/// trying every assignment would price too many reshards) the ones that
/// keep some operand where it is: for every layout an operand may arrive in
/// (`offered`, per op operand), the assignment that reads it without a
/// move, then compatible pairs of those, then the replicated assignment,
/// then the enumeration's first ones up to the budget. Axes in `excluded`
/// (a partial input's) are never assigned.
std::vector<Assignment>
candidateAssignments(const OpRule &rule, const planner::Mesh &mesh,
                     llvm::ArrayRef<unsigned> excluded,
                     llvm::ArrayRef<std::vector<planner::Layout>> offered,
                     size_t budget);

} // namespace dist::partition

#endif
