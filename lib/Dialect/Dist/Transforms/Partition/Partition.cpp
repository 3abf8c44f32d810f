//===- Partition.cpp - the dist-partition pass ----------------------------===//
//
// Per function: normalize the compute (Normalize.h), describe every op by
// its rule (OpRule.h), build the layout problem (LayoutSolver.h) whose edge
// costs are the planner's reshard costs under the module's cost model, solve
// it, and write the result back: every free tensor type gets its layout and
// a dist.reshard goes wherever an operand must move.
//
//===----------------------------------------------------------------------===//

#include "LayoutSolver.h"
#include "Normalize.h"
#include "OpRule.h"

#include "../ReshardCostModels.h"
#include "../Remarks.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"
#include "dist/Planner/PlanCache.h"
#include "dist/Planner/Planner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"

#include <limits>
#include <map>

namespace dist {
#define GEN_PASS_DEF_DISTPARTITION
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {

/// Per-op assignments of axes to loops that are tried: every one while there
/// are this few (meshes of up to 3 axes of size > 1 and ops of up to 4
/// loops stay under it), else the ones seeded from the operands' layouts
/// (OpRule.h). Each edge prices at most budget^2 layout pairs, so this
/// bounds the planner calls per edge.
constexpr size_t kAssignmentBudget = 160;
constexpr size_t kMaxStrategies = 1024;

ShardingAttr getSharding(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<ShardingAttr>(tensor.getEncoding())
                : ShardingAttr();
}

/// A constant: a scalar filled into an empty tensor (after normalization,
/// each has one use). Like an empty tensor it is a free source: it is
/// computed directly in the layout its use needs.
bool isConstantFill(Operation *op) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op);
  return fill && fill.hasPureTensorSemantics() &&
         fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
}

bool isFreeSource(Operation *op) {
  return isa_and_nonnull<tensor::EmptyOp>(op) || isConstantFill(op);
}

/// One node of the layout problem and what its strategies mean.
///
/// A *hub* stands for a value used several times: its strategy is the one
/// layout the value is moved into once, and every use moves on from there.
/// Priced that way, gathering a tensor once for three consumers costs one
/// gather, as the emitted program does.
struct NodeInfo {
  enum Kind { Compute, Source, Sink, Hub } kind;
  Operation *op = nullptr;
  std::optional<OpRule> rule;
  std::vector<Strategy> strategies;
  std::vector<StrategyLayouts> layouts; // per strategy
  /// The value a hub stands for.
  Value value;
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

uint64_t keyOf(Producer producer) {
  return (uint64_t(producer.info) << 32) | producer.result;
}

class FunctionPartitioner {
public:
  FunctionPartitioner(func::FuncOp func, MeshOp mesh,
                      const planner::Mesh &plannerMesh,
                      llvm::function_ref<double(const planner::Layout &,
                                                const planner::Layout &,
                                                RankedTensorType)>
                          reshardCost)
      : func(func), mesh(mesh), plannerMesh(plannerMesh),
        reshardCost(reshardCost) {}

  /// Describes every op (strategies, layouts) and every use.
  LogicalResult build();
  /// Solves and rewrites. Returns the modelled cost and counts.
  LogicalResult apply(Chooser chooser, double &cost, unsigned &reshards,
                      unsigned &computeOps);

private:
  LogicalResult addComputeOp(linalg::LinalgOp op);
  LogicalResult addFixedOp(Operation *op);
  unsigned addSource(Operation *op, const planner::Layout &layout);
  unsigned addSink(Operation *op, const planner::Layout &layout);
  /// Records that operand `operand` of `consumer` reads `value`.
  LogicalResult addUse(unsigned consumer, unsigned operand, Value value);
  /// Adds hubs, then the nodes (in program order, each hub right after its
  /// value's producer) and the priced edges of the layout problem.
  void buildProblem();
  /// Prices every pair of layouts and adds the edge.
  void addEdge(unsigned from, llvm::function_ref<const planner::Layout &(unsigned)> given,
               unsigned to, llvm::function_ref<const planner::Layout &(unsigned)> needed,
               RankedTensorType type);
  FailureOr<planner::Layout> layoutOfType(Type type, Operation *where);
  RankedTensorType withLayout(RankedTensorType type,
                              const planner::Layout &layout);

