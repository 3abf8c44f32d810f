//===- BuildProblem.cpp - one function's layout problem ------------------===//
//
// Every op becomes a node whose strategies come from its partitioning model
// (dist::PartitionableOpInterface);
// arguments, binding types and returns become fixed nodes; a value used
// several times gets a hub; each use becomes an edge priced by the planner.
//
//===----------------------------------------------------------------------===//

#include "FunctionError.h"
#include "FunctionPartitioner.h"
#include "PairCostMemo.h"

#include "../ReshardCostModels.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/Dialect/Dist/Transforms/TableReads.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Threading.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {
/// Per-op assignments of axes to loops that are tried: every one while there
/// are this few (meshes of up to 3 axes of size > 1 and ops of up to 4
/// loops stay under it), else the ones seeded from the operands' layouts
/// (PartitionModels/LoopRule.h). Each edge prices at most budget^2 layout
/// pairs, so this bounds the planner calls per edge.
constexpr size_t kAssignmentBudget = 160;
constexpr size_t kMaxStrategies = 1024;
/// At most this many whole-axis layouts are offered for a free argument
/// before its uses add theirs (every one on meshes of up to 3 axes of size
/// > 1 and tensors of up to 4 dims).
constexpr size_t kMaxSeededArgumentLayouts = 125;
/// Edges with at least this many layout pairs are priced on several threads.
constexpr size_t kParallelPricingPairs = 64;
/// Edges with at least this many layout pairs are priced lazily: a lower
/// bound for each pair whose cost is not known yet, the exact cost when a
/// choice uses it (LayoutSolver.h). Planning every pair of such a table
/// (thousands on a 3-axis mesh) costs seconds, and a choice uses one pair
/// per edge; smaller tables (a Llama layer's) are priced at once, which
/// spares the solver rounds.
constexpr size_t kLazyPricingPairs = 64;
} // namespace

FailureOr<planner::Layout> FunctionPartitioner::layoutOfType(Type type,
                                                             Operation *where) {
  ShardingAttr sharding = getSharding(type);
  return getPlannerLayout(sharding, mesh, [&] { return where->emitOpError(); });
}

RankedTensorType
FunctionPartitioner::withLayout(RankedTensorType type,
                                const planner::Layout &layout) {
  return RankedTensorType::get(
      type.getShape(), type.getElementType(),
      getShardingAttr(type.getContext(), mesh, layout));
}

unsigned FunctionPartitioner::addSource(Operation *op, Value value,
                                        const planner::Layout &layout) {
  NodeInfo info{NodeInfo::Source, op, {}, {}, {}, value};
  info.layouts.emplace_back();
  info.layouts.back().results.push_back(layout);
  infos.push_back(std::move(info));
  return infos.size() - 1;
}

