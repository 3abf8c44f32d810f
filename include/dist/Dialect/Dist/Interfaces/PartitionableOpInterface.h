//===- PartitionableOpInterface.h - ops dist-partition handles --*- C++ -*-===//
//
// The data an op's partitioning model exchanges with dist-partition (the
// strategies it offers) and with dist-localize (what it needs to build its
// per-device form). docs/partitioning.md, "One interface for every op",
// explains the contract.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_H
#define DIST_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_H

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace dist {

/// What dist-partition knows when it asks an op for its strategies.
struct PartitionQuery {
  const planner::Mesh &mesh;
  /// Per op operand: the layouts it may arrive in (its producer's
  /// candidates; empty for non-tensors and for constants, which take any
  /// layout for free).
  llvm::ArrayRef<std::vector<planner::Layout>> offered;
  /// Per op result: the layout its type declares (a binding type), if any.
  llvm::ArrayRef<std::optional<planner::Layout>> declared;
  /// At most this many assignments of mesh axes to an op's loops are tried
  /// (meshes of many axes); each edge of the layout problem prices at most
  /// its square of layout pairs.
  size_t assignmentBudget = 160;
  /// At most this many strategies per op.
  size_t maxStrategies = 1024;
};

/// One way to run an op on sharded data.
struct PartitionStrategy {
  /// Per op operand: the layout it must arrive in (an empty layout for the
  /// operands that are not placed, see PartitionOptions::placed).
  llvm::SmallVector<planner::Layout> operands;
  /// Per op result: its layout.
  llvm::SmallVector<planner::Layout> results;
  /// Iterations (or elements) one device works on, padding included: the
  /// tie-breaker between strategies that communicate equally.
  double localWork = 0;
};

/// Everything an op offers dist-partition.
struct PartitionOptions {
  std::vector<PartitionStrategy> strategies;
  /// Per op operand: whether it is a tensor the partitioner places (false
  /// for scalars such as linalg.fill's value).
  llvm::SmallVector<bool> placed;
  /// Per op operand: the result it is tied to (a linalg init,
  /// tensor.insert_slice's destination), whose type it takes, or -1.
  llvm::SmallVector<int> tiedResult;
  /// Why some strategies are missing (a loop that cannot be split, and
  /// why), reported with -dist-remarks on the op.
  std::vector<std::string> notes;

  /// Adds `strategy` unless an equal one is there or the limit is reached.
  void add(PartitionStrategy strategy, size_t limit);
};

/// What dist-localize knows about a sharded tensor type.
struct ShardedTypeInfo {
  MeshOp meshOp;
  const planner::Mesh *mesh = nullptr;
  planner::Layout layout;
};

/// What a model's `localize` may ask dist-localize.
class LocalizeContext {
public:
  virtual ~LocalizeContext();
  /// The local (padded block) type of a type: a sharded tensor's block, any
  /// other type as it is.
  virtual mlir::Type getLocalType(mlir::Type global) const = 0;
  /// The mesh and layout of a sharded tensor type; nullopt for other types.
  virtual std::optional<ShardedTypeInfo>
  getShardedInfo(mlir::Type global) const = 0;
};

/// The default per-device form: the same op (attributes and regions moved
/// over) on the local operands and the local result types.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
localizeByRetyping(mlir::Operation *op, mlir::RewriterBase &rewriter,
                   mlir::ValueRange localOperands,
                   const LocalizeContext &context);

} // namespace dist

#include "dist/Dialect/Dist/Interfaces/PartitionableOpInterface.h.inc"

#endif // DIST_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_H
