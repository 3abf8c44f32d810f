//===- ApplyChoice.cpp - write a solved layout problem back into the IR ---===//
//
// Every compute op gets the layouts of its chosen strategy, constants and
// empty tensors the layout of their one use, and a dist.reshard goes wherever
// an operand (or a binding result) must move.
//
//===----------------------------------------------------------------------===//

#include "FunctionError.h"
#include "FunctionPartitioner.h"

#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/Dialect/Dist/Transforms/TableReads.h"

#include "mlir/IR/Builders.h"

#include "mlir/IR/Iterators.h"

#include <functional>

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace dist::partition {

/// Writes a solved layout problem back into the function: the state one
/// write shares (the moves already made, the hubs' copies, what each value
/// stands for), one method per kind of op.
class ChoiceWriter {
public:
  ChoiceWriter(FunctionPartitioner &p, const std::vector<unsigned> &choice)
      : p(p), func(p.func), choice(choice), live(p.producers) {}

  LogicalResult write();
  unsigned reshards = 0, computeOps = 0;

private:
  const PartitionStrategy &chosen(int info) const {
    return p.infos[info].layouts[choice[p.nodeOfInfo[info]]];
  }
  RankedTensorType typeFor(RankedTensorType like,
                           const planner::Layout &layout);
  FailureOr<Value> moveTo(Value value, RankedTensorType target, Operation *user,
                          bool early = false);
  FailureOr<Value> moveConstantFill(Value value, RankedTensorType target,
                                    Operation *user);
  FailureOr<Value> source(Value value, RankedTensorType target,
                          Operation *user);
  LogicalResult place(OpOperand &operand, RankedTensorType target,
                      bool early = false);
  void chooseFreeBoundary();
  LogicalResult writeBlock(Block &block);
  LogicalResult writeLoop(scf::ForOp loop);
  LogicalResult writeComputeOp(Operation &op, int infoIndex);
  void bindResults(Operation &op, ArrayRef<RankedTensorType> declared,
                   ArrayRef<RankedTensorType> resultTypes);
  LogicalResult writeFixedOp(Operation &op);

  FunctionPartitioner &p;
  func::FuncOp func;
  const std::vector<unsigned> &choice;
  /// The moves made so far, reused by later uses of the same value.
  DenseMap<std::pair<Value, Type>, Value> moved;
  /// A value with a hub is moved once into the hub's layout, before its
  /// first use; every use moves on from there.
  DenseMap<Value, Value> hubbed;
  /// The producer each value the rewritten ops read stands for (a binding
  /// result is read through its reshard, which stands for the source).
  DenseMap<Value, Producer> live;
};

} // namespace dist::partition

/// The type of a tensor of `like`'s shape in `layout`: `like` itself when it
/// already says that layout (a binding type is kept as written).
RankedTensorType ChoiceWriter::typeFor(RankedTensorType like,
                                       const planner::Layout &layout) {
  if (getSharding(like)) {
    FailureOr<planner::Layout> own = p.layoutOfType(like, func);
    if (succeeded(own) && *own == layout)
      return like;
  }
  return p.withLayout(like, layout);
}

/// The constant is computed in the layout, except that a partial constant
/// holds the value on one device and the identity elsewhere: that is the
/// (local) replicate_to_partial of the whole one.
FailureOr<Value> ChoiceWriter::moveConstantFill(Value value,
                                                RankedTensorType target,
                                                Operation *user) {
  FailureOr<planner::Layout> wanted = p.layoutOfType(target, user);
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
  OpBuilder b(value.getParentBlock()->findAncestorOpInBlock(*user));
  ++reshards;
  return ReshardOp::create(b, user->getLoc(), target, value).getResult();
}

/// Moves `value` into `target` before `user` (reusing an equal move), or
/// right after the value is produced with `early` (a result only the return
/// reads, as the problem placed it: BuildProblem.cpp).
FailureOr<Value> ChoiceWriter::moveTo(Value value, RankedTensorType target,
                                      Operation *user, bool early) {
  auto type = cast<RankedTensorType>(value.getType());
  if (auto empty = value.getDefiningOp<tensor::EmptyOp>()) {
    // Nothing to move: the empty tensor takes the layout.
    empty.getResult().setType(target);
    return value;
  }
  if (isConstantFill(value.getDefiningOp()))
    return moveConstantFill(value, target, user);
  if (!getSharding(type))
    return user->emitOpError("dist-partition: internal error: operand "
                             "without a layout");
  if (type == target)
    return value;
  FailureOr<planner::Layout> current = p.layoutOfType(type, user);
  FailureOr<planner::Layout> wanted = p.layoutOfType(target, user);
  if (failed(current) || failed(wanted))
    return failure();
  // In the block that defines the value, before the op that holds the
  // user: a move of a value a loop does not change runs once, not once per
  // iteration (as the problem priced it).
  Operation *anchor = value.getParentBlock()->findAncestorOpInBlock(*user);
  Value &cached = moved[{value, target}];
  if (cached && cached.getDefiningOp()->isBeforeInBlock(anchor))
    return cached;
  OpBuilder b(anchor);
  if (early) {
    if (Operation *producer = value.getDefiningOp())
      b.setInsertionPointAfter(producer);
    else
      b.setInsertionPointToStart(value.getParentBlock());
  }
  cached = ReshardOp::create(b, user->getLoc(), target, value);
  // Equal layouts written differently need no move, only the type.
  if (*current != *wanted)
    ++reshards;
  return cached;
}

