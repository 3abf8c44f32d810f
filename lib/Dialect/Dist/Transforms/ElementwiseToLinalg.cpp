//===- ElementwiseToLinalg.cpp - arith/math on tensors as linalg ----------===//

#include "dist/Dialect/Dist/Transforms/ElementwiseToLinalg.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

using namespace mlir;

static bool isTensor(Type type) { return isa<RankedTensorType>(type); }

bool dist::isElementwiseOnTensors(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() &&
         isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) &&
         op->getNumResults() > 0 &&
         llvm::all_of(op->getResultTypes(), isTensor);
}

FailureOr<linalg::GenericOp> dist::rewriteElementwiseToGeneric(Operation *op) {
  if (op->getNumResults() != 1)
    return failure();
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!resultType.hasStaticShape())
    return failure();
  OpBuilder b(op);
  Location loc = op->getLoc();
  SmallVector<Value> inputs;
  for (Value operand : op->getOperands())
    if (isTensor(operand.getType()))
      inputs.push_back(operand);
  Value init = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                       resultType.getElementType(),
                                       resultType.getEncoding());
  unsigned rank = resultType.getRank();
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> scalarOperands;
        unsigned next = 0;
        for (Value operand : op->getOperands())
          scalarOperands.push_back(isTensor(operand.getType()) ? args[next++]
                                                               : operand);
        OperationState state(nl, op->getName());
        state.addOperands(scalarOperands);
        state.addTypes(resultType.getElementType());
        state.addAttributes(op->getAttrs());
        Operation *scalar = nb.create(state);
        linalg::YieldOp::create(nb, nl, scalar->getResult(0));
      });
  op->replaceAllUsesWith(generic->getResults());
  op->erase();
  return generic;
}
