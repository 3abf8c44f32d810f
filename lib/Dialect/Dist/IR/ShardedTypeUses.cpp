//===- ShardedTypeUses.cpp - meshes named by sharded types ----------------===//
//
// Every value of a function is a function argument, a block argument or an
// op result, so checking those types (and the signature's results) checks
// every operand too. Ops of the dist dialect that resolve their shardings
// themselves are left to do so, with their own messages.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/ShardedTypeUses.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace dist;

/// Checks every sharding inside `type` against the symbol table seen from
/// `user`; `emitError` starts the message with what has the type.
static LogicalResult
verifyShardingsIn(Type type, Operation *user, SymbolTableCollection &table,
                  function_ref<InFlightDiagnostic()> emitError) {
  WalkResult walked = type.walk([&](ShardingAttr sharding) {
    auto mesh = table.lookupNearestSymbolFrom<MeshOp>(
        user, sharding.getMesh().getAttr());
    if (!mesh) {
      emitError() << " refers to unknown mesh " << sharding.getMesh();
      return WalkResult::interrupt();
    }
    auto check = [&](StringAttr axis) {
      if (mesh.findAxis(axis.getValue()))
        return true;
      emitError() << ": mesh @" << mesh.getSymName() << " has no axis \""
                  << axis.getValue() << "\""
                  << mesh.describeMissingAxis(axis.getValue());
      return false;
    };
    for (DimShardingAttr dim : sharding.getDims())
      for (StringAttr axis : dim.getAxes())
        if (!check(axis))
          return WalkResult::interrupt();
    for (StringAttr axis : sharding.getPartialAxes())
      if (!check(axis))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walked.wasInterrupted());
}

static LogicalResult verifyFunction(func::FuncOp func,
                                    SymbolTableCollection &table) {
  FunctionType signature = func.getFunctionType();
  for (auto [index, type] : llvm::enumerate(signature.getInputs()))
    if (failed(verifyShardingsIn(type, func, table, [&, index = index] {
          // At the argument itself when the function has a body.
          if (!func.isExternal())
            return mlir::emitError(func.getArgument(index).getLoc())
                   << "argument " << index << " of @" << func.getSymName();
          return func.emitOpError() << "argument " << index;
        })))
      return failure();
  for (auto [index, type] : llvm::enumerate(signature.getResults()))
    if (failed(verifyShardingsIn(type, func, table, [&, index = index] {
          return func.emitOpError() << "result " << index;
        })))
      return failure();

  Dialect *dist = func->getContext()->getLoadedDialect<DistDialect>();
  // The entry block's arguments are the signature's.
  Block *entry = func.isExternal() ? nullptr : &func.getBody().front();
  auto verifyBlocks = [&](Region &region) {
    for (Block &block : region) {
      if (&block == entry)
        continue;
      for (BlockArgument arg : block.getArguments())
        if (failed(verifyShardingsIn(arg.getType(), func, table, [&] {
              return mlir::emitError(arg.getLoc())
                     << "block argument " << arg.getArgNumber();
            })))
          return failure();
    }
    return success();
  };
  if (failed(verifyBlocks(func.getBody())))
    return failure();
  // In source order, so that the first bad type is the one reported.
  WalkResult walked =
      func.getBody().walk<WalkOrder::PreOrder>([&](Operation *op) {
        for (Region &region : op->getRegions())
          if (failed(verifyBlocks(region)))
            return WalkResult::interrupt();
        if (op->getDialect() == dist && isa<SymbolUserOpInterface>(op))
          return WalkResult::advance();
        for (OpResult result : op->getResults())
          if (failed(verifyShardingsIn(result.getType(), op, table, [&] {
                return op->emitOpError()
                       << "result " << result.getResultNumber();
              })))
            return WalkResult::interrupt();
        return WalkResult::advance();
      });
  return failure(walked.wasInterrupted());
}

namespace {
struct FuncShardedTypeUses
    : SymbolUserOpInterface::ExternalModel<FuncShardedTypeUses, func::FuncOp> {
  LogicalResult verifySymbolUses(Operation *op,
                                 SymbolTableCollection &table) const {
    return verifyFunction(cast<func::FuncOp>(op), table);
  }
};
} // namespace

void dist::registerShardedTypeUsesExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, func::FuncDialect *) {
    func::FuncOp::attachInterface<FuncShardedTypeUses>(*context);
  });
}
