//===- ImportShard.cpp - upstream shard annotations -> dist ---------------===//
//
// Compilers built on upstream MLIR annotate tensors with the `shard` dialect.
// This pass hands those annotations to dist: grids become meshes, shardings
// become #dist.sharding encodings on the annotated values' types, and a
// value annotated twice in different layouts gets a dist.reshard, which dist
// then plans as a whole (upstream's own resharding handles single steps).
// SPEC §7 states the rules; Passes.td has an example.
//
//===----------------------------------------------------------------------===//

#include "dist/Conversion/Passes.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace dist {
#define GEN_PASS_DEF_DISTIMPORTSHARD
#include "dist/Conversion/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;

namespace {

/// Grid axis k is mesh axis "k" (SPEC §7).
std::string axisName(int64_t gridAxis) { return std::to_string(gridAxis); }

/// Every shard op other than the annotations belongs to a program that
/// upstream has already partitioned (collectives, process indices): there
/// is nothing for dist to plan there, and silently dropping them would be
/// wrong.
LogicalResult rejectOtherShardOps(ModuleOp module) {
  WalkResult result = module.walk([](Operation *op) {
    if (!isa<shard::ShardDialect>(op->getDialect()) ||
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
  llvm::StringSet<> meshNames;
  for (MeshOp mesh : module.getOps<MeshOp>())
    meshNames.insert(mesh.getSymName());
  for (shard::GridOp grid :
       llvm::make_early_inc_range(module.getOps<shard::GridOp>())) {
    ArrayRef<int64_t> shape = grid.getShape();
    for (auto [axis, size] : llvm::enumerate(shape))
      if (ShapedType::isDynamic(size))
        return grid.emitError()
               << "grid axis " << axis
               << " has a dynamic size; a dist mesh needs every size";
    if (meshNames.contains(grid.getSymName()))
      return grid.emitError() << "a dist.mesh @" << grid.getSymName()
                              << " already exists";
    OpBuilder builder(grid);
    SmallVector<Attribute> names;
    for (int64_t axis = 0, e = shape.size(); axis < e; ++axis)
      names.push_back(builder.getStringAttr(axisName(axis)));
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

/// `type` with the layout of `sharding` as its encoding.
FailureOr<RankedTensorType> annotatedType(shard::ShardOp annotation,
                                          shard::ShardingOp sharding,
                                          RankedTensorType type) {
  if (type.getEncoding() && !isa<ShardingAttr>(type.getEncoding()))
    return annotation.emitError()
           << "the annotated tensor already has an encoding ("
           << type.getEncoding() << ") that is not a dist layout";
  shard::GridAxesArrayAttr splitAxes = sharding.getSplitAxes();
  if (static_cast<int64_t>(splitAxes.size()) > type.getRank())
    return annotation.emitError()
           << "the sharding has " << splitAxes.size()
           << " split_axes entries but the tensor has rank " << type.getRank();
  MLIRContext *context = annotation.getContext();
  SmallVector<DimShardingAttr> dims;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    SmallVector<StringAttr> axes;
    if (d < static_cast<int64_t>(splitAxes.size()))
      for (int16_t axis : splitAxes.getAxes()[d].asArrayRef())
        axes.push_back(StringAttr::get(context, axisName(axis)));
    dims.push_back(DimShardingAttr::get(context, axes));
  }
  auto emitError = [&] { return sharding.emitError(); };
  ShardingAttr layout = ShardingAttr::getChecked(
      emitError, context, sharding.getGridAttr(), ArrayRef(dims),
      ReductionKind::sum,
      ArrayRef<StringAttr>());
  if (!layout)
    return failure();
  auto emitAtAnnotation = [&] { return annotation.emitError(); };
  if (failed(layout.verifyEncoding(type.getShape(), type.getElementType(),
                                   emitAtAnnotation)))
    return failure();
  return RankedTensorType::get(type.getShape(), type.getElementType(), layout);
}

/// A function argument or an op result may carry a layout; the arguments of
/// inner blocks (loop-carried values) have no type of their own to carry it.
LogicalResult verifyAnnotatable(shard::ShardOp annotation) {
  auto argument = dyn_cast<BlockArgument>(annotation.getSrc());
  if (!argument)
    return success();
  Block *block = argument.getOwner();
  if (block->isEntryBlock() && isa<func::FuncOp>(block->getParentOp()))
    return success();
  return annotation.emitError()
         << "only function arguments and op results can be annotated, not "
            "the argument of an inner block";
}

/// Rewrites one shard.shard: the first annotation of a value gives it the
/// layout; a later one in another layout is a reshard.
LogicalResult importAnnotation(shard::ShardOp annotation) {
  auto sharding = annotation.getSharding().getDefiningOp<shard::ShardingOp>();
  if (!sharding)
    return annotation.emitError()
           << "the sharding must be made by a shard.sharding op";
  Value source = annotation.getSrc();
  auto sourceType = cast<RankedTensorType>(source.getType());
  RankedTensorType plainType = RankedTensorType::get(
      sourceType.getShape(), sourceType.getElementType());
  FailureOr<RankedTensorType> type = annotatedType(
      annotation, sharding,
      isa_and_nonnull<ShardingAttr>(sourceType.getEncoding()) ? plainType
                                                              : sourceType);
  if (failed(type))
    return failure();

  Value replacement = source;
  if (!isa_and_nonnull<ShardingAttr>(sourceType.getEncoding())) {
    if (failed(verifyAnnotatable(annotation)))
      return failure();
    source.setType(*type);
  } else if (sourceType != *type) {
    OpBuilder builder(annotation);
    replacement = ReshardOp::create(builder, annotation.getLoc(), *type, source);
  }
  annotation.getResult().replaceAllUsesWith(replacement);
  annotation.erase();
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
  FunctionType type =
      FunctionType::get(function.getContext(), inputs, results);
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
    module.walk<WalkOrder::PreOrder>(
        [&](shard::ShardOp op) { annotations.push_back(op); });
    for (shard::ShardOp annotation : annotations)
      if (failed(importAnnotation(annotation)))
        return failure();

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
