//===- Normalize.cpp - bring global-view compute into one form ------------===//

#include "Normalize.h"
#include "FunctionError.h"

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Interfaces/PartitionableOpInterface.h"
#include "dist/Dialect/Dist/Transforms/ElementwiseToLinalg.h"
#include "dist/Dialect/Dist/Transforms/TableReads.h"
#include "dist/Dialect/Dist/Transforms/ValueLayouts.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace dist;

static bool isTensor(Type type) { return isa<RankedTensorType>(type); }

static bool touchesTensors(Operation *op) {
  return llvm::any_of(op->getOperandTypes(), isTensor) ||
         llvm::any_of(op->getResultTypes(), isTensor);
}

/// arith/math elementwise op on tensors -> linalg.generic
/// (ElementwiseToLinalg.h), or a located error.
static LogicalResult rewriteElementwise(Operation *op) {
  if (op->getNumResults() != 1)
    return op->emitOpError("cannot be partitioned: an elementwise op with ")
           << op->getNumResults() << " results";
  if (!cast<RankedTensorType>(op->getResult(0).getType()).hasStaticShape())
    return op->emitOpError("cannot be partitioned: dynamic shapes are not "
                           "supported");
  return rewriteElementwiseToGeneric(op);
}

/// The tensors a linalg op's body reads without them being operands.
static llvm::SetVector<Value> capturedTensors(linalg::LinalgOp op) {
  llvm::SetVector<Value> captured;
  op->getRegion(0).walk([&](Operation *inner) {
    for (Value operand : inner->getOperands()) {
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      Region *home = operand.getParentRegion();
      if (type && !(home && op->getRegion(0).isAncestor(home)))
        captured.insert(operand);
    }
  });
  return captured;
}

/// A table the body looks up (an embedding's: `tensor.extract %table[%id,
/// %j]`) becomes an input of the op too, in the lookup form of
/// TableReads.h, so that dist-partition places it like any operand (split
/// by its rows, a vocabulary-parallel lookup, where that is cheapest).
static linalg::LinalgOp giveTablesAsInputs(linalg::LinalgOp op) {
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic)
    return op;
  SmallVector<Value> tables;
  SmallVector<AffineMap> tableMaps;
  for (Value value : capturedTensors(op))
    if (std::optional<TableRead> read = matchTableRead(generic, value)) {
      tables.push_back(value);
      tableMaps.push_back(
          tableIndexingMap(*read, op.getNumLoops(), op.getContext()));
    }
  if (tables.empty())
    return op;
  unsigned numInputs = op.getNumDpsInputs();
  SmallVector<Value> inputs(op.getDpsInputs());
  inputs.append(tables);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.insert(maps.begin() + numInputs, tableMaps.begin(), tableMaps.end());
  OpBuilder b(op);
  auto rebuilt = linalg::GenericOp::create(b, op.getLoc(), op->getResultTypes(),
                                           inputs, op.getDpsInits(), maps,
                                           op.getIteratorTypesArray());
  rebuilt->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rebuilt.getRegion().takeBody(generic.getRegion());
  Block &body = rebuilt.getRegion().front();
  for (auto [k, table] : llvm::enumerate(tables))
    body.insertArgument(
        numInputs + k, cast<RankedTensorType>(table.getType()).getElementType(),
        op.getLoc());
  op->replaceAllUsesWith(rebuilt->getResults());
  op->erase();
  return cast<linalg::LinalgOp>(rebuilt.getOperation());
}