unsigned FunctionPartitioner::addSink(Operation *op,
                                      const planner::Layout &layout) {
  NodeInfo info{NodeInfo::Sink, op, {}, {}, {}, Value()};
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
    RankedTensorType type, double weight) {
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
  double bytes = static_cast<double>(type.getNumElements()) *
                 std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  // A row per layout of the problem edge's earlier end: the producer's, or
  // for a value flowing back to a carry, the carry's.
  bool forward = nodeOfInfo[from] < nodeOfInfo[to];
  size_t columns = forward ? toLayouts.size() : fromLayouts.size();
  std::vector<double> table(fromLayouts.size() * toLayouts.size());
  bool lazy = table.size() >= kLazyPricingPairs;
  std::vector<uint8_t> bounded(lazy ? table.size() : 0, 0);
  // Entry `index`, exactly or (lazily) as a bound unless known. A move
  // that never runs (a loop of no iterations) costs nothing.
  auto price = [pricing = pricing, fromLayouts, toLayouts, type, weight,
                forward, columns](size_t index, bool *exact) {
    if (weight == 0) {
      if (exact)
        *exact = true;
      return 0.0;
    }
    size_t row = index / columns, column = index % columns;
    const planner::Layout &src =
        forward ? fromLayouts[row] : fromLayouts[column];
    const planner::Layout &dst = forward ? toLayouts[column] : toLayouts[row];
    if (!exact)
      return weight * pricing.cost(src, dst, type);
    return weight * pricing.boundOrKnown(src, dst, type, *exact);
  };
  auto priceEntry = [&](size_t index) {
    if (!lazy) {
      table[index] = price(index, nullptr);
      return;
    }
    bool exact = false;
    table[index] = price(index, &exact);
    bounded[index] = !exact;
  };
  // A stack of layers builds the same table once per layer: the same type,
  // weight, direction and layouts give the same entries.
  std::string tableKey;
  appendKeyBytes(tableKey, type);
  appendKeyBytes(tableKey, static_cast<int64_t>(forward));
  tableKey.append(reinterpret_cast<const char *>(&weight), sizeof(weight));
  for (const std::vector<planner::Layout> *side : {&fromLayouts, &toLayouts}) {
    appendKeyBytes(tableKey, static_cast<int64_t>(side->size()));
    for (const planner::Layout &layout : *side)
      appendKeyBytes(tableKey, layout);
  }
  if (auto it = pricedTables.find(tableKey); it != pricedTables.end()) {
    table = it->second.first;
    bounded = it->second.second;
  } else {
    // Every pair is priced independently (the plan cache is thread-safe):
    // spread them over the context's threads. Small tables (most, and
    // mostly served from the cache) are not worth the threads' hand-off.
    if (table.size() >= kParallelPricingPairs)
      mlir::parallelFor(func.getContext(), 0, table.size(), priceEntry);
    else
      for (size_t index = 0; index < table.size(); ++index)
        priceEntry(index);
    pricedTables.try_emplace(std::move(tableKey), table, bounded);
  }
  std::function<double(size_t)> exactly;
  std::function<std::string(size_t)> request;
  if (lazy) {
    exactly = [price](size_t index) { return price(index, nullptr); };
    // The plan an entry needs, named by its tensor type and layouts, so
    // that the solver can tell how many plans pricing every entry takes.
    std::string typeName;
    llvm::raw_string_ostream(typeName) << type;
    std::vector<std::string> fromNames, toNames;
    for (const planner::Layout &layout : fromLayouts)
      fromNames.push_back(planner::printLayout(plannerMesh, layout));
    for (const planner::Layout &layout : toLayouts)
      toNames.push_back(planner::printLayout(plannerMesh, layout));
    request = [typeName, fromNames, toNames, forward, columns](size_t index) {
      size_t row = index / columns, column = index % columns;
      return typeName + " " + (forward ? fromNames[row] : fromNames[column]) +
             " -> " + (forward ? toNames[column] : toNames[row]);
    };
  }
  if (forward) {
    // The copy a move creates is live at its consumer; a hub's or a carry's
    // copy is that node's own, and so is a binding result's (its source's).
    // A returned copy's move is counted at the copy's node, where its source
    // is still live, and the copy is that node's own from the next position
    // on (LayoutSolver.h, NodeSpec::heldToEnd).
    bool ownCopy =
        infos[to].kind == NodeInfo::Hub || infos[to].kind == NodeInfo::Carry ||
        (infos[to].kind == NodeInfo::Sink && infoOfOp.count(infos[to].op));
    std::vector<double> movedBytes;
    if (!ownCopy)
      for (const planner::Layout &dst : toLayouts)
        movedBytes.push_back(localBytesOf(type, dst));
    problem.addEdge(nodeOfInfo[from], nodeOfInfo[to], std::move(fromIndex),
                    std::move(toIndex), toLayouts.size(), std::move(table),
                    bytes, std::move(movedBytes), std::move(bounded),
                    std::move(exactly), std::move(request));
    return;
  }
  // The value flows back to an earlier node (a carry): the problem's edge
  // goes forward, with the table indexed the other way round.
  problem.addEdge(nodeOfInfo[to], nodeOfInfo[from], std::move(toIndex),
                  std::move(fromIndex), fromLayouts.size(), std::move(table),
                  bytes, {}, std::move(bounded), std::move(exactly),
                  std::move(request));
}

