//===- SplitStages.cpp - compute on several meshes as stage functions -----===//
//
// Semantics §3c (SplitStages.h). Each op of the function's body gets the
// mesh of the layouts its tensors carry; an op whose tensors carry none takes
// the mesh of the ops it exchanges values with. The ops of one mesh that
// follow one another (ops on scalars alone do not interrupt them; a reshard
// to another mesh does) are one stage. Program order is a topological order,
// so a stage only reads what earlier stages and the function computed: the
// stages never form a cycle.
//
//===----------------------------------------------------------------------===//

#include "SplitStages.h"

#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {

/// Meshes by symbol name.
using MeshSet = llvm::SmallSetVector<StringAttr, 2>;

/// The meshes of the layouts on the tensors `op` touches, its regions'
/// included.
MeshSet meshesOf(Operation *op) {
  MeshSet meshes;
  auto note = [&](Type type) {
    if (ShardingAttr sharding = getSharding(type))
      meshes.insert(sharding.getMesh().getAttr());
  };
  op->walk([&](Operation *inner) {
    for (Type type : inner->getOperandTypes())
      note(type);
    for (Type type : inner->getResultTypes())
      note(type);
    for (Region &region : inner->getRegions())
      for (Block &block : region)
        for (BlockArgument argument : block.getArguments())
          note(argument.getType());
  });
  return meshes;
}

bool touchesTensors(Operation *op) {
  bool found = false;
  op->walk([&](Operation *inner) {
    found |=
        llvm::any_of(inner->getOperandTypes(),
                     llvm::IsaPred<RankedTensorType>) ||
        llvm::any_of(inner->getResultTypes(), llvm::IsaPred<RankedTensorType>);
  });
  return found;
}

/// A reshard from one mesh to another: a hand-off between stages, which
/// stays in the function.
bool isCrossMeshReshard(Operation *op) {
  auto reshard = dyn_cast<ReshardOp>(op);
  if (!reshard)
    return false;
  ShardingAttr from = getSharding(reshard.getInput().getType());
  ShardingAttr to = getSharding(reshard.getType());
  return from && to && from.getMesh() != to.getMesh();
}

std::string listMeshes(const MeshSet &meshes) {
  std::string text;
  for (StringAttr mesh : meshes)
    text += (text.empty() ? "" : " and ") + ("@" + mesh.getValue()).str();
  return text;
}

class StageSplitter {
public:
  StageSplitter(func::FuncOp func, SymbolTable &symbols)
      : func(func), block(func.getBody().front()), symbols(symbols) {}

  LogicalResult assignMeshes();
  void formStages();
  LogicalResult checkCrossings();
  Stage outline(unsigned index);
  size_t numStages() const { return stages.size(); }

private:
  /// The op of the function's body that `op` is or lies in.
  Operation *topLevel(Operation *op) const {
    return block.findAncestorOpInBlock(*op);
  }
  /// The body op that defines `value` (null: an argument of the function).
  Operation *producer(Value value) {
    if (Operation *def = value.getDefiningOp())
      return topLevel(def);
    Operation *owner = value.getParentBlock()->getParentOp();
    return owner == func.getOperation() ? nullptr : topLevel(owner);
  }
  /// The meshes of the ops `op` exchanges values with, so far.
  MeshSet neighbourMeshes(Operation *op);

  struct Run {
    StringAttr mesh;
    SmallVector<Operation *> ops;
  };
  func::FuncOp func;
  Block &block;
  SymbolTable &symbols;
  DenseMap<Operation *, StringAttr> meshOf;
  DenseMap<Operation *, unsigned> stageOf;
  /// The last stage function made: the next goes after it.
  Operation *lastInserted = nullptr;
  SmallVector<Run> stages;
};

MeshSet StageSplitter::neighbourMeshes(Operation *op) {
  MeshSet meshes;
  auto note = [&](Operation *other) {
    if (auto it = meshOf.find(other); other && it != meshOf.end())
      meshes.insert(it->second);
  };
  for (Value operand : op->getOperands())
    note(producer(operand));
  visitUsedValuesDefinedAbove(
      op->getRegions(), [&](OpOperand *use) { note(producer(use->get())); });
  // Scalars a stage computes stay with it; tensors without a layout go to
  // whichever stage uses them.
  if (touchesTensors(op))
    for (Operation *user : op->getUsers())
      note(topLevel(user));
  return meshes;
}