/// Any other tensor a body reads without it being an operand is read at
/// global positions, so every device needs all of it: each such tensor is
/// copied into a replicated one right before the op (the partitioner then
/// prices bringing it there), and the body reads that.
static void replicateCapturedTensors(linalg::LinalgOp op, MeshOp mesh) {
  llvm::SetVector<Value> captured = capturedTensors(op);
  for (OpOperand *input : op.getDpsInputOperands())
    if (lookupTableRead(op, *input))
      captured.remove(input->get());
  for (Value value : captured) {
    auto type = cast<RankedTensorType>(value.getType());
    auto sharding = dyn_cast_or_null<ShardingAttr>(type.getEncoding());
    if (sharding && sharding.isReplicated())
      continue;
    SmallVector<DimShardingAttr> dims(
        type.getRank(),
        DimShardingAttr::get(op->getContext(), ArrayRef<StringAttr>()));
    auto replicated = ShardingAttr::get(
        op->getContext(), FlatSymbolRefAttr::get(mesh.getSymNameAttr()), dims,
        ReductionKind::sum, {});
    auto wanted = RankedTensorType::get(type.getShape(), type.getElementType(),
                                        replicated);
    OpBuilder b(op);
    Value copy = copyIntoType(b, op->getLoc(), value, wanted);
    value.replaceUsesWithIf(copy, [&](OpOperand &use) {
      return op->isProperAncestor(use.getOwner());
    });
  }
}

/// `op` without result `r`, when nothing but that result needs what its
/// body computes for it; null otherwise (and `op` is left as it was).
static linalg::GenericOp withoutResult(linalg::GenericOp op, unsigned r) {
  OpBuilder b(op);
  auto copy = cast<linalg::GenericOp>(b.clone(*op));
  Block &body = copy.getRegion().front();
  Operation *yield = body.getTerminator();
  yield->eraseOperand(r);
  // What only the dropped result needed goes, newest first.
  for (bool erased = true; erased;) {
    erased = false;
    SmallVector<Operation *> inners;
    for (Operation &inner : body.without_terminator())
      inners.push_back(&inner);
    for (Operation *inner : llvm::reverse(inners))
      if (isOpTriviallyDead(inner)) {
        inner->erase();
        erased = true;
      }
  }
  unsigned argument = op.getNumDpsInputs() + r;
  if (!body.getArgument(argument).use_empty()) {
    copy.erase();
    return {};
  }
  body.eraseArgument(argument);
  SmallVector<Value> outputs(op.getDpsInits());
  outputs.erase(outputs.begin() + r);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.erase(maps.begin() + op.getNumDpsInputs() + r);
  SmallVector<Type> types(op->getResultTypes());
  types.erase(types.begin() + r);
  auto smaller =
      linalg::GenericOp::create(b, op.getLoc(), types, op.getDpsInputs(),
                                outputs, maps, op.getIteratorTypesArray());
  smaller.getRegion().takeBody(copy.getRegion());
  copy.erase();
  return smaller;
}

/// Linalg ops lose the results nobody reads when nothing else needs what
/// their body computes for them: torch's softmax takes a max along a dim
/// together with its index, which has no combiner and would keep the max
/// from being split.
static void dropUnusedResults(func::FuncOp func) {
  SmallVector<linalg::GenericOp> ops;
  func.walk([&](linalg::GenericOp op) {
    if (op->getNumResults() > 1 && op.hasPureTensorSemantics() &&
        llvm::any_of(op->getResults(), [](Value r) { return r.use_empty(); }))
      ops.push_back(op);
  });
  for (linalg::GenericOp op : ops) {
    for (unsigned r = op->getNumResults();
         r-- > 0 && op->getNumResults() > 1;) {
      if (!op->getResult(r).use_empty())
        continue;
      linalg::GenericOp smaller = withoutResult(op, r);
      if (!smaller)
        continue;
      for (unsigned i = 0, k = 0; i < op->getNumResults(); ++i)
        if (i != r)
          op->getResult(i).replaceAllUsesWith(smaller->getResult(k++));
      op.erase();
      op = smaller;
    }
  }
}

/// Gives each use of `op`'s single result its own copy of `op`, in `op`'s
/// block (a use inside a loop gets its copy before the loop).
static void clonePerUse(Operation *op) {
  Value result = op->getResult(0);
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : result.getUses())
    uses.push_back(&use);
  if (uses.size() < 2)
    return;
  for (OpOperand *use : llvm::drop_begin(uses)) {
    OpBuilder b(op->getBlock()->findAncestorOpInBlock(*use->getOwner()));
    IRMapping mapping;
    // A fill's empty destination is cloned with it.
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp<tensor::EmptyOp>())
        mapping.map(operand, b.clone(*def)->getResult(0));
    use->set(b.clone(*op, mapping)->getResult(0));
  }
}

