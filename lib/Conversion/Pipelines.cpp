//===- Pipelines.cpp - from global-view dist IR down to LLVM --------------===//

#include "dist/Conversion/Pipelines.h"
#include "dist/Conversion/Passes.h"
#include "dist/Dialect/Dist/IR/ShardedTypeUses.h"
#include "dist/Dialect/Dist/Transforms/BufferizableOpInterfaceImpl.h"
#include "dist/Dialect/Dist/Transforms/PartitionModels.h"
#include "dist/InitAllDist.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dist::buildDistLocalToLLVMPipeline(
    OpPassManager &pm, const DistToLLVMPipelineOptions &options) {
  DistLocalizeOptions localize;
  localize.permuteTableDevices = options.permuteTableDevices;
  pm.addPass(createDistLocalize(localize));

  // Function boundaries get plain (identity layout) memrefs: that is the
  // calling convention, and the runtime needs contiguous buffers anyway.
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A loop over layers yields a freshly computed tensor each iteration.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // Results become caller-allocated out-parameters (public functions
  // included: they are the entry points), each with its own buffer: a
  // buffer returned twice is copied first.
  pm.addPass(createDistDistinctResultBuffers());
  bufferization::BufferResultsToOutParamsPassOptions outParams;
  outParams.hoistStaticAllocs = true;
  outParams.modifyPublicFunctions = true;
  pm.addPass(bufferization::createBufferResultsToOutParamsPass(outParams));
  bufferization::buildBufferDeallocationPipeline(pm);

  ConvertDistToRuntimeOptions runtime;
  runtime.target = options.target;
  pm.addPass(createConvertDistToRuntime(runtime));
  pm.addPass(createCanonicalizerPass());

  pm.addPass(createConvertLinalgToLoopsPass());
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
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void dist::buildDistToLLVMPipeline(OpPassManager &pm,
                                   const DistToLLVMPipelineOptions &options) {
  pm.addPass(createDistPartition(options.toPartitionOptions()));
  buildReshardLoweringPipeline(pm, options.toLowerReshardOptions());
  buildDistLocalToLLVMPipeline(pm, options);
}

void dist::registerDistConversionPassesAndPipelines() {
  registerDistConversionPasses();
  PassPipelineRegistration<DistToLLVMPipelineOptions>(
      "dist-to-llvm",
      "Plan reshards, localize, bufferize, call the runtime, lower to LLVM",
      buildDistToLLVMPipeline);
}

void dist::registerDistDialect(DialectRegistry &registry) {
  registry.insert<DistDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
  registerPartitionModels(registry);
  registerShardedTypeUsesExternalModels(registry);
}

void dist::registerAllDistDialects(DialectRegistry &registry) {
  registerDistDialect(registry);
  registry.insert<arith::ArithDialect, bufferization::BufferizationDialect,
                  cf::ControlFlowDialect, func::FuncDialect,
                  linalg::LinalgDialect, LLVM::LLVMDialect, math::MathDialect,
                  memref::MemRefDialect, scf::SCFDialect,
                  shard::ShardDialect, tensor::TensorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // Loops over layers carry tensors (scf.for iter_args).
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  // The user's compute, once partitioned and localized.
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  // Lets buffer-results-to-out-params hoist a result's allocation into the
  // caller's buffer instead of computing into a temporary and copying.
  memref::registerAllocationOpInterfaceExternalModels(registry);
}

void dist::registerDistOwnPasses() {
  registerDistPassesAndPipelines();
  registerDistConversionPassesAndPipelines();
}

llvm::ArrayRef<llvm::StringRef> dist::getDistOwnPassNames() {
  // Kept next to registerDistOwnPasses: a pass registered there belongs
  // here too (test/Plugin checks every name works as an mlir-opt flag).
  static const llvm::StringRef names[] = {
      "dist-partition",         "dist-lower-reshard",
      "dist-reshard-pipeline",  "dist-localize",
      "convert-dist-to-runtime", "dist-to-llvm",
      "dist-import-shard",      "dist-distinct-result-buffers"};
  return names;
}

void dist::registerAllDistPasses() {
  registerTransformsPasses();
  registerConversionPasses();
  bufferization::registerBufferizationPasses();
  bufferization::registerBufferizationPipelines();
  registerDistOwnPasses();
}