/// An empty tensor or a tensor constant read by several ops: one copy per
/// reader, so that each goes to its reader's stage (as Normalize.h does for
/// the layouts).
static void cloneFreeSourcesPerUse(Block &block) {
  for (Operation &op : block.without_terminator()) {
    if (!isa<tensor::EmptyOp, arith::ConstantOp>(op) ||
        op.getNumResults() != 1 ||
        !isa<RankedTensorType>(op.getResult(0).getType()))
      continue;
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op.getResult(0).getUses())
      uses.push_back(&use);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      OpBuilder builder(&op);
      use->set(builder.clone(op)->getResult(0));
    }
  }
}

LogicalResult StageSplitter::assignMeshes() {
  cloneFreeSourcesPerUse(block);
  SmallVector<Operation *> open;
  for (Operation &op : block.without_terminator()) {
    if (isCrossMeshReshard(&op))
      continue;
    MeshSet meshes = meshesOf(&op);
    if (meshes.size() > 1)
      return op.emitOpError("cannot be partitioned: it uses tensors on ")
             << listMeshes(meshes)
             << " (semantics §3c: each op computes on one mesh; a "
                "dist.reshard moves a tensor to another)";
    if (meshes.size() == 1)
      meshOf[&op] = meshes.front();
    else
      open.push_back(&op);
  }
  // Ops without layouts take their neighbours' mesh, until nothing changes.
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation *op : open) {
      if (meshOf.count(op))
        continue;
      MeshSet meshes = neighbourMeshes(op);
      if (meshes.size() > 1)
        return op->emitOpError("cannot be partitioned: it exchanges values "
                               "with ops on ")
               << listMeshes(meshes)
               << " (semantics §3c: each op computes on one mesh; a "
                  "dist.reshard moves a tensor to another)";
      if (meshes.size() == 1) {
        meshOf[op] = meshes.front();
        changed = true;
      }
    }
  }
  for (Operation *op : open)
    if (!meshOf.count(op) && touchesTensors(op))
      return op->emitOpError("cannot be partitioned: no tensor it uses or "
                             "computes has a layout, so it has no mesh (give "
                             "one a #dist.sharding type)");
  return success();
}

void StageSplitter::formStages() {
  bool interrupted = true;
  for (Operation &op : block.without_terminator()) {
    if (isCrossMeshReshard(&op)) {
      interrupted = true;
      continue;
    }
    auto it = meshOf.find(&op);
    if (it == meshOf.end())
      continue; // On scalars alone: stays in the function.
    if (interrupted || stages.back().mesh != it->second)
      stages.push_back({it->second, {}});
    interrupted = false;
    stages.back().ops.push_back(&op);
    stageOf[&op] = stages.size() - 1;
  }
}

/// A value that leaves a stage for a stage on another mesh must be a tensor
/// handed over by a reshard; a stage's arguments and results need layouts.
LogicalResult StageSplitter::checkCrossings() {
  for (auto [index, stage] : llvm::enumerate(stages))
    for (Operation *op : stage.ops)
      for (Value result : op->getResults())
        for (OpOperand &use : result.getUses()) {
          Operation *user = topLevel(use.getOwner());
          auto other = stageOf.find(user);
          if (other == stageOf.end() || other->second == index)
            continue;
          if (stages[other->second].mesh != stage.mesh)
            return use.getOwner()->emitOpError(
                       "cannot be partitioned: it uses a value computed on @")
                   << stage.mesh.getValue() << " while it computes on @"
                   << stages[other->second].mesh.getValue()
                   << " (semantics §3c: values go from one mesh to another "
                      "as tensors, through a dist.reshard)";
          if (isa<RankedTensorType>(result.getType()) &&
              !getSharding(result.getType()))
            return op->emitOpError(
                "cannot be partitioned: its result goes from one stage to a "
                "later one on the same mesh without a layout (give it a "
                "#dist.sharding type)");
        }
  return success();
}

