//===- ComputeToGpu.cpp - the local compute of target=gpu as kernels ------===//
//
// On target=gpu every buffer is device memory, so the compute that
// contractions-to-runtime left (elementwise ops, reductions, fills, masks)
// must run in GPU kernels. This pass prepares it for MLIR's GPU path:
//   - each linalg op becomes parallel loops over its parallel dims with its
//     reductions sequential inside (linalg::linalgOpToParallelLoops); an op
//     with no parallel dim gets a one-iteration parallel loop around it, so
//     that it too runs on the device (one thread);
//   - each outermost parallel loop nest is collapsed to one dim, tiled by
//     the block size, and mapped: tiles to blocks, the tile to threads
//     (a guard skips the tail), so that convert-parallel-loops-to-gpu makes
//     one 1-D launch of it;
//   - a dense constant (memref.get_global, host memory) is copied to a
//     device buffer where it is used;
//   - any other load or store of a buffer outside a kernel is a located
//     error: the host cannot touch device memory.
// Padded reductions keep their masks and linalg.index its global offsets:
// both are in the op's body, which the kernel runs unchanged.
//
//===----------------------------------------------------------------------===//

#include "../DistToRuntime/RuntimeCalls.h"

#include "dist/Conversion/Passes.h"
#include "dist/Runtime/DistRuntime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <numeric>

namespace dist {
#define GEN_PASS_DEF_CONVERTCOMPUTETOGPU
#include "dist/Conversion/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;

namespace {

/// Threads per block of every launch.
constexpr int64_t kBlockSize = 256;

bool insideParallelLoop(Operation *op) {
  return op->getParentOfType<scf::ParallelOp>() != nullptr;
}

/// linalg ops -> parallel loops (reductions sequential inside); an op
/// without parallel dims runs inside a one-iteration parallel loop.
LogicalResult lowerLinalg(ModuleOp module) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
  IRRewriter rewriter(module.getContext());
  for (linalg::LinalgOp op : ops) {
    if (!op.hasPureBufferSemantics())
      return op->emitOpError(
          "must be bufferized before convert-compute-to-gpu");
    rewriter.setInsertionPoint(op);
    if (op.getNumParallelLoops() == 0 && !insideParallelLoop(op)) {
      Location loc = op.getLoc();
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      auto single = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                            ValueRange{one}, ValueRange{one});
      rewriter.moveOpBefore(op, single.getBody()->getTerminator());
      rewriter.setInsertionPoint(op);
    }
    if (failed(linalg::linalgOpToParallelLoops(rewriter, op)))
      return op->emitOpError("cannot be lowered to parallel loops for the GPU");
    rewriter.eraseOp(op);
  }
  return success();
}

/// Collapses, tiles and maps each outermost parallel loop nest.
void mapLoops(ModuleOp module) {
  MLIRContext *context = module.getContext();
  IRRewriter rewriter(context);
  auto outermost = [&] {
    SmallVector<scf::ParallelOp> loops;
    module.walk([&](scf::ParallelOp loop) {
      if (!insideParallelLoop(loop))
        loops.push_back(loop);
    });
    return loops;
  };
  for (scf::ParallelOp loop : outermost())
    if (loop.getNumLoops() > 1) {
      std::vector<unsigned> all(loop.getNumLoops());
      std::iota(all.begin(), all.end(), 0u);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
    }
  auto mapping = [&](gpu::Processor processor) {
    AffineMap identity = AffineMap::getMultiDimIdentityMap(1, context);
    return gpu::ParallelLoopDimMappingAttr::get(context, processor, identity,
                                                identity);
  };
  for (scf::ParallelOp loop : outermost()) {
    auto [blocks, threads] =
        scf::tileParallelLoop(loop, {kBlockSize}, /*noMinMaxBounds=*/true);
    (void)gpu::setMappingAttr(blocks, {mapping(gpu::Processor::BlockX)});
    (void)gpu::setMappingAttr(threads, {mapping(gpu::Processor::ThreadX)});
    // Anything nested in the tile (there is none after collapsing, but a
    // parallel loop in a body would be) runs sequentially in its thread.
    threads.walk([&](scf::ParallelOp inner) {
      if (inner != threads) {
        SmallVector<gpu::ParallelLoopDimMappingAttr> sequential(
            inner.getNumLoops(), mapping(gpu::Processor::Sequential));
        (void)gpu::setMappingAttr(inner, sequential);
      }
    });
  }
}