SmallVector<Operation *>
dist::partition::collectPartitionScope(func::FuncOp func) {
  SmallVector<Operation *> ops;
  func.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op == func)
      return WalkResult::advance();
    ops.push_back(op);
    // Loops are partitioned with their bodies; other regions (a linalg
    // body, a pad's) compute on scalars.
    return isa<scf::ForOp>(op) ? WalkResult::advance() : WalkResult::skip();
  });
  return ops;
}

/// A dynamic dim in the signature (a batch dim an exporter left symbolic)
/// has no blocks to split: said at the argument, or at the function for a
/// result, before any op inside reports what follows from it.
static LogicalResult checkStaticSignature(func::FuncOp func) {
  auto dynamic = [](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && !tensor.hasStaticShape();
  };
  const char *why = "; dist-partition needs static shapes (compile once per "
                    "shape: the front doors export the example's shapes)";
  for (BlockArgument argument : func.getArguments())
    if (dynamic(argument.getType()))
      return mlir::emitError(argument.getLoc())
             << "argument " << argument.getArgNumber() << " of @"
             << func.getSymName() << " has the dynamic shape "
             << argument.getType() << why;
  for (auto [r, type] : llvm::enumerate(func.getResultTypes()))
    if (dynamic(type))
      return func.emitOpError()
             << "result " << r << " has the dynamic shape " << type << why;
  return success();
}

LogicalResult dist::partition::normalizeForPartitioning(func::FuncOp func,
                                                        MeshOp mesh) {
  if (!func.getBody().hasOneBlock())
    return dist::partition::emitFunctionError(
        func, "cannot be partitioned: its body has several "
              "blocks");
  if (failed(checkStaticSignature(func)))
    return failure();
  dropUnusedResults(func);
  for (Operation *op : collectPartitionScope(func))
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      replicateCapturedTensors(giveTablesAsInputs(linalgOp), mesh);
  SmallVector<Operation *> ops = collectPartitionScope(func);
  bool ok = true;
  for (Operation *op : ops) {
    if (!touchesTensors(op))
      continue;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      // A splat is a fill (which takes any layout); any other tensor
      // constant keeps its own model (replicated, ConstantModel.cpp).
      auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
      auto type = dyn_cast<RankedTensorType>(constant.getType());
      if (!type) {
        op->emitOpError("cannot be partitioned: its tensor type is unranked");
        ok = false;
        continue;
      }
      if (auto resource =
              dyn_cast<DenseResourceElementsAttr>(constant.getValue());
          resource && !resource.getRawHandle().getBlob()) {
        // What a printer that elides large constants leaves behind.
        op->emitOpError("cannot be partitioned: its value, resource '")
            << resource.getRawHandle().getKey()
            << "', is not in the module (was it printed with its constants "
               "elided?)";
        ok = false;
        continue;
      }
      if (!splat)
        continue;
      OpBuilder b(op);
      Value scalar = arith::ConstantOp::create(
          b, op->getLoc(), cast<TypedAttr>(splat.getSplatValue<Attribute>()));
      Value empty =
          tensor::EmptyOp::create(b, op->getLoc(), type.getShape(),
                                  type.getElementType(), type.getEncoding());
      Value fill =
          linalg::FillOp::create(b, op->getLoc(), scalar, empty).getResult(0);
      op->getResult(0).replaceAllUsesWith(fill);
      op->erase();
      continue;
    }
    if (isa<PartitionableOpInterface, func::ReturnOp, func::CallOp, scf::ForOp,
            scf::YieldOp>(op) ||
        op->getDialect() == op->getContext()->getLoadedDialect<DistDialect>())
      continue;
    if (isa<LoopLikeOpInterface>(op) || op->getNumRegions() > 0) {
      op->emitOpError("cannot be partitioned: dist-partition handles "
                      "scf.for loops, not this region op");
      ok = false;
      continue;
    }
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      // The extent of the global tensor (after localization tensor.dim
      // would read the local block's).
      std::optional<int64_t> index = dim.getConstantIndex();
      auto type = cast<RankedTensorType>(dim.getSource().getType());
      if (!index || *index < 0 || *index >= type.getRank() ||
          type.isDynamicDim(*index)) {
        op->emitOpError("cannot be partitioned: dist-partition needs a "
                        "constant dim of a static shape");
        ok = false;
        continue;
      }
      OpBuilder b(op);
      op->getResult(0).replaceAllUsesWith(arith::ConstantIndexOp::create(
          b, op->getLoc(), type.getDimSize(*index)));
      op->erase();
      continue;
    }
    if (auto aggregate = dyn_cast<linalg::AggregatedOpInterface>(op)) {
      // An op made of simpler ones (linalg.softmax: max, exp, sum, divide)
      // is partitioned as those: its reductions may then be split, with the
      // partial max and sum reduced where the algebra needs them.
      OpBuilder b(op);
      FailureOr<SmallVector<Value>> parts = aggregate.decomposeOperation(b);
      if (failed(parts)) {
        op->emitOpError("cannot be partitioned: it has no decomposition into "
                        "ops dist-partition handles");
        ok = false;
        continue;
      }
      op->replaceAllUsesWith(*parts);
      op->erase();
      continue;
    }
    if (isElementwiseOnTensors(op)) {
      if (failed(rewriteElementwise(op)))
        ok = false;
      continue;
    }
    op->emitOpError("cannot be partitioned: dist-partition handles ops with "
                    "a partitioning model (linalg structured ops, "
                    "linalg.softmax, tensor.empty, reshapes, slices, concat "
                    "and pad), elementwise arith/math ops on tensors, tensor "
                    "constants and scf.for loops");
    ok = false;
  }
  if (!ok)
    return failure();

  // Free sources: one copy per use.
  SmallVector<Operation *> sources;
  for (Operation *op : collectPartitionScope(func)) {
    if (isa<tensor::EmptyOp>(op))
      sources.push_back(op);
    else if (auto fill = dyn_cast<linalg::FillOp>(op);
             fill && fill.hasPureTensorSemantics() &&
             fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
      sources.push_back(op);
  }
  // Fills first, so that the empties they clone are then split per use too.
  // A source nothing uses is dropped.
  for (Operation *op : llvm::reverse(sources)) {
    if (op->use_empty())
      op->erase();
    else
      clonePerUse(op);
  }
  return success();
}

