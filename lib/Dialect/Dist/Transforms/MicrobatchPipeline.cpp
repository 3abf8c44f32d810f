//===- MicrobatchPipeline.cpp - the dist-pipeline pass --------------------===//
//
// Semantics §3c: a function whose compute spans several meshes runs once per
// microbatch. Two steps:
//
//  1. Which dim of each tensor is the batch: from the arguments' marks, to a
//     fixpoint, through the loops of linalg ops (an operand's batch dim is a
//     loop, which must be parallel; every operand and result indexing that
//     loop has its batch dim there), elementwise ops and reshards (the same
//     dim), and back from an op's inits to the empty tensors and fills that
//     make them. Anything else that touches a batch tensor is an error.
//  2. The body cloned once per microbatch, in order: the marked arguments
//     sliced, every tensor with a batch dim retyped to the part (empty
//     tensors and splat constants remade at that size), results with a batch
//     dim concatenated; a result without one is the first part's (it does
//     not depend on the batch).
//
// Cloning microbatch after microbatch gives dist-partition's stage split
// (SplitStages.h) one stage function per mesh and microbatch, in GPipe's
// order.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

namespace dist {
#define GEN_PASS_DEF_DISTPIPELINE
#include "dist/Dialect/Dist/Transforms/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;

namespace {

/// Semantics §3c: `{dist.batch_dim = D}` on an argument.
constexpr llvm::StringLiteral kBatchDimAttr = "dist.batch_dim";

/// The batch dim of each tensor of one function.
class BatchDims {
public:
  explicit BatchDims(func::FuncOp func) : func(func) {}

  /// Step 1; a located error on failure. `extent` is the batch's.
  LogicalResult infer(int64_t &extent);
  std::optional<int64_t> of(Value value) const {
    auto it = dims.find(value);
    return it == dims.end() ? std::nullopt : std::optional(it->second);
  }

private:
  /// Records `dim` for `value`; false (with an error) on a conflict.
  FailureOr<bool> set(Operation *at, Value value, int64_t dim);
  FailureOr<bool> visitLinalg(linalg::LinalgOp op);
  FailureOr<bool> visitSameShape(Operation *op);