double FunctionPartitioner::localBytesOf(Type type,
                                         const planner::Layout &layout) const {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return 0;
  std::optional<int64_t> element = getElementBytes(tensor.getElementType());
  return static_cast<double>(planner::localBytes(
      plannerMesh, layout, tensor.getShape(), element.value_or(1)));
}

std::vector<double> FunctionPartitioner::liveBytes(unsigned index) {
  // Semantics §6a: every buffer at its local padded size. A compute op
  // holds its results; a hub or a carry its value's one copy; an argument
  // or other fixed source its value; a sink nothing (its value is held by
  // the producer or by the move into it), except a returned copy, which
  // holds the result.
  const NodeInfo &info = infos[index];
  std::vector<double> bytes;
  for (const PartitionStrategy &layouts : info.layouts) {
    double total = 0;
    switch (info.kind) {
    case NodeInfo::Compute:
      for (OpResult result : info.op->getResults())
        total += localBytesOf(result.getType(),
                              layouts.results[result.getResultNumber()]);
      break;
    case NodeInfo::Source:
    case NodeInfo::Hub:
    case NodeInfo::Carry:
      total = localBytesOf(info.value.getType(), layouts.results[0]);
      break;
    case NodeInfo::Sink:
      if (isReturnedCopy(index))
        total = localBytesOf(info.value.getType(), layouts.operands[0]);
      break;
    }
    bytes.push_back(total);
  }
  return bytes;
}

std::vector<double> FunctionPartitioner::computeSeconds(unsigned index) {
  // The roofline of semantics §6a: the larger of the flops over the peak
  // rate and the bytes touched (operands as placed, results) over the
  // bandwidth, per run, times the runs per call. A linalg op does one flop
  // per scalar op of its body per iteration; other ops (views, slices,
  // concatenations) only move bytes.
  const NodeInfo &info = infos[index];
  if (!device || info.kind != NodeInfo::Compute)
    return {};
  double opsPerIteration = 0;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(info.op)) {
    for (Operation &inner : linalgOp.getBlock()->without_terminator())
      if (!isa<linalg::IndexOp>(inner))
        ++opsPerIteration;
  }
  // The rate of the op's element type (its first tensor's; semantics §3b).
  std::string elementType;
  for (Value value :
       llvm::concat<Value>(info.op->getResults(), info.op->getOperands()))
    if (auto tensor = dyn_cast<RankedTensorType>(value.getType())) {
      llvm::raw_string_ostream os(elementType);
      os << tensor.getElementType();
      break;
    }
  const double flopRate = device->flopsFor(elementType);
  // A table the op looks up (TableReads.h) is touched one element per
  // iteration, never more than its local block.
  SmallVector<std::optional<int64_t>> lookedUpElementBytes;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(info.op);
  for (OpOperand &operand : info.op->getOpOperands()) {
    lookedUpElementBytes.emplace_back();
    if (linalgOp && lookupTableRead(linalgOp, operand))
      lookedUpElementBytes.back() = getElementBytes(
          cast<RankedTensorType>(operand.get().getType()).getElementType());
  }
  std::vector<double> seconds;
  for (const PartitionStrategy &layouts : info.layouts) {
    double bytes = 0;
    for (OpOperand &operand : info.op->getOpOperands()) {
      unsigned o = operand.getOperandNumber();
      if (!info.placed[o])
        continue;
      double placed =
          localBytesOf(operand.get().getType(), layouts.operands[o]);
      if (std::optional<int64_t> element = lookedUpElementBytes[o])
        placed = std::min(placed, layouts.localWork * double(*element));
      bytes += placed;
    }
    for (OpResult result : info.op->getResults())
      bytes += localBytesOf(result.getType(),
                            layouts.results[result.getResultNumber()]);
    double flops = layouts.localWork * opsPerIteration;
    seconds.push_back(info.weight *
                      std::max(flops / flopRate, bytes / device->memBandwidth));
  }
  return seconds;
}

