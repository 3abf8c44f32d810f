//===- LoopRule.h - how a loop nest may be split ------------*- C++ -*-===//
//
// The rule behind the linalg model (LinalgModel.cpp) and the views of
// reshapes (TensorModels.cpp). An op iterates over loop dimensions; each
// operand dimension is indexed by an affine expression of them. The rule
// records:
//
//  - for every operand and tensor dim, the loop it is indexed by, when the
//    expression is a single loop dimension (a projected permutation), or a
//    loop divided by a constant (`d floordiv G`: grouped-query attention's
//    kv head of query head d); a dim indexed by `d mod M` is read whole;
//  - which loops may be split: a loop that also appears inside another
//    compound expression (a window such as d0 + d1) may not, since a
//    device's block of one operand would need neighbours' elements; a
//    reduction loop may be split only when every result combines with a
//    known combiner (add, max, min, mul), which the partial result is then
//    reduced with. A loop divided by G is split only into blocks that are
//    whole groups (G divides the block, and the divided dim's blocks are
//    those blocks / G); a loop taken mod M only into blocks of whole
//    periods;
//  - per result, that combiner.
//
// A *loop strategy* assigns mesh axes to loops (major to minor within a
// loop) and optionally lets some inputs arrive partial. From it follow the
// layout every operand must have and the layout of every result
// (docs/semantics.md, "The layout"), which is all the layout search needs.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_LOOPRULE_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_LOOPRULE_H

#include "dist/Dialect/Dist/Interfaces/PartitionableOpInterface.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>
#include <set>
#include <string>

namespace dist::partition {

struct LoopRule {
  /// The linalg op, when the rule is one's (a reshape's view rule has none).
  mlir::linalg::LinalgOp op;
  unsigned numLoops = 0;
  unsigned numInputs = 0;
  llvm::SmallVector<int64_t> loopExtents;
  llvm::SmallVector<bool> isReduction;
  llvm::SmallVector<bool> splittable;
  /// Per loop that may not be split: why (for the op's remark).
  llvm::SmallVector<std::string> whyNotSplit;
  /// Per op operand: per tensor dim the loop indexing it, or -1. Empty for
  /// operands that are not ranked tensors (scalars of linalg.fill, ...).
  llvm::SmallVector<llvm::SmallVector<int64_t>> operandDimLoops;
  /// Per op operand and tensor dim: G when the dim is indexed by
  /// `loop floordiv G` (1 for the loop itself).
  llvm::SmallVector<llvm::SmallVector<int64_t>> operandDimDivisors;
  /// Per loop: the moduli M of `loop mod M` expressions.
  llvm::SmallVector<llvm::SmallVector<int64_t>> loopModuli;
  llvm::SmallVector<bool> operandIsTensor;
  /// Per op operand: its tensor shape (empty for non-tensors).
  llvm::SmallVector<llvm::SmallVector<int64_t>> operandShapes;
  /// Per result: the combiner of its reduction loops, if it has a known one.
  llvm::SmallVector<std::optional<planner::ReductionKind>> combiners;

  /// Describes `op`, or returns a message saying why it cannot be
  /// partitioned.
  static llvm::Expected<LoopRule> get(mlir::linalg::LinalgOp op);
  /// A rule over `shape`'s dims with one operand indexed by the identity
  /// (every dim its own parallel loop): the views of a reshape.
  static LoopRule identity(llvm::ArrayRef<int64_t> shape);
};

/// A partial value one strategy accepts on some inputs.
struct PartialSpec {
  planner::ReductionKind kind = planner::ReductionKind::Sum;
  planner::AxisList axes; // sorted
  bool operator==(const PartialSpec &o) const {
    return kind == o.kind && axes == o.axes;
  }
};

struct LoopStrategy {
  /// Per loop: mesh axes, major to minor.
  llvm::SmallVector<llvm::SmallVector<unsigned, 2>> loopAxes;
  std::optional<PartialSpec> partial;
  /// Bit i: input i arrives partial (only with `partial`).
  uint32_t partialInputs = 0;
  /// Per loop (or empty): the segments a split loop is interleaved in
  /// (docs/semantics.md, segments), empty for a contiguous split. Every
  /// operand dim the loop indexes is then split per segment alike, so each
  /// device still iterates over the same indices of all of them.
  std::vector<std::vector<int64_t>> loopSegments;
};

/// The layouts `strategy` requires and produces, or nullopt when it is not
/// valid for the rule (a kind mismatch between partial inputs and the
/// combiner, a body through which the partial inputs cannot flow, a group
/// or period cut by a block). Why a loop's split was refused goes into
/// `notes` when given.
std::optional<PartitionStrategy>
layoutsOf(const LoopRule &rule, const planner::Mesh &mesh,
          const LoopStrategy &strategy, std::set<std::string> *notes = nullptr);

using Assignment = llvm::SmallVector<llvm::SmallVector<unsigned, 2>>;

/// Every assignment of the mesh's axes (of size > 1, not in `excluded`) to
/// the rule's splittable loops, each loop's axes in every order. Stops at
/// `limit` assignments (a mesh of many axes); then only mesh order within a
/// loop is tried.
std::vector<Assignment> enumerateAssignments(const LoopRule &rule,
                                             const planner::Mesh &mesh,
                                             llvm::ArrayRef<unsigned> excluded,
                                             size_t limit);

/// The assignments worth trying for an op, at most `budget` of them: all of
/// them when there are that few; otherwise (a mesh of many axes, where
/// trying every assignment would price too many reshards) the ones that
/// keep some operand where it is: for every layout an operand may arrive in
/// (`offered`, per op operand), the assignment that reads it without a
/// move, then compatible pairs of those, then the replicated assignment,
/// then the enumeration's first ones up to the budget. Axes in `excluded`
/// (a partial input's) are never assigned.
std::vector<Assignment>
candidateAssignments(const LoopRule &rule, const planner::Mesh &mesh,
                     llvm::ArrayRef<unsigned> excluded,
                     llvm::ArrayRef<std::vector<planner::Layout>> offered,
                     size_t budget);

} // namespace dist::partition

#endif
