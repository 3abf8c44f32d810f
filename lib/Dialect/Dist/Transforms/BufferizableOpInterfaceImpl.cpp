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

template <typename LocalOp, typename BufferOp>
struct LocalOpInterface
    : public BufferizableOpInterface::ExternalModel<
          LocalOpInterface<LocalOp, BufferOp>, LocalOp> {
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

  FailureOr<BufferLikeType>
  getBufferType(Operation *, Value value, const BufferizationOptions &,
                const BufferizationState &, SmallVector<Value> &) const {
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
        return op->emitOpError("cannot copy its input into a contiguous buffer");
      in = copy;
    }
    Value out = memref::AllocOp::create(rewriter, loc,
                                        contiguousBufferType(local.getResult()));
    // The buffer op has exactly the local op's attributes.
    OperationState bufferState(loc, BufferOp::getOperationName());
    bufferState.addOperands({in, out});
    bufferState.addAttributes(op->getAttrDictionary().getValue());
    rewriter.create(bufferState);
    replaceOpWithBufferizedValues(rewriter, op, out);
    return success();
  }
};

} // namespace

void dist::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, DistDialect *) {
    LocalAllGatherOp::attachInterface<
        LocalOpInterface<LocalAllGatherOp, BufferAllGatherOp>>(*context);
    LocalAllSliceOp::attachInterface<
        LocalOpInterface<LocalAllSliceOp, BufferAllSliceOp>>(*context);
    LocalAllToAllOp::attachInterface<
        LocalOpInterface<LocalAllToAllOp, BufferAllToAllOp>>(*context);
    LocalReduceScatterOp::attachInterface<
        LocalOpInterface<LocalReduceScatterOp, BufferReduceScatterOp>>(
        *context);
    LocalAllReduceOp::attachInterface<
        LocalOpInterface<LocalAllReduceOp, BufferAllReduceOp>>(*context);
    LocalReplicateToPartialOp::attachInterface<LocalOpInterface<
        LocalReplicateToPartialOp, BufferReplicateToPartialOp>>(*context);
    LocalPermuteOp::attachInterface<
        LocalOpInterface<LocalPermuteOp, BufferPermuteOp>>(*context);
    LocalRedistributeOp::attachInterface<
        LocalOpInterface<LocalRedistributeOp, BufferRedistributeOp>>(*context);
    LocalPackSegmentsOp::attachInterface<
        LocalOpInterface<LocalPackSegmentsOp, BufferPackSegmentsOp>>(*context);
    LocalUnpackSegmentsOp::attachInterface<
        LocalOpInterface<LocalUnpackSegmentsOp, BufferUnpackSegmentsOp>>(
        *context);
  });
}