  func::FuncOp func;
  MeshOp mesh;
  const planner::Mesh &plannerMesh;
  llvm::function_ref<double(const planner::Layout &, const planner::Layout &,
                            RankedTensorType)>
      reshardCost;

  LayoutProblem problem;
  std::vector<NodeInfo> infos;
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
};

FailureOr<planner::Layout> FunctionPartitioner::layoutOfType(Type type,
                                                             Operation *where) {
  ShardingAttr sharding = getSharding(type);
  return getPlannerLayout(sharding, mesh, [&] { return where->emitOpError(); });
}

RankedTensorType FunctionPartitioner::withLayout(RankedTensorType type,
                                                 const planner::Layout &layout) {
  return RankedTensorType::get(
      type.getShape(), type.getElementType(),
      getShardingAttr(type.getContext(), mesh, layout));
}

unsigned FunctionPartitioner::addSource(Operation *op,
                                        const planner::Layout &layout) {
  NodeInfo info{NodeInfo::Source, op, std::nullopt, {Strategy{}}, {}};
  info.layouts.emplace_back();
  info.layouts.back().results.push_back(layout);
  infos.push_back(std::move(info));
  return infos.size() - 1;
}

unsigned FunctionPartitioner::addSink(Operation *op,
                                      const planner::Layout &layout) {
  NodeInfo info{NodeInfo::Sink, op, std::nullopt, {Strategy{}}, {}};
  info.layouts.emplace_back();
  info.layouts.back().operands.push_back(layout);
  infos.push_back(std::move(info));
  return infos.size() - 1;
}

LogicalResult FunctionPartitioner::addUse(unsigned consumer, unsigned operand,
                                          Value value) {
  if (!producers.count(value)) {
    // An empty tensor has no contents to move: it takes whatever layout its
    // (single, after normalization) use needs.
    if (isFreeSource(value.getDefiningOp()))
      return success();
    return emitError(value.getLoc(), "dist-partition: internal error: a "
                                     "tensor with no known producer");
  }
  uses.push_back({value, producers.lookup(value), consumer, operand});
  return success();
}

void FunctionPartitioner::addEdge(
    unsigned from, function_ref<const planner::Layout &(unsigned)> given,
    unsigned to, function_ref<const planner::Layout &(unsigned)> needed,
    RankedTensorType type) {
  // Distinct layouts on each side, so that each pair is priced once.
  std::vector<planner::Layout> fromLayouts, toLayouts;
  auto intern = [](std::vector<planner::Layout> &list,
                   const planner::Layout &layout) {
    for (unsigned i = 0; i < list.size(); ++i)
      if (list[i] == layout)
        return i;
    list.push_back(layout);
    return static_cast<unsigned>(list.size() - 1);
  };
  std::vector<unsigned> fromIndex, toIndex;
  for (unsigned s = 0; s < infos[from].layouts.size(); ++s)
    fromIndex.push_back(intern(fromLayouts, given(s)));
  for (unsigned s = 0; s < infos[to].layouts.size(); ++s)
    toIndex.push_back(intern(toLayouts, needed(s)));
  std::vector<double> table;
  table.reserve(fromLayouts.size() * toLayouts.size());
  for (const planner::Layout &src : fromLayouts)
    for (const planner::Layout &dst : toLayouts)
      table.push_back(reshardCost(src, dst, type));
  double bytes = static_cast<double>(type.getNumElements()) *
                 std::max<int64_t>(
                     1, (type.getElementTypeBitWidth() + 7) / 8);
  problem.addEdge(nodeOfInfo[from], nodeOfInfo[to], std::move(fromIndex),
                  std::move(toIndex), toLayouts.size(), std::move(table),
                  bytes);
}

void FunctionPartitioner::buildProblem() {
  // Hubs for the values used more than once; their candidate layouts are
  // every layout the producer may give and every layout a use may need.
  DenseMap<uint64_t, unsigned> useCounts;
  for (const Use &use : uses)
    ++useCounts[keyOf(use.producer)];
  DenseMap<unsigned, SmallVector<unsigned>> hubsAfter; // producer -> hubs
  unsigned numInfos = infos.size();
  for (const Use &first : uses) {
    uint64_t key = keyOf(first.producer);
    if (useCounts[key] < 2 || hubs.count(key))
      continue;
    std::vector<planner::Layout> candidates;
    auto note = [&](const planner::Layout &layout) {
      if (!llvm::is_contained(candidates, layout))
        candidates.push_back(layout);
    };
    Producer producer = first.producer;
    for (const StrategyLayouts &layouts : infos[producer.info].layouts)
      note(layouts.results[producer.result]);
    for (const Use &use : uses)
      if (keyOf(use.producer) == key)
        for (const StrategyLayouts &layouts : infos[use.consumer].layouts)
          note(layouts.operands[use.operand]);
    NodeInfo hub{NodeInfo::Hub, nullptr, std::nullopt, {}, {}, first.value};
    for (planner::Layout &layout : candidates) {
      hub.strategies.emplace_back();
      hub.layouts.emplace_back();
      hub.layouts.back().operands.push_back(layout);
      hub.layouts.back().results.push_back(std::move(layout));
    }
    infos.push_back(std::move(hub));
    hubs[key] = infos.size() - 1;
    hubsAfter[producer.info].push_back(infos.size() - 1);
  }

  // Nodes in program order, each hub right after its producer.
  nodeOfInfo.assign(infos.size(), 0);
  auto addNode = [&](unsigned info) {
    std::vector<double> work;
    for (const StrategyLayouts &layouts : infos[info].layouts)
      work.push_back(layouts.localWork);
    nodeOfInfo[info] = problem.addNode(std::move(work));
  };
  for (unsigned info = 0; info < numInfos; ++info) {
    addNode(info);
    for (unsigned hub : hubsAfter.lookup(info))
      addNode(hub);
  }

  auto producedLayout = [&](Producer producer) {
    return [this, producer](unsigned s) -> const planner::Layout & {
      return infos[producer.info].layouts[s].results[producer.result];
    };
  };
  for (auto [key, hub] : hubs) {
    Producer producer{unsigned(key >> 32), unsigned(key & 0xffffffffu)};
    addEdge(producer.info, producedLayout(producer), hub,
            [&, hub = hub](unsigned s) -> const planner::Layout & {
              return infos[hub].layouts[s].operands[0];
            },
            cast<RankedTensorType>(infos[hub].value.getType()));
  }
  for (const Use &use : uses) {
    auto needed = [&](unsigned s) -> const planner::Layout & {
      return infos[use.consumer].layouts[s].operands[use.operand];
    };
    auto type = cast<RankedTensorType>(use.value.getType());
    auto hub = hubs.find(keyOf(use.producer));
    if (hub != hubs.end())
      addEdge(hub->second, producedLayout({hub->second, 0}), use.consumer,
              needed, type);
    else
      addEdge(use.producer.info, producedLayout(use.producer), use.consumer,
              needed, type);
  }
}

LogicalResult FunctionPartitioner::addFixedOp(Operation *op) {
  // Operands need exactly their declared layouts; results are sources.
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    Type declared = operand.get().getType();
    if (auto ret = dyn_cast<func::ReturnOp>(op))
      declared = func.getFunctionType().getResult(operand.getOperandNumber());
    if (!getSharding(declared))
      return op->emitOpError("cannot be partitioned: operand #")
             << operand.getOperandNumber()
             << " needs a tensor type with a #dist.sharding encoding";
    FailureOr<planner::Layout> layout = layoutOfType(declared, op);
    if (failed(layout))
      return failure();
    if (failed(addUse(addSink(op, *layout), 0, operand.get())))
      return failure();
  }
  for (OpResult result : op->getResults()) {
    if (!isa<RankedTensorType>(result.getType()))
      continue;
    if (!getSharding(result.getType()))
      return op->emitOpError("cannot be partitioned: result #")
             << result.getResultNumber()
             << " needs a tensor type with a #dist.sharding encoding";
    FailureOr<planner::Layout> layout = layoutOfType(result.getType(), op);
    if (failed(layout))
      return failure();
    producers[result] = {addSource(op, *layout), 0};
  }
  return success();
}