  func::FuncOp func;
  DenseMap<Value, int64_t> dims;
};

FailureOr<bool> BatchDims::set(Operation *at, Value value, int64_t dim) {
  auto [it, inserted] = dims.try_emplace(value, dim);
  if (inserted)
    return true;
  if (it->second == dim)
    return false;
  at->emitOpError("cannot be pipelined: a tensor it uses has its batch at "
                  "dims ")
      << it->second << " and " << dim;
  return failure();
}

/// An op's batch loop (the loop an operand's batch dim is), and every
/// operand and result that indexes it.
FailureOr<bool> BatchDims::visitLinalg(linalg::LinalgOp op) {
  std::optional<unsigned> loop;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<int64_t> dim = of(operand.get());
    if (operand.getOperandNumber() >= op.getNumDpsInputs()) {
      std::optional<int64_t> result =
          of(op->getResult(operand.getOperandNumber() - op.getNumDpsInputs()));
      dim = dim ? dim : result;
    }
    if (!dim)
      continue;
    AffineMap map = maps[operand.getOperandNumber()];
    auto expr = dyn_cast<AffineDimExpr>(map.getResult(*dim));
    if (!expr || (loop && *loop != expr.getPosition()))
      return op->emitOpError("cannot be pipelined: the batch is not one loop "
                             "of it (semantics §3c)");
    loop = expr.getPosition();
  }
  if (!loop)
    return false;
  if (op.getIteratorTypesArray()[*loop] != utils::IteratorType::parallel)
    return op->emitOpError("cannot be pipelined: it reduces over the batch "
                           "(semantics §3c: every op runs per microbatch)");
  bool changed = false;
  for (OpOperand &operand : op->getOpOperands()) {
    std::optional<unsigned> at =
        maps[operand.getOperandNumber()].getResultPosition(
            getAffineDimExpr(*loop, op.getContext()));
    bool init = operand.getOperandNumber() >= op.getNumDpsInputs();
    if (!at) {
      if (init)
        return op->emitOpError("cannot be pipelined: a result of it does not "
                               "keep the batch");
      continue;
    }
    FailureOr<bool> set1 = set(op, operand.get(), *at);
    if (failed(set1))
      return failure();
    changed |= *set1;
    if (init) {
      FailureOr<bool> set2 = set(
          op, op->getResult(operand.getOperandNumber() - op.getNumDpsInputs()),
          *at);
      if (failed(set2))
        return failure();
      changed |= *set2;
    }
  }
  return changed;
}

/// Elementwise ops and reshards: every tensor has the batch at one dim.
FailureOr<bool> BatchDims::visitSameShape(Operation *op) {
  std::optional<int64_t> dim;
  auto tensors = llvm::concat<Value>(op->getOperands(), op->getResults());
  for (Value value : tensors)
    if (std::optional<int64_t> known = of(value))
      dim = known;
  if (!dim)
    return false;
  bool changed = false;
  for (Value value : tensors)
    if (isa<RankedTensorType>(value.getType())) {
      FailureOr<bool> set1 = set(op, value, *dim);
      if (failed(set1))
        return failure();
      changed |= *set1;
    }
  return changed;
}

LogicalResult BatchDims::infer(int64_t &extent) {
  extent = 0;
  for (BlockArgument argument : func.getArguments()) {
    auto mark = func.getArgAttrOfType<IntegerAttr>(argument.getArgNumber(),
                                                   kBatchDimAttr);
    if (!mark)
      continue;
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    int64_t dim = mark.getInt();
    if (!type || dim < 0 || dim >= type.getRank() || type.isDynamicDim(dim) ||
        (extent && type.getDimSize(dim) != extent))
      return mlir::emitError(argument.getLoc())
             << "dist.batch_dim = " << dim
             << " must name a static dim of a tensor argument, with the same "
                "extent on every marked argument";
    extent = type.getDimSize(dim);
    dims[argument] = dim;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (Operation &op : func.getBody().front()) {
      FailureOr<bool> step = false;
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
        step = visitLinalg(linalgOp);
      else if (isa<ReshardOp>(op) || op.hasTrait<OpTrait::Elementwise>())
        step = visitSameShape(&op);
      if (failed(step))
        return failure();
      changed |= *step;
    }
  }
  // What no rule follows must not touch the batch.
  for (Operation &op : func.getBody().front()) {
    bool followed = isa<linalg::LinalgOp, ReshardOp, tensor::EmptyOp,
                        arith::ConstantOp, func::ReturnOp>(op) ||
                    op.hasTrait<OpTrait::Elementwise>();
    bool touches = llvm::any_of(op.getOperands(),
                                [&](Value v) { return of(v).has_value(); }) ||
                   llvm::any_of(op.getResults(),
                                [&](Value v) { return of(v).has_value(); });
    if (touches && !followed)
      return op.emitOpError("cannot be pipelined: dist-pipeline does not "
                            "follow the batch through it (semantics §3c)");
    if (auto constant = dyn_cast<arith::ConstantOp>(op);
        constant && of(constant.getResult()) &&
        !(isa<SplatElementsAttr>(constant.getValue())))
      return op.emitOpError("cannot be pipelined: a constant with the batch "
                            "in its shape must be a splat");
  }
  return success();
}

/// `type` with its dim `dim` cut to `size` (the encoding kept).
RankedTensorType withExtent(Type type, int64_t dim, int64_t size) {
  auto tensor = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(tensor.getShape());
  shape[dim] = size;
  return RankedTensorType::get(shape, tensor.getElementType(),
                               tensor.getEncoding());
}

/// Step 2 for `func` (its batch dims known).
void cloneMicrobatches(func::FuncOp func, const BatchDims &batch,
                       int64_t extent, int64_t microbatches) {
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  const int64_t part = extent / microbatches;
  OpBuilder b(ret);
  SmallVector<IRMapping> parts(microbatches);
  for (int64_t m = 0; m < microbatches; ++m) {
    IRMapping &map = parts[m];
    for (BlockArgument argument : func.getArguments()) {
      std::optional<int64_t> dim = batch.of(argument);
      if (!dim)
        continue;
      auto type = cast<RankedTensorType>(argument.getType());
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
          sizes, strides(type.getRank(), b.getIndexAttr(1));
      for (int64_t size : type.getShape())
        sizes.push_back(b.getIndexAttr(size));
      offsets[*dim] = b.getIndexAttr(m * part);
      sizes[*dim] = b.getIndexAttr(part);
      map.map(argument, tensor::ExtractSliceOp::create(
                            b, argument.getLoc(), withExtent(type, *dim, part),
                            argument, offsets, sizes, strides));
    }
    for (Operation *op : ops) {
      Operation *clone = nullptr;
      std::optional<int64_t> dim =
          op->getNumResults() == 1 ? batch.of(op->getResult(0)) : std::nullopt;
      if (auto empty = dyn_cast<tensor::EmptyOp>(op); empty && dim) {
        clone = tensor::EmptyOp::create(
            b, op->getLoc(), withExtent(empty.getType(), *dim, part), {});
      } else if (auto constant = dyn_cast<arith::ConstantOp>(op);
                 constant && dim) {
        auto type = withExtent(constant.getType(), *dim, part);
        auto splat = cast<SplatElementsAttr>(constant.getValue());
        clone = arith::ConstantOp::create(
            b, op->getLoc(),
            DenseElementsAttr::get(type, splat.getSplatValue<Attribute>()));
      } else {
        clone = b.clone(*op, map);
        for (Value result : clone->getResults())
          if (std::optional<int64_t> d = batch.of(
                  op->getResult(cast<OpResult>(result).getResultNumber())))
            result.setType(withExtent(result.getType(), *d, part));
      }
      map.map(op->getResults(), clone->getResults());
    }
  }
  SmallVector<Value> results;
  for (Value returned : ret.getOperands()) {
    std::optional<int64_t> dim = batch.of(returned);
    if (!dim) {
      results.push_back(parts[0].lookupOrDefault(returned));
      continue;
    }
    SmallVector<Value> pieces;
    for (IRMapping &map : parts)
      pieces.push_back(map.lookup(returned));
    results.push_back(tensor::ConcatOp::create(
        b, ret.getLoc(), returned.getType(), *dim, pieces));
  }
  ret->setOperands(results);
  for (Operation *op : llvm::reverse(ops))
    op->erase();
}

/// Whether the tensors of `func` lie on several meshes.
bool spansMeshes(func::FuncOp func) {
  llvm::SmallSetVector<StringAttr, 2> meshes;
  auto note = [&](Type type) {
    if (ShardingAttr sharding = getSharding(type))
      meshes.insert(sharding.getMesh().getAttr());
  };
  for (Type type : func.getArgumentTypes())
    note(type);
  func.walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      note(type);
  });
  return meshes.size() > 1;
}