double FunctionPartitioner::weightOf(Value value) const {
  auto it = blockWeights.find(value.getParentBlock());
  return it == blockWeights.end() ? 1.0 : it->second;
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
    for (const PartitionStrategy &layouts : infos[producer.info].layouts)
      note(layouts.results[producer.result]);
    for (const Use &use : uses)
      if (keyOf(use.producer) == key)
        for (const PartitionStrategy &layouts : infos[use.consumer].layouts)
          note(layouts.operands[use.operand]);
    NodeInfo hub{NodeInfo::Hub, nullptr, {}, {}, {}, first.value};
    for (planner::Layout &layout : candidates) {
      hub.layouts.emplace_back();
      hub.layouts.back().operands.push_back(layout);
      hub.layouts.back().results.push_back(std::move(layout));
    }
    infos.push_back(std::move(hub));
    hubs[key] = infos.size() - 1;
    hubsAfter[producer.info].push_back(infos.size() - 1);
  }

  // Nodes in program order, each hub right after its producer, then each
  // returned copy of what that info produced.
  DenseMap<unsigned, SmallVector<unsigned>> returnedCopiesAfter;
  for (auto [sink, at] : returnedAfter)
    returnedCopiesAfter[at].push_back(sink);
  nodeOfInfo.assign(infos.size(), 0);
  auto addNode = [&](unsigned info) {
    NodeSpec spec;
    for (const PartitionStrategy &layouts : infos[info].layouts)
      spec.work.push_back(layouts.localWork * infos[info].weight);
    spec.bytes = liveBytes(info);
    spec.seconds = computeSeconds(info);
    spec.argument = infos[info].kind == NodeInfo::Source && !infos[info].op;
    spec.heldToEnd = isReturnedCopy(info);
    // Between equally fast choices, a free argument or result takes the
    // layout that holds the fewest bytes (a split batch over a replica
    // sliced locally).
    bool freeBoundary = llvm::is_contained(freeArgumentInfo, int(info)) ||
                        llvm::is_contained(freeResultInfo, int(info));
    if (freeBoundary)
      for (unsigned s = 0; s < spec.work.size(); ++s)
        spec.work[s] += localBytesOf(infos[info].value.getType(),
                                     infos[info].kind == NodeInfo::Sink
                                         ? infos[info].layouts[s].operands[0]
                                         : infos[info].layouts[s].results[0]);
    nodeOfInfo[info] = problem.addNode(std::move(spec));
  };
  for (unsigned info = 0; info < numInfos; ++info) {
    if (isReturnedCopy(info))
      continue;
    addNode(info);
    for (unsigned hub : hubsAfter.lookup(info))
      addNode(hub);
    for (unsigned sink : returnedCopiesAfter.lookup(info))
      addNode(sink);
  }

  auto producedLayout = [&](Producer producer) {
    return [this, producer](unsigned s) -> const planner::Layout & {
      return infos[producer.info].layouts[s].results[producer.result];
    };
  };
  for (auto [key, hub] : hubs) {
    Producer producer{unsigned(key >> 32), unsigned(key & 0xffffffffu)};
    addEdge(
        producer.info, producedLayout(producer), hub,
        [&, hub = hub](unsigned s) -> const planner::Layout & {
          return infos[hub].layouts[s].operands[0];
        },
        cast<RankedTensorType>(infos[hub].value.getType()),
        weightOf(infos[hub].value));
  }
  for (const Use &use : uses) {
    auto needed = [&](unsigned s) -> const planner::Layout & {
      return infos[use.consumer].layouts[s].operands[use.operand];
    };
    auto type = cast<RankedTensorType>(use.value.getType());
    auto hub = hubs.find(keyOf(use.producer));
    double weight = weightOf(use.value);
    if (hub != hubs.end())
      addEdge(hub->second, producedLayout({hub->second, 0}), use.consumer,
              needed, type, weight);
    else
      addEdge(use.producer.info, producedLayout(use.producer), use.consumer,
              needed, type, weight);
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
    if (isa<func::ReturnOp>(op) && isFree(declared)) {
      // A free result: a sink whose candidates are the layouts its value
      // may be produced in (never partial: a result is whole), and the
      // replicated one.
      std::vector<planner::Layout> candidates{planner::Layout::replicated(
          cast<RankedTensorType>(declared).getRank())};
      auto it = producers.find(operand.get());
      if (it != producers.end())
        for (const PartitionStrategy &layouts : infos[it->second.info].layouts)
          if (it->second.result < layouts.results.size()) {
            planner::Layout layout = layouts.results[it->second.result];
            layout.partialAxes.clear();
            if (!llvm::is_contained(candidates, layout))
              candidates.push_back(layout);
          }
      NodeInfo sink{NodeInfo::Sink, op, {}, {}, {}, operand.get()};
      for (planner::Layout &layout : candidates) {
        sink.layouts.emplace_back();
        sink.layouts.back().operands.push_back(std::move(layout));
      }
      infos.push_back(std::move(sink));
      freeResultInfo[operand.getOperandNumber()] = infos.size() - 1;
      if (std::optional<unsigned> at = returnedAt(operand.get())) {
        returnedAfter.push_back({unsigned(infos.size() - 1), *at});
        returnedEarly[operand.getOperandNumber()] = true;
      }
      if (failed(addUse(infos.size() - 1, 0, operand.get())))
        return failure();
      continue;
    }
    if (!getSharding(declared))
      return op->emitOpError("cannot be partitioned: operand #")
             << operand.getOperandNumber()
             << " needs a tensor type with a #dist.sharding encoding";
    FailureOr<planner::Layout> layout = layoutOfType(declared, op);
    if (failed(layout))
      return failure();
    unsigned sink = addSink(op, *layout);
    if (isa<func::ReturnOp>(op)) {
      infos[sink].value = operand.get();
      if (std::optional<unsigned> at = returnedAt(operand.get())) {
        returnedAfter.push_back({sink, *at});
        returnedEarly[operand.getOperandNumber()] = true;
      }
    }
    if (failed(addUse(sink, 0, operand.get())))
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
    producers[result] = {addSource(op, result, *layout), 0};
  }
  return success();
}