LogicalResult FunctionPartitioner::addComputeOp(linalg::LinalgOp op) {
  llvm::Expected<OpRule> rule = OpRule::get(op);
  if (!rule)
    return op->emitOpError("cannot be partitioned: ")
           << llvm::toString(rule.takeError());

  // Partial values the inputs' producers may offer.
  std::vector<PartialSpec> specs;
  std::vector<uint32_t> offeredBy; // per spec: the inputs that may offer it
  for (unsigned i = 0; i < rule->numInputs && i < 32; ++i) {
    auto it = producers.find(op->getOperand(i));
    if (!rule->operandIsTensor[i] || it == producers.end())
      continue;
    for (const StrategyLayouts &layouts : infos[it->second.info].layouts) {
      const planner::Layout &layout = layouts.results[it->second.result];
      if (!layout.hasPartial())
        continue;
      PartialSpec spec{layout.partialKind, layout.partialAxes};
      auto found = llvm::find(specs, spec);
      if (found == specs.end()) {
        specs.push_back(spec);
        offeredBy.push_back(0);
        found = specs.end() - 1;
      }
      offeredBy[found - specs.begin()] |= 1u << i;
    }
  }

  NodeInfo info{NodeInfo::Compute, op, std::move(*rule), {}, {}};
  auto tryStrategy = [&](Strategy strategy) {
    if (info.strategies.size() >= kMaxStrategies)
      return;
    std::optional<StrategyLayouts> layouts =
        layoutsOf(*info.rule, plannerMesh, strategy);
    if (!layouts)
      return;
    info.strategies.push_back(std::move(strategy));
    info.layouts.push_back(std::move(*layouts));
  };
  // The layouts each operand may arrive in (its producer's candidates, or a
  // binding result's declared layout), which seed the assignments of ops
  // whose full enumeration is too large.
  std::vector<std::vector<planner::Layout>> offered(op->getNumOperands());
  for (OpOperand &operand : op->getOpOperands()) {
    auto it = producers.find(operand.get());
    if (it == producers.end())
      continue;
    for (const StrategyLayouts &layouts : infos[it->second.info].layouts) {
      const planner::Layout &layout = layouts.results[it->second.result];
      if (!llvm::is_contained(offered[operand.getOperandNumber()], layout))
        offered[operand.getOperandNumber()].push_back(layout);
    }
  }
  for (OpResult result : op->getResults()) {
    if (!getSharding(result.getType()))
      continue;
    FailureOr<planner::Layout> layout = layoutOfType(result.getType(), op);
    if (failed(layout))
      return failure();
    offered[info.rule->numInputs + result.getResultNumber()].push_back(*layout);
  }
  for (auto &assignment : candidateAssignments(*info.rule, plannerMesh, {},
                                               offered, kAssignmentBudget))
    tryStrategy(Strategy{assignment, std::nullopt, 0});
  for (auto [spec, inputs] : llvm::zip(specs, offeredBy)) {
    auto assignments = candidateAssignments(*info.rule, plannerMesh, spec.axes,
                                            offered, kAssignmentBudget);
    // Every non-empty subset of the inputs that may arrive partial.
    for (uint32_t mask = inputs; mask; mask = (mask - 1) & inputs)
      for (auto &assignment : assignments)
        tryStrategy(Strategy{assignment, spec, mask});
  }
  if (info.strategies.empty())
    return op->emitOpError("cannot be partitioned: no layout is valid for it");

  infos.push_back(std::move(info));
  unsigned node = infos.size() - 1;
  infoOfOp[op] = node;

  for (OpOperand &operand : op->getOpOperands()) {
    if (!infos[node].rule->operandIsTensor[operand.getOperandNumber()])
      continue;
    if (failed(addUse(node, operand.getOperandNumber(), operand.get())))
      return failure();
  }
  for (OpResult result : op->getResults()) {
    unsigned r = result.getResultNumber();
    producers[result] = {node, r};
    if (!getSharding(result.getType()))
      continue;
    // A binding type: the op computes in its chosen layout, and the result
    // is moved into the declared one (free when they agree).
    FailureOr<planner::Layout> layout = layoutOfType(result.getType(), op);
    if (failed(layout))
      return failure();
    if (failed(addUse(addSink(op, *layout), 0, result)))
      return failure();
    producers[result] = {addSource(op, *layout), 0};
    bindingSource[result] = producers[result].info;
  }
  return success();
}

