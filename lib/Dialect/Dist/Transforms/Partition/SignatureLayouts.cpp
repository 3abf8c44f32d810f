//===- SignatureLayouts.cpp - layouts written on a signature alone --------===//

#include "SignatureLayouts.h"

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/Transforms/ValueLayouts.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace dist;

namespace {

/// The encoded type for a `dist.sharding` attribute on a tensor of `type`,
/// or a located error (at `emitError`) saying why there is none.
FailureOr<RankedTensorType>
encodedType(Type type, Attribute attr,
            function_ref<InFlightDiagnostic()> emitError) {
  auto sharding = dyn_cast<ShardingAttr>(attr);
  if (!sharding)
    return emitError() << "has '" << partition::kSignatureShardingAttr
                       << "' = " << attr << ", which is not a #dist.sharding";
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return emitError() << "has a layout but is not a ranked tensor (" << type
                       << ")";
  if (tensor.getEncoding())
    return emitError() << "has a layout both in its type and in '"
                       << partition::kSignatureShardingAttr << "'";
  if (failed(sharding.verifyEncoding(tensor.getShape(), tensor.getElementType(),
                                     emitError)))
    return failure();
  return RankedTensorType::get(tensor.getShape(), tensor.getElementType(),
                               sharding);
}

/// Whether the mesh of `type`'s layout has every axis the layout names; a
/// located error (a typo in an axis, with the mesh's axes) otherwise.
LogicalResult verifyMeshAxes(Operation *user, RankedTensorType type,
                             function_ref<InFlightDiagnostic()> emitError) {
  auto sharding = cast<ShardingAttr>(type.getEncoding());
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
      user, sharding.getMesh().getAttr());
  if (!mesh)
    return emitError() << "refers to unknown mesh " << sharding.getMesh();
  SmallVector<StringAttr> axes(sharding.getPartialAxes());
  for (DimShardingAttr dim : sharding.getDims())
    llvm::append_range(axes, dim.getAxes());
  for (StringAttr axis : axes)
    if (!mesh.findAxis(axis.getValue()))
      return emitError() << "uses axis \"" << axis.getValue()
                         << "\", which mesh @" << mesh.getSymName()
                         << " does not have"
                         << mesh.describeMissingAxis(axis.getValue());
  return success();
}

/// Every op of `func` with `{dist.sharding = ...}` gives its result that
/// layout (semantics §6): a front door's form of a JAX sharding constraint.
LogicalResult applyOpLayouts(func::FuncOp func) {
  SmallVector<Operation *> annotated;
  func.walk([&](Operation *op) {
    if (op != func && op->hasAttr(partition::kSignatureShardingAttr))
      annotated.push_back(op);
  });
  for (Operation *op : annotated) {
    Attribute attr = op->getAttr(partition::kSignatureShardingAttr);
    if (op->getNumResults() != 1)
      return op->emitOpError()
             << "has a layout ('" << partition::kSignatureShardingAttr
             << "') but " << op->getNumResults()
             << " results; a layout belongs to an op of one tensor result";
    Value result = op->getResult(0);
    FailureOr<RankedTensorType> type = encodedType(
        result.getType(), attr, [&] { return op->emitOpError() << "result "; });
    if (failed(type))
      return failure();
    op->removeAttr(partition::kSignatureShardingAttr);
    giveLayout(result, *type, op->getLoc());
  }
  return success();
}

} // namespace

LogicalResult dist::partition::applySignatureLayouts(func::FuncOp func) {
  if (func.isExternal())
    return success();
  if (failed(applyOpLayouts(func)))
    return failure();
  Block &entry = func.getBody().front();
  SmallVector<Type> inputs(func.getFunctionType().getInputs());
  SmallVector<Type> results(func.getFunctionType().getResults());
  bool changed = false;
  for (unsigned i = 0; i < inputs.size(); ++i) {
    Attribute attr = func.getArgAttr(i, kSignatureShardingAttr);
    if (!attr)
      continue;
    auto atArgument = [&] {
      return mlir::emitError(entry.getArgument(i).getLoc())
             << "argument " << i << " of @" << func.getSymName() << " ";
    };
    FailureOr<RankedTensorType> type = encodedType(inputs[i], attr, [&] {
      return func.emitOpError() << "argument " << i << " ";
    });
    if (failed(type) || failed(verifyMeshAxes(func, *type, atArgument)))
      return failure();
    inputs[i] = *type;
    retypeArgument(entry.getArgument(i), *type);
    func.removeArgAttr(i, kSignatureShardingAttr);
    changed = true;
  }
  for (unsigned i = 0; i < results.size(); ++i) {
    Attribute attr = func.getResultAttr(i, kSignatureShardingAttr);
    if (!attr)
      continue;
    auto atResult = [&] { return func.emitOpError() << "result " << i << " "; };
    FailureOr<RankedTensorType> type = encodedType(results[i], attr, atResult);
    if (failed(type) || failed(verifyMeshAxes(func, *type, atResult)))
      return failure();
    results[i] = *type;
    func.walk([&](func::ReturnOp ret) {
      OpBuilder b(ret);
      ret->setOperand(i,
                      copyIntoType(b, ret.getLoc(), ret.getOperand(i), *type));
    });
    func.removeResultAttr(
        i, StringAttr::get(func.getContext(), kSignatureShardingAttr));
    changed = true;
  }
  if (changed)
    func.setFunctionType(FunctionType::get(func.getContext(), inputs, results));
  return success();
}