LogicalResult FunctionPartitioner::addComputeOp(PartitionableOpInterface op) {
  // The layouts each operand may arrive in (its producer's candidates, or a
  // binding result's declared layout) and each result's declared layout.
  std::vector<std::vector<planner::Layout>> offered(op->getNumOperands());
  for (OpOperand &operand : op->getOpOperands()) {
    auto it = producers.find(operand.get());
    if (it == producers.end())
      continue;
    for (const PartitionStrategy &layouts : infos[it->second.info].layouts) {
      const planner::Layout &layout = layouts.results[it->second.result];
      if (!llvm::is_contained(offered[operand.getOperandNumber()], layout))
        offered[operand.getOperandNumber()].push_back(layout);
    }
  }
  std::vector<std::optional<planner::Layout>> declared;
  for (OpResult result : op->getResults()) {
    declared.emplace_back();
    if (!getSharding(result.getType()))
      continue;
    FailureOr<planner::Layout> layout = layoutOfType(result.getType(), op);
    if (failed(layout))
      return failure();
    declared.back() = *layout;
  }
  PartitionQuery query{plannerMesh, offered, declared, kAssignmentBudget,
                       kMaxStrategies};
  llvm::Expected<PartitionOptions> options = op.getPartitionOptions(query);
  if (!options)
    return op->emitOpError("cannot be partitioned: ")
           << llvm::toString(options.takeError());
  for (std::string &note : options->notes)
    notes.emplace_back(op, std::move(note));

  NodeInfo info{NodeInfo::Compute,
                op,
                std::move(options->strategies),
                std::move(options->placed),
                std::move(options->tiedResult),
                Value()};
  infos.push_back(std::move(info));
  return addComputeUses(op, infos.size() - 1);
}

LogicalResult FunctionPartitioner::addComputeUses(Operation *op,
                                                  unsigned node) {
  infoOfOp[op] = node;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!infos[node].placed[operand.getOperandNumber()])
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
    producers[result] = {addSource(op, result, *layout), 0};
    bindingSource[result] = producers[result].info;
  }
  return success();
}

