//===- BuildProblem.cpp - one function's layout problem ------------------===//
//
// Every op becomes a node whose strategies come from its rule (OpRule.h);
// arguments, binding types and returns become fixed nodes; a value used
// several times gets a hub; each use becomes an edge priced by the planner.
//
//===----------------------------------------------------------------------===//

#include "FunctionPartitioner.h"

#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/Dialect/Dist/IR/ReshapeViews.h"

#include "mlir/IR/Builders.h"

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
} // namespace

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
  NodeInfo info{NodeInfo::Source, op, std::nullopt, {Strategy{}}, {}, Value()};
  info.layouts.emplace_back();
  info.layouts.back().results.push_back(layout);
  infos.push_back(std::move(info));
  return infos.size() - 1;
}

unsigned FunctionPartitioner::addSink(Operation *op,
                                      const planner::Layout &layout) {
  NodeInfo info{NodeInfo::Sink, op, std::nullopt, {Strategy{}}, {}, Value()};
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

  NodeInfo info{NodeInfo::Compute, op, std::move(*rule), {}, {}, Value()};
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
  // Interleaved splits an operand arrives in (a fused QKV weight's rows):
  // its loop may be split per segment too, so that the op computes on the
  // interleaved blocks where they are.
  struct SegmentedLoop {
    unsigned loop;
    SmallVector<unsigned, 2> axes;
    std::vector<int64_t> segments;
  };
  std::vector<SegmentedLoop> segmentedLoops;
  for (auto [o, layouts] : llvm::enumerate(offered))
    for (const planner::Layout &layout : layouts)
      for (unsigned d = 0; d < layout.getRank(); ++d) {
        int64_t loop = d < info.rule->operandDimLoops[o].size()
                           ? info.rule->operandDimLoops[o][d]
                           : -1;
        if (!layout.isSegmented(d) || loop < 0)
          continue;
        SegmentedLoop candidate{unsigned(loop),
                                SmallVector<unsigned, 2>(
                                    layout.dimAxes[d].begin(),
                                    layout.dimAxes[d].end()),
                                layout.segments[d]};
        if (llvm::none_of(segmentedLoops, [&](const SegmentedLoop &known) {
              return known.loop == candidate.loop &&
                     known.axes == candidate.axes &&
                     known.segments == candidate.segments;
            }))
          segmentedLoops.push_back(std::move(candidate));
      }
  // Each assignment, and its variants with a loop split per segment where
  // it takes that segmented operand's axes.
  auto tryWithSegments = [&](const Assignment &assignment,
                             std::optional<PartialSpec> spec, uint32_t mask) {
    tryStrategy(Strategy{assignment, spec, mask, {}});
    for (const SegmentedLoop &segmented : segmentedLoops) {
      if (assignment[segmented.loop] != segmented.axes)
        continue;
      Strategy strategy{assignment, spec, mask, {}};
      strategy.loopSegments.resize(info.rule->numLoops);
      strategy.loopSegments[segmented.loop] = segmented.segments;
      tryStrategy(std::move(strategy));
    }
  };
  for (auto &assignment : candidateAssignments(*info.rule, plannerMesh, {},
                                               offered, kAssignmentBudget))
    tryWithSegments(assignment, std::nullopt, 0);
  for (auto [spec, inputs] : llvm::zip(specs, offeredBy)) {
    auto assignments = candidateAssignments(*info.rule, plannerMesh, spec.axes,
                                            offered, kAssignmentBudget);
    // Every non-empty subset of the inputs that may arrive partial.
    for (uint32_t mask = inputs; mask; mask = (mask - 1) & inputs)
      for (auto &assignment : assignments)
        tryWithSegments(assignment, spec, mask);
  }
  if (info.strategies.empty())
    return op->emitOpError("cannot be partitioned: no layout is valid for it");

  infos.push_back(std::move(info));
  unsigned node = infos.size() - 1;
  return addComputeUses(op, node, [&](unsigned operand) {
    return infos[node].rule->operandIsTensor[operand];
  });
}

LogicalResult FunctionPartitioner::addComputeUses(
    Operation *op, unsigned node, function_ref<bool(unsigned)> isTensor) {
  infoOfOp[op] = node;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isTensor(operand.getOperandNumber()))
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

