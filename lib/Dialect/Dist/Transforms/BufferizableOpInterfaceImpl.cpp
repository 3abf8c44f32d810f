//===- BufferizableOpInterfaceImpl.cpp - dist bufferization ---------------===//
//
// Every dist.local.* op reads its input and produces a new buffer (the
// collectives cannot work in place in general: a gather's output is larger
// than its input, and the runtime needs distinct send and receive buffers),
// so each bufferizes to an allocation plus the dist.buffer.* op in
// destination-passing style. The runtime needs contiguous buffers: an input
// with another layout is copied into a fresh one first.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/Transforms/BufferizableOpInterfaceImpl.h"
#include "dist/Dialect/Dist/IR/DistOps.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace dist;

namespace {

MemRefType contiguousBufferType(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// A local op with the BufferizesTo trait: its buffer form is
/// LocalOp::BufferOp.
template <typename LocalOp>
struct LocalOpInterface
    : public BufferizableOpInterface::ExternalModel<LocalOpInterface<LocalOp>,
                                                    LocalOp> {
  using BufferOp = typename LocalOp::BufferOp;

  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  FailureOr<BufferLikeType> getBufferType(Operation *, Value value,
                                          const BufferizationOptions &,
                                          const BufferizationState &,
                                          SmallVector<Value> &) const {
    return cast<BufferLikeType>(contiguousBufferType(value));
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto local = cast<LocalOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> input =
        getBuffer(rewriter, local.getInput(), options, state);
    if (failed(input))
      return failure();
    Value in = *input;
    if (!cast<MemRefType>(in.getType()).getLayout().isIdentity()) {
      Value copy = memref::AllocOp::create(
          rewriter, loc, contiguousBufferType(local.getInput()));
      if (failed(options.createMemCpy(rewriter, loc, in, copy)))
        return op->emitOpError(
            "cannot copy its input into a contiguous buffer");
      in = copy;
    }
    Value out = memref::AllocOp::create(
        rewriter, loc, contiguousBufferType(local.getResult()));
    // The buffer op has exactly the local op's attributes.
    OperationState bufferState(loc, BufferOp::getOperationName());
    bufferState.addOperands({in, out});
    bufferState.addAttributes(op->getAttrDictionary().getValue());
    rewriter.create(bufferState);
    replaceOpWithBufferizedValues(rewriter, op, out);
    return success();
  }
};

/// Attaches the model to `OpTy` if it is a local op with a buffer form.
template <typename OpTy, typename = void> struct AttachIfBufferizable {
  static void attach(MLIRContext *) {}
};
template <typename OpTy>
struct AttachIfBufferizable<OpTy, std::void_t<typename OpTy::BufferOp>> {
  static void attach(MLIRContext *context) {
    OpTy::template attachInterface<LocalOpInterface<OpTy>>(*context);
  }
};

template <typename... OpTys> void attachToLocalOps(MLIRContext *context) {
  (AttachIfBufferizable<OpTys>::attach(context), ...);
}

} // namespace

void dist::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  // Every op of the dialect that says it has a buffer form (the
  // BufferizesTo trait Dist_LocalAndBufferOps gives each local op).
  registry.addExtension(+[](MLIRContext *context, DistDialect *) {
    attachToLocalOps<
#define GET_OP_LIST
#include "dist/Dialect/Dist/IR/DistOps.cpp.inc"
        >(context);
  });
}