std::optional<unsigned> FunctionPartitioner::returnedAt(Value value) const {
  // A value read elsewhere too (or twice by the return) keeps a hub; an
  // empty tensor has no producer.
  if (!value.hasOneUse())
    return std::nullopt;
  if (isa<BlockArgument>(value)) {
    auto it = producers.find(value);
    return it == producers.end() ? std::nullopt
                                 : std::optional<unsigned>(it->second.info);
  }
  auto it = lastInfoOfOp.find(value.getDefiningOp());
  return it == lastInfoOfOp.end() ? std::nullopt
                                  : std::optional<unsigned>(it->second);
}

void FunctionPartitioner::seedFreeArgument(BlockArgument arg, unsigned info) {
  // Before its uses are described, a free argument offers every way of
  // splitting its dims by whole mesh axes (each axis of size > 1 splits one
  // dim or none; several on one dim in mesh order), so that its consumers
  // propose strategies that read it split, not only replicated.
  unsigned rank = cast<RankedTensorType>(arg.getType()).getRank();
  std::vector<unsigned> axes;
  for (unsigned a = 0; a < plannerMesh.getNumAxes(); ++a)
    if (plannerMesh.getAxis(a).size > 1)
      axes.push_back(a);
  std::vector<unsigned> dimOf(axes.size(), 0); // 0: none, d + 1: dim d
  while (infos[info].layouts.size() < kMaxSeededArgumentLayouts) {
    planner::Layout layout = planner::Layout::replicated(rank);
    for (unsigned i = 0; i < axes.size(); ++i)
      if (dimOf[i] > 0)
        layout.dimAxes[dimOf[i] - 1].push_back(axes[i]);
    infos[info].layouts.emplace_back();
    infos[info].layouts.back().results.push_back(std::move(layout));
    unsigned i = 0;
    while (i < axes.size() && ++dimOf[i] == rank + 1)
      dimOf[i++] = 0;
    if (i == axes.size())
      break;
  }
}

void FunctionPartitioner::addFreeArgumentCandidates(BlockArgument arg,
                                                    unsigned info) {
  // Every layout a use of it needs joins the seeded ones.
  std::vector<PartitionStrategy> &layouts = infos[info].layouts;
  for (const Use &use : uses) {
    if (use.value != arg)
      continue;
    for (const PartitionStrategy &strategy : infos[use.consumer].layouts) {
      // An argument arrives whole: never as partial sums.
      const planner::Layout &layout = strategy.operands[use.operand];
      if (layout.hasPartial() ||
          llvm::any_of(layouts, [&](const PartitionStrategy &known) {
            return known.results[0] == layout;
          }))
        continue;
      layouts.emplace_back();
      layouts.back().results.push_back(layout);
    }
  }
}

LogicalResult FunctionPartitioner::build() {
  // Lazily priced entries are planned on the context's threads when the
  // solver wants them all.
  problem.setParallelFor(
      [context = func.getContext()](size_t count,
                                    const std::function<void(size_t)> &body) {
        mlir::parallelFor(context, 0, count, body);
      });
  freeArgumentInfo.assign(func.getNumArguments(), -1);
  freeResultInfo.assign(func.getNumResults(), -1);
  returnedEarly.assign(func.getNumResults(), false);
  for (BlockArgument arg : func.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType()))
      continue;
    if (isFree(arg.getType())) {
      // Its candidates are known once its uses are (below).
      infos.push_back(NodeInfo{NodeInfo::Source, nullptr, {}, {}, {}, arg});
      freeArgumentInfo[arg.getArgNumber()] = infos.size() - 1;
      producers[arg] = {unsigned(infos.size() - 1), 0};
      seedFreeArgument(arg, infos.size() - 1);
      continue;
    }
    if (!getSharding(arg.getType()))
      return emitFunctionError(func, "cannot be partitioned: argument #")
             << arg.getArgNumber()
             << " needs a tensor type with a #dist.sharding encoding";
    FailureOr<planner::Layout> layout = layoutOfType(arg.getType(), func);
    if (failed(layout))
      return failure();
    producers[arg] = {addSource(nullptr, arg, *layout), 0};
  }
  if (failed(buildBlock(func.getBody().front(), 1)))
    return failure();
  for (BlockArgument arg : func.getArguments())
    if (freeArgumentInfo[arg.getArgNumber()] >= 0)
      addFreeArgumentCandidates(arg, freeArgumentInfo[arg.getArgNumber()]);
  buildProblem();
  return success();
}