LogicalResult FunctionPartitioner::addReshapeOp(Operation *op) {
  FailureOr<planner::ReshapeDims> dims = getReshapeDims(op);
  if (failed(dims))
    return failure();
  bool expand = isa<tensor::ExpandShapeOp>(op);
  // The finer side (the expanded tensor) determines the other: every view
  // is an assignment of axes to its dims, enumerated like the loops of an
  // elementwise op over it.
  const std::vector<int64_t> &finerShape = dims->expandedShape;
  OpRule finer;
  finer.numLoops = finerShape.size();
  finer.loopExtents.assign(finerShape.begin(), finerShape.end());
  finer.isReduction.assign(finer.numLoops, false);
  finer.splittable.assign(finer.numLoops, true);
  finer.operandIsTensor.push_back(true);
  finer.operandDimLoops.emplace_back();
  for (unsigned d = 0; d < finer.numLoops; ++d)
    finer.operandDimLoops.back().push_back(d);

  NodeInfo info{NodeInfo::Compute, op, std::nullopt, {}, {}, Value()};
  auto addPair = [&](const planner::Layout &operand,
                     const planner::Layout &result) {
    for (const StrategyLayouts &known : info.layouts)
      if (known.operands[0] == operand && known.results[0] == result)
        return;
    if (info.layouts.size() >= kMaxStrategies)
      return;
    info.strategies.emplace_back();
    info.layouts.emplace_back();
    info.layouts.back().operands.push_back(operand);
    info.layouts.back().results.push_back(result);
  };
  auto addFromOperand = [&](const planner::Layout &operand) {
    llvm::Expected<planner::Layout> result =
        resultViewOf(op, plannerMesh, operand, *dims);
    if (result)
      addPair(operand, *result);
    else
      llvm::consumeError(result.takeError());
  };
  auto addFromResult = [&](const planner::Layout &result) {
    llvm::Expected<planner::Layout> operand =
        operandViewOf(op, plannerMesh, result, *dims);
    if (operand)
      addPair(*operand, result);
    else
      llvm::consumeError(operand.takeError());
  };

  // The layouts the operand may arrive in and the binding result layout:
  // each is kept as it is when it has a view (segmented layouts included),
  // and seeds the enumeration through its finer-side image.
  std::vector<planner::Layout> arriving, seeds;
  std::vector<PartialSpec> specs;
  if (auto it = producers.find(op->getOperand(0)); it != producers.end())
    for (const StrategyLayouts &layouts : infos[it->second.info].layouts) {
      const planner::Layout &layout = layouts.results[it->second.result];
      if (!llvm::is_contained(arriving, layout))
        arriving.push_back(layout);
      PartialSpec spec{layout.partialKind, layout.partialAxes};
      if (layout.hasPartial() && !llvm::is_contained(specs, spec))
        specs.push_back(spec);
    }
  for (const planner::Layout &layout : arriving)
    addFromOperand(layout);
  std::optional<planner::Layout> binding;
  if (getSharding(op->getResult(0).getType())) {
    FailureOr<planner::Layout> layout =
        layoutOfType(op->getResult(0).getType(), op);
    if (failed(layout))
      return failure();
    binding = *layout;
    addFromResult(*binding);
  }
  for (const StrategyLayouts &layouts : info.layouts)
    seeds.push_back(expand ? layouts.results[0] : layouts.operands[0]);

  // Every other view, with and without each partial spec the operand may
  // arrive with (a reshape moves partial values as they are).
  std::vector<std::optional<PartialSpec>> partials{std::nullopt};
  partials.insert(partials.end(), specs.begin(), specs.end());
  for (const std::optional<PartialSpec> &spec : partials) {
    std::vector<unsigned> excluded = spec ? spec->axes : std::vector<unsigned>();
    for (const Assignment &assignment :
         candidateAssignments(finer, plannerMesh, excluded, {seeds},
                              kAssignmentBudget)) {
      planner::Layout layout;
      for (const auto &axes : assignment)
        layout.dimAxes.emplace_back(axes.begin(), axes.end());
      if (spec) {
        layout.partialAxes = spec->axes;
        layout.partialKind = spec->kind;
      }
      if (expand)
        addFromResult(layout);
      else
        addFromOperand(layout);
    }
  }
  if (info.strategies.empty())
    return op->emitOpError("cannot be partitioned: no layout makes it a view");
  infos.push_back(std::move(info));
  unsigned node = infos.size() - 1;
  return addComputeUses(op, node, [](unsigned) { return true; });
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
    if (isTensorReshape(&op)) {
      if (failed(addReshapeOp(&op)))
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