LogicalResult FunctionPartitioner::build() {
  for (BlockArgument arg : func.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType()))
      continue;
    if (!getSharding(arg.getType()))
      return func.emitOpError("cannot be partitioned: argument #")
             << arg.getArgNumber()
             << " needs a tensor type with a #dist.sharding encoding";
    FailureOr<planner::Layout> layout = layoutOfType(arg.getType(), func);
    if (failed(layout))
      return failure();
    producers[arg] = {addSource(nullptr, *layout), 0};
  }
  for (Operation &op : func.getBody().front()) {
    if (isFreeSource(&op))
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      if (failed(addComputeOp(linalgOp)))
        return failure();
      continue;
    }
    bool touchesTensors =
        llvm::any_of(op.getOperandTypes(), llvm::IsaPred<RankedTensorType>) ||
        llvm::any_of(op.getResultTypes(), llvm::IsaPred<RankedTensorType>);
    if (touchesTensors && failed(addFixedOp(&op)))
      return failure();
  }
  buildProblem();
  return success();
}

LogicalResult FunctionPartitioner::apply(Chooser chooser, double &cost,
                                         unsigned &reshards,
                                         unsigned &computeOps) {
  Cost total;
  std::vector<unsigned> choice = problem.solve(chooser, total);
  if (std::isinf(total.comm))
    return func.emitOpError("cannot be partitioned: no choice of layouts "
                            "reaches the declared ones (some reshard has no "
                            "plan)");
  cost = total.comm;
  reshards = 0;
  computeOps = 0;

  // The type of a tensor of `like`'s shape in `layout`: `like` itself when
  // it already says that layout (a binding type is kept as written).
  auto typeFor = [&](RankedTensorType like, const planner::Layout &layout) {
    if (getSharding(like)) {
      FailureOr<planner::Layout> own = layoutOfType(like, func);
      if (succeeded(own) && *own == layout)
        return like;
    }
    return withLayout(like, layout);
  };
  // Moves `value` into `target` before `user` (reusing an equal move).
  DenseMap<std::pair<Value, Type>, Value> moved;
  auto moveTo = [&](Value value, RankedTensorType target,
                    Operation *user) -> FailureOr<Value> {
    auto type = cast<RankedTensorType>(value.getType());
    if (auto empty = value.getDefiningOp<tensor::EmptyOp>()) {
      // Nothing to move: the empty tensor takes the layout.
      empty.getResult().setType(target);
      return value;
    }
    if (isConstantFill(value.getDefiningOp())) {
      // The constant is computed in the layout, except that a partial
      // constant holds the value on one device and the identity elsewhere:
      // that is the (local) replicate_to_partial of the whole one.
      FailureOr<planner::Layout> wanted = layoutOfType(target, user);
      if (failed(wanted))
        return failure();
      planner::Layout whole = *wanted;
      whole.partialAxes.clear();
      RankedTensorType wholeType = typeFor(target, whole);
      auto fill = cast<linalg::FillOp>(value.getDefiningOp());
      fill.getOutputs()[0].setType(wholeType);
      value.setType(wholeType);
      if (wholeType == target)
        return value;
      OpBuilder b(user);
      ++reshards;
      return ReshardOp::create(b, user->getLoc(), target, value).getResult();
    }
    if (!getSharding(type))
      return user->emitOpError("dist-partition: internal error: operand "
                               "without a layout");
    if (type == target)
      return value;
    FailureOr<planner::Layout> current = layoutOfType(type, user);
    FailureOr<planner::Layout> wanted = layoutOfType(target, user);
    if (failed(current) || failed(wanted))
      return failure();
    Value &cached = moved[{value, target}];
    if (cached && cached.getDefiningOp()->isBeforeInBlock(user))
      return cached;
    OpBuilder b(user);
    cached = ReshardOp::create(b, user->getLoc(), target, value);
    // Equal layouts written differently need no move, only the type.
    if (*current != *wanted)
      ++reshards;
    return cached;
  };

  // A value with a hub is moved once into the hub's layout, before its
  // first use; every use moves on from there.
  DenseMap<Value, Value> hubbed;
  // The producer each value the rewritten ops read stands for (a binding
  // result is read through its reshard, which stands for the source).
  DenseMap<Value, Producer> live = producers;
  auto source = [&](Value value, RankedTensorType target,
                    Operation *user) -> FailureOr<Value> {
    // A use that wants the value as it is reads it directly (slicing the
    // hub's gathered copy instead would be free, but wasteful).
    if (value.getType() == target)
      return value;
    auto producer = live.find(value);
    if (producer == live.end())
      return value;
    auto hub = hubs.find(keyOf(producer->second));
    if (hub == hubs.end())
      return value;
    Value &moved = hubbed[value];
    if (!moved) {
      const planner::Layout &layout =
          infos[hub->second].layouts[choice[nodeOfInfo[hub->second]]].results[0];
      FailureOr<Value> placed = moveTo(
          value, typeFor(cast<RankedTensorType>(value.getType()), layout), user);
      if (failed(placed))
        return failure();
      moved = *placed;
    }
    return moved;
  };

  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    auto it = infoOfOp.find(&op);
    if (it != infoOfOp.end()) {
      ++computeOps;
      const NodeInfo &info = infos[it->second];
      const StrategyLayouts &layouts =
          info.layouts[choice[nodeOfInfo[it->second]]];
      SmallVector<RankedTensorType> declared, resultTypes;
      for (OpResult result : op.getResults()) {
        declared.push_back(cast<RankedTensorType>(result.getType()));
        resultTypes.push_back(
            typeFor(declared.back(), layouts.results[result.getResultNumber()]));
      }
      unsigned numInputs = info.rule->numInputs;
      for (OpOperand &operand : op.getOpOperands()) {
        unsigned o = operand.getOperandNumber();
        if (!isa<RankedTensorType>(operand.get().getType()))
          continue;
        RankedTensorType target =
            o >= numInputs
                ? resultTypes[o - numInputs]
                : typeFor(cast<RankedTensorType>(operand.get().getType()),
                          layouts.operands[o]);
        FailureOr<Value> from = source(operand.get(), target, &op);
        if (failed(from))
          return failure();
        FailureOr<Value> placed = moveTo(*from, target, &op);
        if (failed(placed))
          return failure();
        operand.set(*placed);
      }
      for (OpResult result : op.getResults()) {
        unsigned r = result.getResultNumber();
        result.setType(resultTypes[r]);
        if (!getSharding(declared[r]) || declared[r] == resultTypes[r]) {
          if (bindingSource.count(result))
            live[result] = {bindingSource.lookup(result), 0};
          continue;
        }
        // A binding type the op does not compute in: move into it after.
        OpBuilder b(op.getContext());
        b.setInsertionPointAfter(&op);
        auto reshard = ReshardOp::create(b, op.getLoc(), declared[r], result);
        ++reshards;
        result.replaceAllUsesExcept(reshard.getResult(), reshard);
        live[reshard.getResult()] = {bindingSource.lookup(result), 0};
      }
      continue;
    }
    if (isFreeSource(&op))
      continue;
    // Fixed ops: operands into their declared layouts.
    for (OpOperand &operand : op.getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()))
        continue;
      Type declared = operand.get().getType();
      if (isa<func::ReturnOp>(op))
        declared = func.getFunctionType().getResult(operand.getOperandNumber());
      if (!getSharding(declared))
        return op.emitOpError("cannot be partitioned: operand #")
               << operand.getOperandNumber()
               << " needs a tensor type with a #dist.sharding encoding";
      FailureOr<Value> from =
          source(operand.get(), cast<RankedTensorType>(declared), &op);
      if (failed(from))
        return failure();
      FailureOr<Value> placed =
          moveTo(*from, cast<RankedTensorType>(declared), &op);
      if (failed(placed))
        return failure();
      operand.set(*placed);
    }
  }
  // Constants and empty tensors nothing uses any more (a fill before the
  // empty it fills).
  for (Operation &op : llvm::make_early_inc_range(
           llvm::reverse(func.getBody().front())))
    if (isFreeSource(&op) && op.use_empty())
      op.erase();
  return success();
}