/// What a use of `value` reads: the value itself, or its hub's copy.
FailureOr<Value> ChoiceWriter::source(Value value, RankedTensorType target,
                                      Operation *user) {
  // A use that wants the value as it is reads it directly (slicing the
  // hub's gathered copy instead would be free, but wasteful).
  if (value.getType() == target)
    return value;
  auto producer = live.find(value);
  if (producer == live.end())
    return value;
  auto hub = p.hubs.find(keyOf(producer->second));
  if (hub == p.hubs.end())
    return value;
  Value &copy = hubbed[value];
  if (!copy) {
    const planner::Layout &layout = chosen(hub->second).results[0];
    FailureOr<Value> placed = moveTo(
        value, typeFor(cast<RankedTensorType>(value.getType()), layout), user);
    if (failed(placed))
      return failure();
    copy = *placed;
  }
  return copy;
}

/// Moves `operand` into `target` for its owner.
LogicalResult ChoiceWriter::place(OpOperand &operand, RankedTensorType target,
                                  bool early) {
  FailureOr<Value> from = source(operand.get(), target, operand.getOwner());
  if (failed(from))
    return failure();
  FailureOr<Value> placed = moveTo(*from, target, operand.getOwner(), early);
  if (failed(placed))
    return failure();
  operand.set(*placed);
  return success();
}

/// Free arguments and results (semantics §6a) take their chosen layouts, in
/// the block and in the function type, before any use is placed.
void ChoiceWriter::chooseFreeBoundary() {
  p.freeBoundary.clear();
  SmallVector<Type> inputs(func.getArgumentTypes()),
      outputs(func.getResultTypes());
  // A free argument's node gives its layout; a free result's sink needs it.
  auto chooseFree = [&](ArrayRef<int> infoOf, SmallVector<Type> &types,
                        bool result) {
    for (auto [i, info] : llvm::enumerate(infoOf)) {
      if (info < 0)
        continue;
      const PartitionStrategy &strategy = chosen(info);
      types[i] =
          p.withLayout(cast<RankedTensorType>(types[i]),
                       result ? strategy.operands[0] : strategy.results[0]);
      p.freeBoundary.push_back(
          {result, unsigned(i), cast<RankedTensorType>(types[i])});
    }
  };
  chooseFree(p.freeArgumentInfo, inputs, /*result=*/false);
  chooseFree(p.freeResultInfo, outputs, /*result=*/true);
  for (auto [arg, type] : llvm::zip(func.getArguments(), inputs))
    arg.setType(type);
  func.setFunctionType(FunctionType::get(func.getContext(), inputs, outputs));
}

/// Carried tensors take their carry's layout (block argument and result
/// alike) before the body reads them; the inits move into it before the
/// loop, the yielded values at the end of the body.
LogicalResult ChoiceWriter::writeLoop(scf::ForOp loop) {
  SmallVector<int> carries = p.carriesOfLoop.lookup(loop);
  SmallVector<RankedTensorType> carried;
  for (auto [i, carry] : llvm::enumerate(carries)) {
    carried.emplace_back();
    if (carry < 0)
      continue;
    carried.back() =
        typeFor(cast<RankedTensorType>(loop.getInitArgs()[i].getType()),
                chosen(carry).results[0]);
    loop.getRegionIterArgs()[i].setType(carried.back());
    loop.getResult(i).setType(carried.back());
  }
  for (auto [i, init] : llvm::enumerate(loop.getInitArgsMutable()))
    if (carried[i] && failed(place(init, carried[i])))
      return failure();
  if (failed(writeBlock(*loop.getBody())))
    return failure();
  Operation *yield = loop.getBody()->getTerminator();
  for (auto [i, yielded] : llvm::enumerate(yield->getOpOperands()))
    if (carried[i] && failed(place(yielded, carried[i])))
      return failure();
  return success();
}

