//===- ImportShard.cpp - upstream shard annotations -> dist ---------------===//
//
// Compilers built on upstream MLIR annotate tensors with the `shard` dialect.
// This pass hands those annotations to dist: grids become meshes, shardings
// become #dist.sharding encodings on the annotated values' types, and a
// value annotated twice in different layouts gets a dist.reshard, which dist
// then plans as a whole (upstream's own resharding handles single steps).
// semantics §7 states the rules; Passes.td has an example. Here: the driver,
// grids, the checks on shardings and the signatures; Annotations.cpp turns
// each shard.shard into types, copies and reshards.
//
//===----------------------------------------------------------------------===//

#include "Annotations.h"

#include "dist/Conversion/Passes.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

namespace dist {
#define GEN_PASS_DEF_DISTIMPORTSHARD
#include "dist/Conversion/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;

namespace {

/// Every shard op other than the annotations belongs to a program that
/// upstream has already partitioned (collectives, process indices): there
/// is nothing for dist to plan there, and silently dropping them would be
/// wrong.
LogicalResult rejectOtherShardOps(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) {
    if (!isa_and_nonnull<shard::ShardDialect>(op->getDialect()) ||
        isa<shard::GridOp, shard::ShardingOp, shard::ShardOp>(op))
      return WalkResult::advance();
    op->emitError() << "'" << op->getName()
                    << "' has no dist equivalent: dist-import-shard reads "
                       "shard.grid, shard.sharding and shard.shard only";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

/// Replaces each shard.grid by a dist.mesh of the same name and sizes.
/// Returns the grids' ranks by name.
FailureOr<llvm::StringMap<int64_t>> importGrids(ModuleOp module) {
  llvm::StringMap<int64_t> ranks;
  for (shard::GridOp grid :
       llvm::make_early_inc_range(module.getOps<shard::GridOp>())) {
    ArrayRef<int64_t> shape = grid.getShape();
    for (auto [axis, size] : llvm::enumerate(shape))
      if (ShapedType::isDynamic(size))
        return grid.emitError()
               << "grid axis " << axis
               << " has a dynamic size; a dist mesh needs every size";
    OpBuilder builder(grid);
    SmallVector<Attribute> names;
    for (int64_t axis = 0, e = shape.size(); axis < e; ++axis)
      names.push_back(builder.getStringAttr(meshAxisName(axis)));
    MeshOp::create(builder, grid.getLoc(), grid.getSymName(),
                   builder.getArrayAttr(names), shape,
                   /*devices=*/nullptr, /*cost=*/nullptr);
    ranks[grid.getSymName()] = shape.size();
    grid.erase();
  }
  return ranks;
}

/// The checks on a shard.sharding that do not depend on the tensor: dist
/// blocks are ceil(N / P) each and hold no neighbours' elements.
LogicalResult verifyImportable(shard::ShardingOp sharding,
                               const llvm::StringMap<int64_t> &gridRanks) {
  if (!sharding.getStaticHaloSizes().empty() ||
      !sharding.getDynamicHaloSizes().empty())
    return sharding.emitError()
           << "halo sizes have no dist equivalent: a dist layout holds no "
              "halo (remove halo_sizes, or exchange halos in the program)";
  if (!sharding.getStaticShardedDimsOffsets().empty() ||
      !sharding.getDynamicShardedDimsOffsets().empty())
    return sharding.emitError()
           << "explicit shard offsets (sharded_dims_offsets) have no dist "
              "equivalent: dist splits a dim of N elements over P devices "
              "into blocks of ceil(N / P)";
  auto rank = gridRanks.find(sharding.getGrid());
  if (rank == gridRanks.end())
    return sharding.emitError()
           << "@" << sharding.getGrid() << " is not a shard.grid of the module";
  for (shard::GridAxesAttr axes : sharding.getSplitAxes())
    for (int16_t axis : axes.asArrayRef())
      if (axis < 0 || axis >= rank->second)
        return sharding.emitError()
               << "grid axis " << axis << " is not an axis of @"
               << sharding.getGrid() << " (rank " << rank->second << ")";
  return success();
}

/// The signature after the arguments and returned values took layouts. A
/// function whose signature changed must not be called: its callers would
/// pass the old types.
LogicalResult updateSignature(func::FuncOp function, ModuleOp module) {
  if (function.isExternal())
    return success();
  SmallVector<Type> inputs(function.front().getArgumentTypes());
  SmallVector<Type> results(function.getResultTypes());
  bool first = true;
  WalkResult walk = function.walk([&](func::ReturnOp ret) {
    SmallVector<Type> returned(ret.getOperandTypes());
    if (!first && returned != results) {
      ret.emitError() << "the function's returns give its results different "
                         "layouts";
      return WalkResult::interrupt();
    }
    results = returned;
    first = false;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  FunctionType type = FunctionType::get(function.getContext(), inputs, results);
  if (type == function.getFunctionType())
    return success();
  if (!SymbolTable::symbolKnownUseEmpty(function, module))
    return function.emitError()
           << "has annotated arguments or results but is called in the "
              "module; dist-import-shard imports entry functions only";
  function.setType(type);
  return success();
}

struct DistImportShardPass
    : public dist::impl::DistImportShardBase<DistImportShardPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(run(module)))
      signalPassFailure();
  }

  LogicalResult run(ModuleOp module) {
    if (failed(rejectOtherShardOps(module)))
      return failure();
    FailureOr<llvm::StringMap<int64_t>> gridRanks = importGrids(module);
    if (failed(gridRanks))
      return failure();
    SmallVector<shard::ShardingOp> shardings;
    module.walk([&](shard::ShardingOp op) { shardings.push_back(op); });
    for (shard::ShardingOp sharding : shardings)
      if (failed(verifyImportable(sharding, *gridRanks)))
        return failure();

    // In program order, so that a value's first annotation is met first.
    SmallVector<shard::ShardOp> annotations;
    SetVector<func::FuncOp> annotated;
    module.walk<WalkOrder::PreOrder>([&](shard::ShardOp op) {
      annotations.push_back(op);
      if (auto function = op->getParentOfType<func::FuncOp>())
        annotated.insert(function);
    });
    for (shard::ShardOp annotation : annotations)
      if (failed(importAnnotation(annotation)))
        return failure();
    elementwiseToLinalg(annotated.getArrayRef());

    for (shard::ShardingOp sharding : shardings) {
      if (!sharding->use_empty()) {
        Operation *user = *sharding->user_begin();
        return user->emitError()
               << "uses a !shard.sharding value, which has no dist "
                  "equivalent";
      }
      sharding.erase();
    }
    for (func::FuncOp function : module.getOps<func::FuncOp>())
      if (failed(updateSignature(function, module)))
        return failure();
    return success();
  }
};

} // namespace