struct DistPartitionPass
    : public dist::impl::DistPartitionBase<DistPartitionPass> {
  using DistPartitionBase::DistPartitionBase;

  LogicalResult initialize(MLIRContext *context) override {
    auto emitError = [&] { return mlir::emitError(UnknownLoc::get(context)); };
    std::optional<planner::Strategy> parsedStrategy =
        planner::parseStrategy(strategy);
    if (!parsedStrategy)
      return emitError() << "dist-partition: unknown strategy '" << strategy
                         << "' (expected optimal or greedy)";
    planStrategy = *parsedStrategy;
    std::optional<Chooser> parsedChooser = parseChooser(chooser);
    if (!parsedChooser)
      return emitError() << "dist-partition: unknown chooser '" << chooser
                         << "' (expected joint, per-op or keep-larger)";
    parsedChooserValue = *parsedChooser;
    if (stopAfter != "normalize" && stopAfter != "partition")
      return emitError() << "dist-partition: unknown stop-after step '"
                         << stopAfter << "' (expected normalize or partition)";
    return costModels.initialize("dist-partition", topology, alpha, beta,
                                 emitError);
  }

  void runOnOperation() override;

private:
  planner::Strategy planStrategy = planner::Strategy::Optimal;
  Chooser parsedChooserValue = Chooser::Joint;
  ReshardCostModels costModels;
};

} // namespace


void DistPartitionPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(costModels.checkAxesExist(module)))
    return signalPassFailure();
  MLIRContext *context = &getContext();
  planner::PlanCache &cache = getPlanCache(context, cacheDir);

  double totalCost = 0;
  unsigned totalReshards = 0, totalOps = 0;
  bool failedAny = false;
  SymbolTableCollection symbols;
  for (func::FuncOp func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    // Functions with nothing to partition stay as they are.
    bool hasCompute = false;
    func.walk([&](Operation *op) {
      if (op != func && op->getParentOp() == func &&
          !isa<func::ReturnOp, func::CallOp>(op) &&
          op->getDialect() != context->getLoadedDialect<DistDialect>() &&
          (llvm::any_of(op->getOperandTypes(), llvm::IsaPred<RankedTensorType>) ||
           llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>)))
        hasCompute = true;
    });
    if (!hasCompute)
      continue;
    // The one mesh of the function's sharded types.
    MeshOp mesh;
    bool severalMeshes = false;
    auto noteType = [&](Type type) {
      ShardingAttr sharding = getSharding(type);
      if (!sharding)
        return;
      FailureOr<MeshOp> found = lookupMesh(func, sharding.getMesh(), symbols);
      if (failed(found))
        return;
      if (mesh && *found != mesh)
        severalMeshes = true;
      mesh = *found;
    };
    func.walk([&](Operation *op) {
      for (Type type : op->getOperandTypes())
        noteType(type);
      for (Type type : op->getResultTypes())
        noteType(type);
    });
    for (Type type : func.getFunctionType().getInputs())
      noteType(type);
    for (Type type : func.getFunctionType().getResults())
      noteType(type);
    if (!mesh) {
      func.emitOpError("cannot be partitioned: none of its tensors has a "
                       "#dist.sharding type, so it has no mesh");
      failedAny = true;
      continue;
    }
    if (severalMeshes) {
      func.emitOpError("cannot be partitioned: its compute uses tensors on "
                       "several meshes");
      failedAny = true;
      continue;
    }
    FailureOr<planner::Mesh> plannerMesh =
        getPlannerMesh(mesh, [&] { return mesh.emitOpError(); });
    if (failed(plannerMesh)) {
      failedAny = true;
      continue;
    }
    FailureOr<const planner::AlphaBetaCostModel *> model =
        costModels.get(mesh, *plannerMesh);
    if (failed(model)) {
      failedAny = true;
      continue;
    }
    if (failed(normalizeForPartitioning(func))) {
      failedAny = true;
      continue;
    }
    if (stopAfter == "normalize")
      continue;
    forgetConstantLayouts(func);

    // Reshard costs, priced once per distinct request.
    std::map<std::string, double> prices;
    auto reshardCost = [&](const planner::Layout &src,
                           const planner::Layout &dst,
                           RankedTensorType type) -> double {
      if (src == dst)
        return 0;
      std::optional<int64_t> bytes = getElementBytes(type.getElementType());
      if (!bytes)
        return std::numeric_limits<double>::infinity();
      planner::PlanRequest request(*plannerMesh,
                                   std::vector<int64_t>(type.getShape()),
                                   *bytes, src, dst);
      request.strategy = planStrategy;
      request.costModel = *model;
      std::string key = planner::planCacheKey(request);
      auto [it, inserted] = prices.try_emplace(key, 0.0);
      if (!inserted)
        return it->second;
      llvm::Expected<planner::Plan> plan = cache.getOrPlan(request);
      if (!plan) {
        llvm::consumeError(plan.takeError());
        it->second = std::numeric_limits<double>::infinity();
      } else {
        it->second = plan->cost;
      }
      return it->second;
    };

    FunctionPartitioner partitioner(func, mesh, *plannerMesh, reshardCost);
    double cost = 0;
    unsigned reshards = 0, ops = 0;
    if (failed(partitioner.build()) ||
        failed(partitioner.apply(parsedChooserValue, cost, reshards, ops))) {
      failedAny = true;
      continue;
    }
    totalCost += cost;
    totalReshards += reshards;
    totalOps += ops;
  }
  if (failedAny)
    return signalPassFailure();
  if (remarks || remarksRequested())
    module.emitRemark("dist-partition: ")
        << totalOps << " ops partitioned (chooser " << chooser << "), "
        << totalReshards << " reshards inserted, modelled cost "
        << llvm::formatv("{0:e3}", totalCost) << " s";
}