/// A compute op: its operands placed and its results typed by its chosen
/// strategy.
LogicalResult ChoiceWriter::writeComputeOp(Operation &op, int infoIndex) {
  ++computeOps;
  const NodeInfo &info = p.infos[infoIndex];
  const PartitionStrategy &layouts = chosen(infoIndex);
  SmallVector<RankedTensorType> declared, resultTypes;
  // Scalar results (tensor.extract's) keep their type.
  for (OpResult result : op.getResults()) {
    declared.push_back(dyn_cast<RankedTensorType>(result.getType()));
    resultTypes.push_back(
        declared.back() ? typeFor(declared.back(),
                                  layouts.results[result.getResultNumber()])
                        : RankedTensorType());
  }
  for (OpOperand &operand : op.getOpOperands()) {
    unsigned o = operand.getOperandNumber();
    if (!info.placed[o])
      continue;
    // A tied operand (a linalg init) takes its result's type exactly.
    int tied = info.tiedResult[o];
    RankedTensorType target =
        tied >= 0 ? resultTypes[tied]
                  : typeFor(cast<RankedTensorType>(operand.get().getType()),
                            layouts.operands[o]);
    FailureOr<Value> from = source(operand.get(), target, &op);
    if (failed(from))
      return failure();
    FailureOr<Value> placed = moveTo(*from, target, &op);
    if (failed(placed))
      return failure();
    // A lookup's body reads its table too (TableReads.h): both read the
    // placed one.
    std::optional<TableRead> read;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      read = lookupTableRead(linalgOp, operand);
    operand.set(*placed);
    if (read)
      read->extract.getTensorMutable().set(*placed);
  }
  bindResults(op, declared, resultTypes);
  return success();
}

/// The op's results take their computed types; a binding type the op does
/// not compute in is moved into right after it.
void ChoiceWriter::bindResults(Operation &op,
                               ArrayRef<RankedTensorType> declared,
                               ArrayRef<RankedTensorType> resultTypes) {
  for (OpResult result : op.getResults()) {
    unsigned r = result.getResultNumber();
    if (!resultTypes[r])
      continue;
    cast<PartitionableOpInterface>(&op).setResultLayout(r, resultTypes[r]);
    if (!getSharding(declared[r]) || declared[r] == resultTypes[r]) {
      if (p.bindingSource.count(result))
        live[result] = {p.bindingSource.lookup(result), 0};
      continue;
    }
    OpBuilder b(op.getContext());
    b.setInsertionPointAfter(&op);
    auto reshard = ReshardOp::create(b, op.getLoc(), declared[r], result);
    ++reshards;
    result.replaceAllUsesExcept(reshard.getResult(), reshard);
    live[reshard.getResult()] = {p.bindingSource.lookup(result), 0};
  }
}

/// Fixed ops (the return, calls, dist ops): operands into their declared
/// layouts.
LogicalResult ChoiceWriter::writeFixedOp(Operation &op) {
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
    bool early =
        isa<func::ReturnOp>(op) && p.returnedEarly[operand.getOperandNumber()];
    if (failed(place(operand, cast<RankedTensorType>(declared), early)))
      return failure();
  }
  return success();
}

LogicalResult ChoiceWriter::writeBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      if (failed(writeLoop(loop)))
        return failure();
      continue;
    }
    if (isa<scf::YieldOp>(op))
      continue;
    auto it = p.infoOfOp.find(&op);
    if (it != p.infoOfOp.end()) {
      if (failed(writeComputeOp(op, it->second)))
        return failure();
      continue;
    }
    if (isFreeSource(&op))
      continue;
    if (failed(writeFixedOp(op)))
      return failure();
  }
  return success();
}

LogicalResult ChoiceWriter::write() {
  chooseFreeBoundary();
  if (failed(writeBlock(func.getBody().front())))
    return failure();
  // Constants and empty tensors nothing uses any more (a fill before the
  // empty it fills). (A post-order walk may erase the op it visits.)
  func.walk<WalkOrder::PostOrder, mlir::ReverseIterator>([&](Operation *op) {
    if (isFreeSource(op) && op->use_empty())
      op->erase();
  });
  return success();
}

LogicalResult FunctionPartitioner::apply(const Solution &solution,
                                         unsigned &reshards,
                                         unsigned &computeOps) {
  if (solution.choice.empty() || std::isinf(solution.total.time))
    return emitFunctionError(func,
                             "cannot be partitioned: no choice of layouts "
                             "reaches the declared ones (some reshard has no "
                             "plan)");
  ChoiceWriter writer(*this, solution.choice);
  LogicalResult written = writer.write();
  reshards = writer.reshards;
  computeOps = writer.computeOps;
  return written;
}