/// Whether `use` reads its buffer on the device: inside a parallel loop (a
/// kernel to be), or through a view that is.
bool usedOnDevice(OpOperand &use) {
  Operation *user = use.getOwner();
  if (insideParallelLoop(user))
    return true;
  if (auto view = dyn_cast<ViewLikeOpInterface>(user))
    if (view.getViewSource() == use.get())
      for (OpResult result : user->getResults())
        for (OpOperand &next : result.getUses())
          if (usedOnDevice(next))
            return true;
  return false;
}

/// A dense constant lives in host memory: each use on the device reads a
/// device copy made where the constant is taken. Host uses (the constant
/// tables of runtime calls) keep reading the host memory.
void copyConstantsToDevice(ModuleOp module, RuntimeCalls &calls) {
  SmallVector<memref::GetGlobalOp> globals;
  module.walk([&](memref::GetGlobalOp op) {
    if (llvm::any_of(op->getUses(), usedOnDevice))
      globals.push_back(op);
  });
  for (memref::GetGlobalOp global : globals) {
    OpBuilder b(global->getContext());
    b.setInsertionPointAfter(global);
    Location loc = global.getLoc();
    auto type = cast<MemRefType>(global.getType());
    auto plain = MemRefType::get(type.getShape(), type.getElementType());
    Value device = memref::AllocOp::create(b, loc, plain);
    int64_t bytes =
        type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
    Value use = device;
    if (plain != type)
      use = memref::CastOp::create(b, loc, type, device);
    global.getResult().replaceUsesWithIf(use, usedOnDevice);
    // Created after the replacement, the copy's host side reads the global
    // itself.
    Value args[] = {calls.bufferPtr(b, loc, device),
                    calls.bufferPtr(b, loc, global), calls.i64(b, loc, bytes),
                    calls.i32(b, loc, DIST_RT_COPY_HOST_TO_DEVICE),
                    calls.nullPtr(b, loc)};
    calls.call(b, loc, RuntimeEntry::Memcpy, args);
    // Freed at the end of its block, unless it leaves it (then it lives
    // on: a leak beats a use after free).
    bool escapes = llvm::any_of(use.getUsers(), [](Operation *user) {
      return user->hasTrait<OpTrait::IsTerminator>();
    });
    if (!escapes) {
      b.setInsertionPoint(global->getBlock()->getTerminator());
      memref::DeallocOp::create(b, loc, device);
    }
  }
}

/// Whether `memref` is host memory: a stack buffer (the argument tables of
/// runtime calls), or a view of one.
bool isHostBuffer(Value memref) {
  while (Operation *def = memref.getDefiningOp()) {
    if (isa<memref::AllocaOp>(def))
      return true;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return false;
    memref = view.getViewSource();
  }
  return false;
}

/// The host cannot touch device memory: a load or store of a device buffer
/// outside the parallel loops (which become kernels) is an error at its
/// location.
LogicalResult checkHostAccesses(ModuleOp module) {
  bool failed = false;
  module.walk([&](Operation *op) {
    Value memref;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      memref = load.getMemRef();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      memref = store.getMemRef();
    else if (auto atomic = dyn_cast<memref::AtomicRMWOp>(op))
      memref = atomic.getMemref();
    else if (auto generic = dyn_cast<memref::GenericAtomicRMWOp>(op))
      memref = generic.getMemref();
    if (!memref || insideParallelLoop(op) || isHostBuffer(memref))
      return;
    op->emitOpError("reads or writes device memory on the host, which "
                    "target=gpu cannot do (it runs only the program's "
                    "parallel loops as kernels); use target=cpu");
    failed = true;
  });
  return mlir::failure(failed);
}

struct ConvertComputeToGpuPass
    : public dist::impl::ConvertComputeToGpuBase<ConvertComputeToGpuPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(lowerLinalg(module)))
      return signalPassFailure();
    mapLoops(module);
    RuntimeCalls calls(module);
    copyConstantsToDevice(module, calls);
    if (failed(checkHostAccesses(module)))
      return signalPassFailure();
  }
};

} // namespace