/// Whether every user of `value` lets the partitioner choose its layout (an
/// op with a partitioning model, or a loop carrying it); a dist op, a call or
/// a return needs the type as written.
static bool usedOnlyByCompute(Value value) {
  return llvm::all_of(value.getUsers(), [](Operation *user) {
    if (isa<PartitionableOpInterface, scf::ForOp, scf::YieldOp>(user))
      return true;
    // An empty tensor filled into a constant that keeps its type keeps its
    // own (linalg needs the init typed like the result).
    if (auto fill = dyn_cast<linalg::FillOp>(user))
      return usedOnlyByCompute(fill.getResult(0));
    return false;
  });
}

void dist::partition::forgetConstantLayouts(func::FuncOp func) {
  // A constant has the same global value in every layout, so a layout
  // written on one (linalg needs an init typed like the result it binds) is
  // no constraint: each copy is computed directly in the layout its use
  // needs, instead of being resharded there. A constant that a dist op (a
  // reshard of it) reads keeps the layout it was written with.
  for (Operation *op : collectPartitionScope(func)) {
    bool freeSource = isa<tensor::EmptyOp>(op) ||
                      (isa<linalg::FillOp>(op) &&
                       cast<linalg::FillOp>(op).hasPureTensorSemantics() &&
                       op->getOperand(1).getDefiningOp<tensor::EmptyOp>());
    if (!freeSource || !usedOnlyByCompute(op->getResult(0)))
      continue;
    Value result = op->getResult(0);
    auto type = cast<RankedTensorType>(result.getType());
    result.setType(
        RankedTensorType::get(type.getShape(), type.getElementType()));
  }
}