struct DistPipelinePass
    : public dist::impl::DistPipelineBase<DistPipelinePass> {
  using Base::Base;

  void runOnOperation() override {
    if (microbatches < 1) {
      getOperation().emitError("dist-pipeline: microbatches must be at least "
                               "1, got ")
          << static_cast<int64_t>(microbatches);
      return signalPassFailure();
    }
    if (microbatches == 1)
      return;
    bool failedAny = false;
    for (func::FuncOp func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal() || !spansMeshes(func))
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitOpError("cannot be pipelined: it has several blocks");
        failedAny = true;
        continue;
      }
      BatchDims batch(func);
      int64_t extent = 0;
      if (failed(batch.infer(extent))) {
        failedAny = true;
        continue;
      }
      if (!extent || extent % microbatches) {
        func.emitOpError("cannot be pipelined: ")
            << (extent ? "microbatches=" + std::to_string(microbatches) +
                             " does not divide the batch extent " +
                             std::to_string(extent)
                       : std::string("no argument marks its batch dim "
                                     "(dist.batch_dim)"))
            << " (semantics §3c)";
        failedAny = true;
        continue;
      }
      cloneMicrobatches(func, batch, extent, microbatches);
      func->setAttr(kMicrobatchesAttrName,
                    IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                     static_cast<int64_t>(microbatches)));
    }
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