Stage StageSplitter::outline(unsigned index) {
  Run &run = stages[index];
  llvm::SmallPtrSet<Operation *, 16> members(run.ops.begin(), run.ops.end());
  auto inside = [&](Value value) {
    Operation *def = producer(value);
    return def && members.contains(def);
  };
  // Inputs: what the stage reads from before it; constants are cloned.
  llvm::SetVector<Value> inputs;
  for (Operation *op : run.ops) {
    for (Value operand : op->getOperands())
      if (!inside(operand))
        inputs.insert(operand);
    visitUsedValuesDefinedAbove(op->getRegions(), [&](OpOperand *use) {
      if (!inside(use->get()))
        inputs.insert(use->get());
    });
  }
  SmallVector<Value> arguments, constants;
  for (Value input : inputs) {
    Operation *def = input.getDefiningOp();
    if (def && def->getNumRegions() == 0 && matchPattern(def, m_Constant()))
      constants.push_back(input);
    else
      arguments.push_back(input);
  }
  // Outputs: what the function uses after the stage.
  SmallVector<Value> outputs;
  for (Operation *op : run.ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return !members.contains(topLevel(user));
          }))
        outputs.push_back(result);

  OpBuilder builder(func);
  builder.setInsertionPointAfter(lastInserted ? lastInserted : func);
  Location loc = run.ops.front()->getLoc();
  auto type = builder.getFunctionType(ValueRange(arguments).getTypes(),
                                      ValueRange(outputs).getTypes());
  auto stageFunc = func::FuncOp::create(
      builder, loc, (func.getSymName() + "_stage" + Twine(index)).str(), type);
  stageFunc.setPrivate();
  symbols.insert(stageFunc);
  lastInserted = stageFunc;
  Block *body = stageFunc.addEntryBlock();
  Operation *callSite = run.ops.back()->getNextNode();
  auto replaceInside = [&](Value from, Value to) {
    from.replaceUsesWithIf(to, [&](OpOperand &use) {
      return stageFunc->isProperAncestor(use.getOwner());
    });
  };
  for (Operation *op : run.ops)
    op->moveBefore(body, body->end());
  builder.setInsertionPointToStart(body);
  for (Value constant : constants) {
    replaceInside(constant,
                  builder.clone(*constant.getDefiningOp())->getResult(0));
    if (constant.use_empty())
      constant.getDefiningOp()->erase();
  }
  for (auto [argument, blockArgument] :
       llvm::zip(arguments, body->getArguments()))
    replaceInside(argument, blockArgument);
  builder.setInsertionPointToEnd(body);
  func::ReturnOp::create(builder, loc, outputs);

  builder.setInsertionPoint(callSite);
  auto call = func::CallOp::create(builder, loc, stageFunc, arguments);
  for (auto [output, result] : llvm::zip(outputs, call.getResults()))
    output.replaceUsesWithIf(result, [&](OpOperand &use) {
      return !stageFunc->isProperAncestor(use.getOwner());
    });
  return {stageFunc, FlatSymbolRefAttr::get(run.mesh),
          static_cast<unsigned>(run.ops.size())};
}

} // namespace

LogicalResult dist::partition::splitStages(func::FuncOp func,
                                           SymbolTable &symbols,
                                           SmallVectorImpl<Stage> &stages) {
  if (func.isExternal() || !func.getBody().hasOneBlock())
    return success();
  MeshSet meshes = meshesOf(func);
  for (Type type : func.getFunctionType().getInputs())
    if (ShardingAttr sharding = getSharding(type))
      meshes.insert(sharding.getMesh().getAttr());
  // Calls and dist ops alone (stages written as functions, hand-offs
  // between them) are left as they are.
  bool computes = llvm::any_of(func.getBody().front(), [](Operation &op) {
    return !isa<func::CallOp, func::ReturnOp>(op) &&
           !isa_and_nonnull<DistDialect>(op.getDialect()) &&
           touchesTensors(&op);
  });
  if (meshes.size() < 2 || !computes)
    return success();
  if (func->hasAttr("dist.auto"))
    return mlir::emitError(func.getLoc())
           << "'" << func->getName()
           << "' op cannot be partitioned: dist.auto chooses layouts on one "
              "mesh, but its compute uses "
           << listMeshes(meshes)
           << " (semantics §3c: give the stages' arguments layouts)";
  // What nothing uses has no stage to go to.
  SmallVector<Operation *> body;
  for (Operation &op : func.getBody().front().without_terminator())
    body.push_back(&op);
  for (Operation *op : llvm::reverse(body))
    if (isOpTriviallyDead(op))
      op->erase();
  StageSplitter splitter(func, symbols);
  if (failed(splitter.assignMeshes()))
    return failure();
  splitter.formStages();
  if (failed(splitter.checkCrossings()))
    return failure();
  for (unsigned i = 0; i < splitter.numStages(); ++i)
    stages.push_back(splitter.outline(i));
  return success();
}

void dist::partition::markStageFunction(func::FuncOp func,
                                        SymbolTableCollection &symbols) {
  if (func.isExternal())
    return;
  bool calls = false;
  func.walk([&](func::CallOp) { calls = true; });
  MeshSet meshes = meshesOf(func);
  for (Type type : func.getFunctionType().getInputs())
    if (ShardingAttr sharding = getSharding(type))
      meshes.insert(sharding.getMesh().getAttr());
  if (calls || meshes.size() != 1)
    return;
  auto name = FlatSymbolRefAttr::get(meshes.front());
  auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(func, name);
  if (!mesh || !mesh.getDevices())
    return;
  func->setAttr(kStageAttrName, name);
}
