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

LogicalResult FunctionPartitioner::apply(const SolveOptions &options,
                                         Solution &solution, unsigned &reshards,
                                         unsigned &computeOps) {
  solution = problem.solve(options);
  if (!solution.fits)
    return failure(); // the caller names the smallest budget that fits
  if (solution.choice.empty() || std::isinf(solution.total.time))
    return emitFunctionError(func,
                             "cannot be partitioned: no choice of layouts "
                             "reaches the declared ones (some reshard has no "
                             "plan)");
  const std::vector<unsigned> &choice = solution.choice;
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
  // Moves `value` into `target` before `user` (reusing an equal move), or
  // right after the value is produced with `early` (a result only the
  // return reads, as the problem placed it: BuildProblem.cpp).
  DenseMap<std::pair<Value, Type>, Value> moved;
  auto moveTo = [&](Value value, RankedTensorType target, Operation *user,
                    bool early = false) -> FailureOr<Value> {
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
      OpBuilder b(value.getParentBlock()->findAncestorOpInBlock(*user));
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
    // In the block that defines the value, before the op that holds the
    // user: a move of a value a loop does not change runs once, not once
    // per iteration (as the problem priced it).
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
          infos[hub->second]
              .layouts[choice[nodeOfInfo[hub->second]]]
              .results[0];
      FailureOr<Value> placed = moveTo(
          value, typeFor(cast<RankedTensorType>(value.getType()), layout),
          user);
      if (failed(placed))
        return failure();
      moved = *placed;
    }
    return moved;
  };

  // Moves `operand` into `target` for its owner.
  auto place = [&](OpOperand &operand, RankedTensorType target) {
    FailureOr<Value> from = source(operand.get(), target, operand.getOwner());
    if (failed(from))
      return failure();
    FailureOr<Value> placed = moveTo(*from, target, operand.getOwner());
    if (failed(placed))
      return failure();
    operand.set(*placed);
    return success();
  };

  // Free arguments and results (semantics §6a) take their chosen layouts,
  // in the block and in the function type, before any use is placed.
  freeBoundary.clear();
  SmallVector<Type> inputs(func.getArgumentTypes()),
      outputs(func.getResultTypes());
  // A free argument's node gives its layout; a free result's sink needs it.
  auto chooseFree = [&](ArrayRef<int> infoOf, SmallVector<Type> &types,
                        bool result) {
    for (auto [i, info] : llvm::enumerate(infoOf)) {
      if (info < 0)
        continue;
      const PartitionStrategy &chosen =
          infos[info].layouts[choice[nodeOfInfo[info]]];
      types[i] = withLayout(cast<RankedTensorType>(types[i]),
                            result ? chosen.operands[0] : chosen.results[0]);
      freeBoundary.push_back(
          {result, unsigned(i), cast<RankedTensorType>(types[i])});
    }
  };
  chooseFree(freeArgumentInfo, inputs, /*result=*/false);
  chooseFree(freeResultInfo, outputs, /*result=*/true);
  for (auto [arg, type] : llvm::zip(func.getArguments(), inputs))
    arg.setType(type);
  func.setFunctionType(FunctionType::get(func.getContext(), inputs, outputs));

  std::function<LogicalResult(Block &)> applyBlock =
      [&](Block &block) -> LogicalResult {
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (auto loop = dyn_cast<scf::ForOp>(op)) {
        // Carried tensors take their carry's layout (block argument and
        // result alike) before the body reads them; the inits move into it
        // before the loop, the yielded values at the end of the body.
        SmallVector<int> carries = carriesOfLoop.lookup(loop);
        SmallVector<RankedTensorType> carried;
        for (auto [i, carry] : llvm::enumerate(carries)) {
          carried.emplace_back();
          if (carry < 0)
            continue;
          const planner::Layout &layout =
              infos[carry].layouts[choice[nodeOfInfo[carry]]].results[0];
          carried.back() = typeFor(
              cast<RankedTensorType>(loop.getInitArgs()[i].getType()), layout);
          loop.getRegionIterArgs()[i].setType(carried.back());
          loop.getResult(i).setType(carried.back());
        }
        for (auto [i, init] : llvm::enumerate(loop.getInitArgsMutable()))
          if (carried[i] && failed(place(init, carried[i])))
            return failure();
        if (failed(applyBlock(*loop.getBody())))
          return failure();
        Operation *yield = loop.getBody()->getTerminator();
        for (auto [i, yielded] : llvm::enumerate(yield->getOpOperands()))
          if (carried[i] && failed(place(yielded, carried[i])))
            return failure();
        continue;
      }
      if (isa<scf::YieldOp>(op))
        continue;
      auto it = infoOfOp.find(&op);
      if (it != infoOfOp.end()) {
        ++computeOps;
        const NodeInfo &info = infos[it->second];
        const PartitionStrategy &layouts =
            info.layouts[choice[nodeOfInfo[it->second]]];
        SmallVector<RankedTensorType> declared, resultTypes;
        // Scalar results (tensor.extract's) keep their type.
        for (OpResult result : op.getResults()) {
          declared.push_back(dyn_cast<RankedTensorType>(result.getType()));
          resultTypes.push_back(
              declared.back()
                  ? typeFor(declared.back(),
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
              tied >= 0
                  ? resultTypes[tied]
                  : typeFor(cast<RankedTensorType>(operand.get().getType()),
                            layouts.operands[o]);
          FailureOr<Value> from = source(operand.get(), target, &op);
          if (failed(from))
            return failure();
          FailureOr<Value> placed = moveTo(*from, target, &op);
          if (failed(placed))
            return failure();
          // A lookup's body reads its table too (TableReads.h): both read
          // the placed one.
          std::optional<TableRead> read;
          if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
            read = lookupTableRead(linalgOp, operand);
          operand.set(*placed);
          if (read)
            read->extract.getTensorMutable().set(*placed);
        }
        for (OpResult result : op.getResults()) {
          unsigned r = result.getResultNumber();
          if (!resultTypes[r])
            continue;
          cast<PartitionableOpInterface>(&op).setResultLayout(r,
                                                              resultTypes[r]);
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
          declared =
              func.getFunctionType().getResult(operand.getOperandNumber());
        if (!getSharding(declared))
          return op.emitOpError("cannot be partitioned: operand #")
                 << operand.getOperandNumber()
                 << " needs a tensor type with a #dist.sharding encoding";
        FailureOr<Value> from =
            source(operand.get(), cast<RankedTensorType>(declared), &op);
        if (failed(from))
          return failure();
        bool early = isa<func::ReturnOp>(op) &&
                     returnedEarly[operand.getOperandNumber()];
        FailureOr<Value> placed =
            moveTo(*from, cast<RankedTensorType>(declared), &op, early);
        if (failed(placed))
          return failure();
        operand.set(*placed);
      }
    }
    return success();
  };
  if (failed(applyBlock(func.getBody().front())))
    return failure();

  // Constants and empty tensors nothing uses any more (a fill before the
  // empty it fills).
  // (A post-order walk may erase the op it visits.)
  func.walk<WalkOrder::PostOrder, mlir::ReverseIterator>([&](Operation *op) {
    if (isFreeSource(op) && op->use_empty())
      op->erase();
  });
  return success();
}
