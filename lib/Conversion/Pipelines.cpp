//===- Pipelines.cpp - from global-view dist IR down to LLVM --------------===//

#include "dist/Conversion/Pipelines.h"
#include "dist/Codegen/Passes.h"
#include "dist/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Vector/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dist::buildDistLocalToLLVMPipeline(
    OpPassManager &pm, const DistToLLVMPipelineOptions &options) {
  DistLocalizeOptions localize;
  localize.permuteTableDevices = options.permuteTableDevices;
  pm.addPass(createDistLocalize(localize));
  const bool gpu = options.target == RuntimeTarget::Gpu;
  const bool fused = !gpu && options.compute == ComputeLowering::Fused;
  // target=gpu: elementwise chains folded into their readers, so that each
  // becomes one kernel instead of one kernel and one buffer per op.
  if (gpu && options.compute == ComputeLowering::Fused)
    pm.addNestedPass<func::FuncOp>(createDistFuseElementwise());
  if (fused) {
    CpuComputeOptions compute;
    compute.vectorBytes = options.vectorBytes;
    compute.rowTileElements = options.rowTileElements;
    buildCpuComputePipeline(pm, compute);
  }

  // Function boundaries get plain (identity layout) memrefs: that is the
  // calling convention, and the runtime needs contiguous buffers anyway.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A loop over layers yields a freshly computed tensor each iteration.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  if (fused) {
    // The tiled loops carry buffers they write in place: folded away, so
    // that a result computed by a loop is computed into the caller's buffer
    // (buffer-results-to-out-params) instead of copied there; and the
    // loops' temporaries allocated once, not per iteration.
    pm.addPass(createCanonicalizerPass());
    pm.addNestedPass<func::FuncOp>(
        bufferization::createBufferLoopHoistingPass());
  }
  // Results become caller-allocated out-parameters (public functions
  // included: they are the entry points), each with its own buffer: a
  // buffer returned twice is copied first.
  pm.addPass(createDistDistinctResultBuffers());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);

  // Matrix products first: what they leave of the user's compute is
  // elementwise and reduction loops.
  if (options.contractions == ContractionLowering::Runtime)
    pm.addPass(createConvertContractionsToRuntime());
  ConvertDistToRuntimeOptions runtime;
  runtime.target = options.target;
  pm.addPass(createConvertDistToRuntime(runtime));
  pm.addPass(createCanonicalizerPass());

  if (gpu) {
    // The compute left as GPU kernels, lowered to NVVM before the host's
    // lowering reaches their ops (their math goes to libdevice, not libm).
    pm.addPass(createConvertComputeToGpu());
    pm.addPass(createConvertParallelLoopToGpuPass());
    pm.addPass(createLowerAffinePass());
    pm.addPass(createGpuKernelOutliningPass());
    pm.addNestedPass<gpu::GPUModuleOp>(createSCFToControlFlowPass());
    // The kernels' branches (the host has none yet): convert-gpu-to-nvvm
    // converts their blocks' arguments but not the branches themselves.
    pm.addPass(createConvertControlFlowToLLVMPass());
    ConvertGpuOpsToNVVMOpsOptions nvvm;
    nvvm.indexBitwidth = 64;
    pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(nvvm));
    pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
    GpuNVVMAttachTargetOptions target;
    target.chip = options.gpuChip;
    target.optLevel = 3;
    pm.addPass(createGpuNVVMAttachTarget(target));
  } else {
    pm.addPass(createConvertLinalgToLoopsPass());
    if (fused)
      buildCpuVectorLoweringPipeline(pm);
  }
  // The user's math ops: LLVM intrinsics, and libm calls for the rest.
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // Every buffer the program allocates comes from the dist runtime (the
  // generic allocation functions): device memory for target=gpu, and on
  // both targets freed temporaries are reused instead of going back to the
  // system on every call.
  if (fused) {
    // A row's partial sums are already summed in another order than the
    // loops' (partial-reduction tiling): their last reduction across the
    // vector may be a tree instead of 16 dependent adds.
    ConvertVectorToLLVMPassOptions vectorToLLVM;
    vectorToLLVM.reassociateFPReductions = true;
    pm.addPass(createConvertVectorToLLVMPass(vectorToLLVM));
    // The poison padding values of vector transfers.
    pm.addPass(createUBToLLVMConversionPass());
  }
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  if (gpu) {
    // Launches become the runtime's mgpu* calls (docs/runtime.md, "GPU
    // kernels"); the kernels a binary embedded in the module.
    pm.addPass(createGpuToLLVMConversionPass());
    pm.addPass(createReconcileUnrealizedCastsPass());
    GpuModuleToBinaryPassOptions binary;
    binary.toolkitPath = options.cudaToolkit;
    binary.compilationTarget = "fatbin";
    pm.addPass(createGpuModuleToBinaryPass(binary));
    return;
  }
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void dist::buildCpuComputePipeline(OpPassManager &pm,
                                   const CpuComputeOptions &options) {
  // Elementwise chains folded into their readers, then each chain's rows
  // computed together, then every tile as vector code.
  pm.addNestedPass<func::FuncOp>(createDistFuseElementwise());
  DistFuseRowsOptions rows;
  rows.tileElements = options.rowTileElements;
  pm.addNestedPass<func::FuncOp>(createDistFuseRows(rows));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  DistVectorizeOptions vectorize;
  vectorize.vectorBytes = options.vectorBytes;
  pm.addNestedPass<func::FuncOp>(createDistVectorize(vectorize));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // A partial reduction's accumulator read and written back every
  // iteration becomes a vector the loop carries (a register); what a row's
  // chunks share (its max, its scale) is computed once per row.
  pm.addPass(createLoopInvariantSubsetHoistingPass());
  pm.addPass(createLoopInvariantCodeMotionPass());
  // Loop indices in vectors (masks from linalg.index) as i32 where their
  // ranges allow: half the lanes' bytes of 64-bit index vectors.
  arith::ArithIntRangeNarrowingOptions narrowing;
  narrowing.bitwidthsSupported = {32};
  pm.addPass(arith::createArithIntRangeNarrowing(narrowing));
  pm.addPass(createCanonicalizerPass());
}