LogicalResult FunctionPartitioner::buildBlock(Block &block, double weight) {
  blockWeights[&block] = weight;
  for (Operation &op : block) {
    unsigned firstInfo = infos.size();
    LogicalResult result = success();
    if (isFreeSource(&op) || isa<scf::YieldOp>(op))
      continue; // a loop's yield is its carries' business
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      result = addLoop(loop, weight);
    } else if (!llvm::any_of(op.getOperandTypes(),
                             llvm::IsaPred<RankedTensorType>) &&
               !llvm::any_of(op.getResultTypes(),
                             llvm::IsaPred<RankedTensorType>)) {
      continue; // scalars (a scalar constant) have no layout
    } else if (auto partitionable = dyn_cast<PartitionableOpInterface>(op)) {
      result = addComputeOp(partitionable);
    } else {
      result = addFixedOp(&op);
    }
    if (failed(result))
      return failure();
    if (infos.size() > firstInfo)
      lastInfoOfOp[&op] = infos.size() - 1;
    // The nodes of this op (not those of a loop's body, weighted there).
    for (unsigned info = firstInfo; info < infos.size(); ++info)
      if (infos[info].op && infos[info].op->getBlock() == &block)
        infos[info].weight = weight;
  }
  return success();
}

LogicalResult FunctionPartitioner::addLoop(scf::ForOp loop, double weight) {
  // The body runs once per iteration; a trip count that is not static
  // counts once (the modelled cost is then per iteration).
  double trips = 1;
  if (std::optional<APInt> count = loop.getStaticTripCount())
    trips = static_cast<double>(count->getZExtValue());
  SmallVector<int> carries;
  for (auto [init, arg] :
       llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs())) {
    if (!isa<RankedTensorType>(arg.getType())) {
      carries.push_back(-1);
      continue;
    }
    NodeInfo carry{NodeInfo::Carry, loop, {}, {}, {}, arg};
    carry.weight = weight;
    infos.push_back(std::move(carry));
    unsigned info = infos.size() - 1;
    carries.push_back(info);
    producers[arg] = {info, 0};
  }
  // The carries' candidates are only known once the body is: every layout
  // the init or the yielded value may come in, and every layout a use in
  // the body needs; each carry starts with none.
  carriesOfLoop[loop] = carries;
  if (failed(buildBlock(*loop.getBody(), weight * trips)))
    return failure();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [i, carryInfo] : llvm::enumerate(carries)) {
    if (carryInfo < 0)
      continue;
    unsigned carry = carryInfo;
    std::vector<planner::Layout> candidates;
    auto note = [&](const planner::Layout &layout) {
      if (!llvm::is_contained(candidates, layout))
        candidates.push_back(layout);
    };
    for (Value flowing : {loop.getInitArgs()[i], yield.getOperand(i)}) {
      auto it = producers.find(flowing);
      if (it == producers.end())
        continue;
      for (const PartitionStrategy &layouts : infos[it->second.info].layouts)
        if (it->second.result < layouts.results.size())
          note(layouts.results[it->second.result]);
    }
    for (const Use &use : uses)
      if (use.value == loop.getRegionIterArgs()[i])
        for (const PartitionStrategy &layouts : infos[use.consumer].layouts)
          note(layouts.operands[use.operand]);
    auto type = cast<RankedTensorType>(loop.getRegionIterArgs()[i].getType());
    if (candidates.empty())
      note(planner::Layout::replicated(type.getRank()));
    for (planner::Layout &layout : candidates) {
      infos[carry].layouts.emplace_back();
      infos[carry].layouts.back().operands.push_back(layout);
      infos[carry].layouts.back().results.push_back(std::move(layout));
    }
    if (failed(addUse(carry, 0, loop.getInitArgs()[i])))
      return failure();
    // A value carried unchanged needs no move.
    if (yield.getOperand(i) != loop.getRegionIterArgs()[i] &&
        failed(addUse(carry, 0, yield.getOperand(i))))
      return failure();
    producers[loop.getResult(i)] = {carry, 0};
  }
  return success();
}
