//===- FunctionPartitioner.h - one function's layout problem ---*- C++ -*-===//
//
// dist-partition works function by function: build() describes every op by
// its rule and strategies and every use of a value (BuildProblem.cpp), the
// layout problem is solved (LayoutSolver.h), and apply() writes the choice
// back into the IR (ApplyChoice.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_FUNCTIONPARTITIONER_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_FUNCTIONPARTITIONER_H

#include "dist/Planner/LayoutSolver.h"

#include "dist/Dialect/Dist/Interfaces/PartitionableOpInterface.h"

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/Planner/CostModel.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dist::partition {

// The layout problem and its solver are the planner's (MLIR-free).
using planner::layout::Cost;
using planner::layout::LayoutProblem;
using planner::layout::NodeSpec;
using planner::layout::Solution;
using planner::layout::SolveOptions;

using mlir::DenseMap;
using mlir::FailureOr;
using mlir::LogicalResult;
using mlir::Operation;
using mlir::RankedTensorType;
using mlir::Type;
using mlir::Value;
namespace func = mlir::func;
namespace linalg = mlir::linalg;
namespace tensor = mlir::tensor;

/// A constant: a scalar filled into an empty tensor (after normalization,
/// each has one use). Like an empty tensor it is a free source: it is
/// computed directly in the layout its use needs.
inline bool isConstantFill(mlir::Operation *op) {
  auto fill = llvm::dyn_cast_or_null<linalg::FillOp>(op);
  return fill && fill.hasPureTensorSemantics() &&
         fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
}

/// How the modelled cost of moving a tensor between two layouts is known.
struct ReshardPricing {
  using Pricer = llvm::function_ref<double(
      const planner::Layout &, const planner::Layout &, RankedTensorType)>;
  /// The exact cost (the planner's, planning when needed).
  Pricer cost;
  /// The exact cost when known without planning (the same layout, a cached
  /// cost), else a lower bound (the planner's admissible one); `exact`
  /// says which.
  llvm::function_ref<double(const planner::Layout &, const planner::Layout &,
                            RankedTensorType, bool &exact)>
      boundOrKnown;
};

inline bool isFreeSource(mlir::Operation *op) {
  return llvm::isa_and_nonnull<tensor::EmptyOp>(op) || isConstantFill(op);
}

/// One node of the layout problem and what its strategies mean.
///
/// A *hub* stands for a value used several times: its strategy is the one
/// layout the value is moved into once, and every use moves on from there.
/// Priced that way, gathering a tensor once for three consumers costs one
/// gather, as the emitted program does.
///
/// A *carry* stands for a tensor an scf.for carries from one iteration to
/// the next: its strategy is the one layout the value has at the start of
/// every iteration (the body's block argument, the loop's result). The init
/// moves into it once, the yielded value at the end of every iteration.
struct NodeInfo {
  enum Kind { Compute, Source, Sink, Hub, Carry } kind;
  Operation *op = nullptr;
  /// Per strategy: the layouts it needs and gives.
  std::vector<PartitionStrategy> layouts;
  /// Per op operand (Compute): whether it is placed, and the result it is
  /// tied to (PartitionOptions).
  llvm::SmallVector<bool> placed;
  llvm::SmallVector<int> tiedResult;
  /// The value a hub stands for.
  Value value;
  /// How many times the op runs per call of the function: the product of
  /// the static trip counts of the loops around it.
  double weight = 1;
};

/// Where a tensor value comes from: result `result` of info `info`.
struct Producer {
  unsigned info;
  unsigned result;
};

/// Operand `operand` of info `consumer` (its strategy s needs
/// layouts[s].operands[operand]) reads `value`.
struct Use {
  Value value;
  Producer producer;
  unsigned consumer;
  unsigned operand;
};

inline uint64_t keyOf(Producer producer) {
  return (uint64_t(producer.info) << 32) | producer.result;
}

class FunctionPartitioner {
public:
  FunctionPartitioner(func::FuncOp func, MeshOp mesh,
                      const planner::Mesh &plannerMesh, ReshardPricing pricing)
      : func(func), mesh(mesh), plannerMesh(plannerMesh), pricing(pricing) {}

  /// The device every strategy's compute is priced on, by the roofline
  /// (semantics §6a); without one (only tests of the reshard cost alone)
  /// compute is free.
  void setDevice(std::optional<planner::DeviceParams> params) {
    device = params;
  }
  /// Describes every op (strategies, layouts) and every use.
  LogicalResult build();
  /// The smallest peak bytes per device any choice of layouts needs, and
  /// whether that is exact (semantics §6a).
  double minimumPeakBytes(const SolveOptions &options, bool &exact) const {
    SolveOptions unbudgeted = options;
    unbudgeted.budget.reset();
    return problem.minimumPeakBytes(unbudgeted, exact);
  }
  /// Chooses a strategy per node (the planner's layout solver).
  Solution solve(const SolveOptions &options) { return problem.solve(options); }
  /// Writes `solution` (solve()'s, fitting the budget) into the function:
  /// counts the reshards inserted and the compute ops. A located error when
  /// no choice reaches the declared layouts.
  LogicalResult apply(const Solution &solution, unsigned &reshards,
                      unsigned &computeOps);
  /// Semantics §6a: in a function with `dist.auto`, arguments and results
  /// without an encoding are free; build() gives them candidate layouts and
  /// apply() writes the chosen ones into the function type.
  void setAuto(bool isAuto) { autoSharded = isAuto; }
  /// The free arguments and results with their chosen types, for remarks
  /// (after apply): {is result, index, type}.
  struct FreeBoundary {
    bool result;
    unsigned index;
    RankedTensorType type;
  };
  const std::vector<FreeBoundary> &getFreeBoundary() const {
    return freeBoundary;
  }
  /// Bytes of one device's buffer of a sharded tensor type.
  double localBytes(RankedTensorType type) {
    FailureOr<planner::Layout> layout = getPlannerLayout(
        getSharding(type), mesh, [&] { return func.emitOpError(); });
    return succeeded(layout) ? localBytesOf(type, *layout) : 0;
  }
  /// Why some ops could not take some strategies (a loop that is not
  /// split, and why), for -dist-remarks.
  const std::vector<std::pair<Operation *, std::string>> &getNotes() const {
    return notes;
  }

private:
  /// Writes one solution back into the IR (ApplyChoice.cpp).
  friend class ChoiceWriter;

  /// Describes the ops of `block`, which run `weight` times per call.
  LogicalResult buildBlock(mlir::Block &block, double weight);
  /// An scf.for: a carry per carried tensor, then its body.
  LogicalResult addLoop(mlir::scf::ForOp loop, double weight);
  /// An op with a partitioning model: its strategies come from the model.
  LogicalResult addComputeOp(PartitionableOpInterface op);
  /// Records the uses of `op`'s placed operands and its results as produced
  /// by info `node`; a binding result is moved into its declared layout.
  LogicalResult addComputeUses(Operation *op, unsigned node);
  LogicalResult addFixedOp(Operation *op);
  /// A fixed layout `value` comes in: an argument's (op null), a binding
  /// type's, a result of an op with no partitioning model.
  unsigned addSource(Operation *op, Value value, const planner::Layout &layout);
  /// What info `info` keeps live on a device, per strategy.
  std::vector<double> liveBytes(unsigned info);
  /// Modelled compute seconds of info `info`, per strategy (empty: none).
  std::vector<double> computeSeconds(unsigned info);
  /// Bytes of one device's buffer of `type` in `layout`.
  double localBytesOf(Type type, const planner::Layout &layout) const;
  unsigned addSink(Operation *op, const planner::Layout &layout);
  /// Records that operand `operand` of `consumer` reads `value`.
  LogicalResult addUse(unsigned consumer, unsigned operand, Value value);
  /// Adds hubs, then the nodes (in program order, each hub right after its
  /// value's producer) and the priced edges of the layout problem.
  void buildProblem();
  /// Prices every pair of layouts (times `weight`, how many times the move
  /// runs per call) and adds the edge. The value flows from `from` to `to`;
  /// the problem's edge goes from the lower node to the higher one (a
  /// loop's yielded value flows back to its carry).
  void addEdge(unsigned from,
               llvm::function_ref<const planner::Layout &(unsigned)> given,
               unsigned to,
               llvm::function_ref<const planner::Layout &(unsigned)> needed,
               RankedTensorType type, double weight);
  /// How many times a move of `value` runs per call: moves are placed in
  /// the block that defines the value (hoisted out of the loops it is
  /// invariant in).
  double weightOf(Value value) const;
  FailureOr<planner::Layout> layoutOfType(Type type, Operation *where);
  RankedTensorType withLayout(RankedTensorType type,
                              const planner::Layout &layout);

  func::FuncOp func;
  MeshOp mesh;
  const planner::Mesh &plannerMesh;
  ReshardPricing pricing;

  /// Candidate layouts of a free argument: every split by whole mesh axes
  /// (seeded before its uses are described), then every layout a use of it
  /// needs.
  void seedFreeArgument(mlir::BlockArgument arg, unsigned info);
  void addFreeArgumentCandidates(mlir::BlockArgument arg, unsigned info);
  bool isFree(Type type) const {
    return autoSharded && llvm::isa<RankedTensorType>(type) &&
           !getSharding(type);
  }

  std::optional<planner::DeviceParams> device;
  bool autoSharded = false;
  /// Info of each free argument and free result sink (-1: not free).
  llvm::SmallVector<int> freeArgumentInfo, freeResultInfo;
  std::vector<FreeBoundary> freeBoundary;
  LayoutProblem problem;
  std::vector<NodeInfo> infos;
  /// Edge tables already priced, by type, weight, direction and layouts
  /// (addEdge): a layer stack repeats them once per layer.
  std::unordered_map<std::string,
                     std::pair<std::vector<double>, std::vector<uint8_t>>>
      pricedTables;
  DenseMap<Value, Producer> producers;
  std::vector<Use> uses;
  /// The hub info of a produced value used several times (keyOf).
  DenseMap<uint64_t, unsigned> hubs;
  /// A compute result with a binding type: the source its uses read.
  DenseMap<Value, unsigned> bindingSource;
  /// Info index -> node of the problem.
  std::vector<unsigned> nodeOfInfo;
  /// Compute op -> its info.
  DenseMap<Operation *, unsigned> infoOfOp;
  std::vector<std::pair<Operation *, std::string>> notes;
  /// Per block the partitioner visited: how many times it runs per call.
  DenseMap<mlir::Block *, double> blockWeights;
  /// The carry info of each loop, per carried result (-1: not a tensor).
  DenseMap<Operation *, llvm::SmallVector<int>> carriesOfLoop;
  /// Per op of the function's body: the last info its description made.
  DenseMap<Operation *, unsigned> lastInfoOfOp;
  /// {sink, info}: the sink of a result only the return reads stands right
  /// after that info (its value's producer) and holds the returned copy to
  /// the end (semantics §6a), in the order the sinks were made.
  std::vector<std::pair<unsigned, unsigned>> returnedAfter;
  /// Per result: whether its sink is such a returned copy.
  llvm::SmallVector<bool> returnedEarly;
  bool isReturnedCopy(unsigned info) const {
    return llvm::any_of(returnedAfter,
                        [&](auto entry) { return entry.first == info; });
  }
  /// Where the move of a returned `value` goes: right after the info that
  /// produces it, when the return is its only reader (none otherwise: the
  /// value lives to the end anyway, and is moved at the return).
  std::optional<unsigned> returnedAt(Value value) const;
};

} // namespace dist::partition

#endif
