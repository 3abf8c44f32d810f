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

/// Per-op strategies beyond this are not enumerated (meshes of many axes).
constexpr size_t kMaxAssignments = 2048;
constexpr size_t kMaxStrategies = 8192;

ShardingAttr getSharding(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<ShardingAttr>(tensor.getEncoding())
                : ShardingAttr();
}

/// One node of the layout problem and what its strategies mean.
struct NodeInfo {
  enum Kind { Compute, Source, Sink } kind;
  Operation *op = nullptr;
  std::optional<OpRule> rule;
  std::vector<Strategy> strategies;
  std::vector<StrategyLayouts> layouts; // per strategy
};

/// Where a tensor value comes from: result `result` of node `node`.
struct Producer {
  unsigned node;
  unsigned result;
};

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

  LogicalResult build();
  /// Solves and rewrites. Returns the modelled cost and counts.
  LogicalResult apply(Chooser chooser, double &cost, unsigned &reshards,
                      unsigned &computeOps);

private:
  LogicalResult addComputeOp(linalg::LinalgOp op);
  LogicalResult addFixedOp(Operation *op);
  unsigned addSource(Operation *op, const planner::Layout &layout);
  unsigned addSink(Operation *op, const planner::Layout &layout);
  /// Connects operand `operandIndex` of `node` (whose strategy s needs
  /// `needed(s)`) to the operand's producer.
  LogicalResult connect(unsigned node, Value value,
                        llvm::function_ref<const planner::Layout &(unsigned)>
                            needed);
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
  /// Per compute op's operand: the node of the sink a return/fixed op uses.
  DenseMap<Operation *, unsigned> nodeOfOp;
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
  return problem.addNode({0.0});
}

unsigned FunctionPartitioner::addSink(Operation *op,
                                      const planner::Layout &layout) {
  NodeInfo info{NodeInfo::Sink, op, std::nullopt, {Strategy{}}, {}};
  info.layouts.emplace_back();
  info.layouts.back().operands.push_back(layout);
  infos.push_back(std::move(info));
  return problem.addNode({0.0});
}

LogicalResult FunctionPartitioner::connect(
    unsigned node, Value value,
    llvm::function_ref<const planner::Layout &(unsigned)> needed) {
  auto type = cast<RankedTensorType>(value.getType());
  auto it = producers.find(value);
  if (it == producers.end()) {
    // An empty tensor has no contents to move: it takes whatever layout its
    // (single, after normalization) use needs.
    if (value.getDefiningOp<tensor::EmptyOp>())
      return success();
    return emitError(value.getLoc(), "dist-partition: internal error: a "
                                     "tensor with no known producer");
  }
  Producer producer = it->second;
  const NodeInfo &from = infos[producer.node];
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
  for (const StrategyLayouts &layouts : from.layouts)
    fromIndex.push_back(intern(fromLayouts, layouts.results[producer.result]));
  for (unsigned s = 0; s < problem.numStrategies(node); ++s)
    toIndex.push_back(intern(toLayouts, needed(s)));
  std::vector<double> table;
  table.reserve(fromLayouts.size() * toLayouts.size());
  for (const planner::Layout &src : fromLayouts)
    for (const planner::Layout &dst : toLayouts)
      table.push_back(reshardCost(src, dst, type));
  double bytes = static_cast<double>(type.getNumElements()) *
                 std::max<int64_t>(
                     1, (type.getElementTypeBitWidth() + 7) / 8);
  problem.addEdge(producer.node, node, std::move(fromIndex),
                  std::move(toIndex), toLayouts.size(), std::move(table),
                  bytes);
  return success();
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
    unsigned sink = addSink(op, *layout);
    if (failed(connect(sink, operand.get(), [&](unsigned) -> const planner::Layout & {
          return infos[sink].layouts[0].operands[0];
        })))
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
    for (const StrategyLayouts &layouts : infos[it->second.node].layouts) {
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
  for (auto &assignment :
       enumerateAssignments(*info.rule, plannerMesh, {}, kMaxAssignments))
    tryStrategy(Strategy{assignment, std::nullopt, 0});
  for (auto [spec, offered] : llvm::zip(specs, offeredBy)) {
    auto assignments = enumerateAssignments(*info.rule, plannerMesh,
                                            spec.axes, kMaxAssignments);
    // Every non-empty subset of the inputs that may arrive partial.
    for (uint32_t mask = offered; mask; mask = (mask - 1) & offered)
      for (auto &assignment : assignments)
        tryStrategy(Strategy{assignment, spec, mask});
  }
  if (info.strategies.empty())
    return op->emitOpError("cannot be partitioned: no layout is valid for it");

  std::vector<double> work;
  for (const StrategyLayouts &layouts : info.layouts)
    work.push_back(layouts.localWork);
  unsigned node = problem.addNode(std::move(work));
  infos.push_back(std::move(info));
  nodeOfOp[op] = node;

  for (OpOperand &operand : op->getOpOperands()) {
    if (!infos[node].rule->operandIsTensor[operand.getOperandNumber()])
      continue;
    unsigned index = operand.getOperandNumber();
    if (failed(connect(node, operand.get(),
                       [&](unsigned s) -> const planner::Layout & {
                         return infos[node].layouts[s].operands[index];
                       })))
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
    unsigned sink = addSink(op, *layout);
    if (failed(connect(sink, result, [&](unsigned) -> const planner::Layout & {
          return infos[sink].layouts[0].operands[0];
        })))
      return failure();
    producers[result] = {addSource(op, *layout), 0};
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
    if (isa<tensor::EmptyOp>(op))
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

  for (Operation &op : llvm::make_early_inc_range(func.getBody().front())) {
    auto it = nodeOfOp.find(&op);
    if (it != nodeOfOp.end()) {
      ++computeOps;
      const NodeInfo &info = infos[it->second];
      const StrategyLayouts &layouts = info.layouts[choice[it->second]];
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
        FailureOr<Value> placed = moveTo(operand.get(), target, &op);
        if (failed(placed))
          return failure();
        operand.set(*placed);
      }
      for (OpResult result : op.getResults()) {
        unsigned r = result.getResultNumber();
        result.setType(resultTypes[r]);
        if (!getSharding(declared[r]) || declared[r] == resultTypes[r])
          continue;
        // A binding type the op does not compute in: move into it after.
        OpBuilder b(op.getContext());
        b.setInsertionPointAfter(&op);
        auto reshard = ReshardOp::create(b, op.getLoc(), declared[r], result);
        ++reshards;
        result.replaceAllUsesExcept(reshard.getResult(), reshard);
      }
      continue;
    }
    if (isa<tensor::EmptyOp>(op))
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
      FailureOr<Value> placed =
          moveTo(operand.get(), cast<RankedTensorType>(declared), &op);
      if (failed(placed))
        return failure();
      operand.set(*placed);
    }
  }
  // Empty tensors nothing uses any more.
  for (Operation &op : llvm::make_early_inc_range(func.getBody().front()))
    if (isa<tensor::EmptyOp>(op) && op.use_empty())
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
  planner::PlanCache &cache =
      context->getLoadedDialect<DistDialect>()->getPlanCache(
          cacheDir, [context](StringRef warning) {
            mlir::emitWarning(UnknownLoc::get(context)) << warning;
          });

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
