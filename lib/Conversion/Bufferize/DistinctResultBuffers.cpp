//===- DistinctResultBuffers.cpp - one allocation per returned buffer -----===//
//
// buffer-results-to-out-params (with hoist-static-allocs, as dist-to-llvm
// runs it) replaces a returned static allocation by the caller's
// out-parameter and erases it. A function that returns one allocation at two
// positions (a tensor returned twice) has it replaced and erased twice,
// which crashes. Copying every repeat into a buffer of its own first gives
// each out-parameter one allocation, and the program the same values.
//
//===----------------------------------------------------------------------===//

#include "dist/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseSet.h"

namespace dist {
#define GEN_PASS_DEF_DISTDISTINCTRESULTBUFFERS
#include "dist/Conversion/Passes.h.inc"
} // namespace dist

using namespace mlir;

namespace {

/// A new buffer of `buffer`'s type holding a copy of it.
Value copyOf(OpBuilder &builder, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  SmallVector<Value> dynamicSizes;
  for (auto [dim, extent] : llvm::enumerate(type.getShape()))
    if (ShapedType::isDynamic(extent))
      dynamicSizes.push_back(
          memref::DimOp::create(builder, loc, buffer, int64_t(dim)));
  Value copy = memref::AllocOp::create(builder, loc, type, dynamicSizes);
  memref::CopyOp::create(builder, loc, buffer, copy);
  return copy;
}

struct DistDistinctResultBuffersPass
    : public dist::impl::DistDistinctResultBuffersBase<
          DistDistinctResultBuffersPass> {
  void runOnOperation() override {
    getOperation()->walk([](func::ReturnOp ret) {
      llvm::SmallDenseSet<Value> returned;
      OpBuilder builder(ret);
      for (OpOperand &operand : ret->getOpOperands()) {
        Value value = operand.get();
        // Memrefs with a layout other than the identity cannot be
        // allocated as they are; the out-parameter promotion leaves them
        // alone (it hoists only allocations), so they need no copy.
        auto type = dyn_cast<MemRefType>(value.getType());
        if (!type || !type.getLayout().isIdentity())
          continue;
        if (returned.insert(value).second)
          continue;
        operand.set(copyOf(builder, ret.getLoc(), value));
      }
    });
  }
};

} // namespace