void dist::buildCpuVectorLoweringPipeline(OpPassManager &pm) {
  // Reductions of vectors to one lane across the row (as halving trees),
  // vector transfers that are not plain loads to loops, vector math to
  // polynomials; convert-vector-to-llvm follows with the rest of the
  // dialects.
  pm.addNestedPass<func::FuncOp>(createDistTreeReductions());
  pm.addNestedPass<func::FuncOp>(vector::createLowerVectorMultiReductionPass(
      vector::VectorMultiReductionLowering::InnerParallel));
  pm.addPass(createConvertVectorToSCFPass());
  pm.addNestedPass<func::FuncOp>(createDistApproximateVectorMath());
}

const char *dist::defaultCudaToolkit() { return DIST_CUDA_TOOLKIT_DIR; }

void dist::buildPartitionPipeline(OpPassManager &pm,
                                  const DistToLLVMPipelineOptions &options) {
  // Semantics §3c: the microbatches first, so that every stage of each
  // becomes its own function.
  if (options.microbatches != 1)
    pm.addPass(createDistPipeline(DistPipelineOptions{options.microbatches}));
  pm.addPass(createDistPartition(options.toPartitionOptions()));
}

void dist::buildDistToLLVMPipeline(OpPassManager &pm,
                                   const DistToLLVMPipelineOptions &options) {
  buildPartitionPipeline(pm, options);
  buildReshardLoweringPipeline(pm, options.toLowerReshardOptions());
  buildDistLocalToLLVMPipeline(pm, options);
}

void dist::registerDistConversionPassesAndPipelines() {
  registerDistConversionPasses();
  PassPipelineRegistration<CpuComputeOptions>(
      "dist-cpu-compute",
      "The local compute on tensors as fused, vectorized loop nests "
      "(dist-fuse-elementwise, dist-fuse-rows, dist-vectorize)",
      buildCpuComputePipeline);
  PassPipelineRegistration<DistToLLVMPipelineOptions>(
      "dist-to-llvm",
      "Plan reshards, localize, bufferize, call the runtime, lower to LLVM",
      buildDistToLLVMPipeline);
}
