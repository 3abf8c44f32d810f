//===- InitAllDist.cpp - register what dist programs use ------------------===//
//
// The one place that knows which dialects, interface models, passes and
// pipelines a dist program needs (dist/InitAllDist.h); dist-opt, dist-run,
// the Python bindings, the plugin and embedding compilers all call it, so a
// new pass or model is registered once.
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"
#include "dist/Codegen/Passes.h"
#include "dist/Conversion/Pipelines.h"
#include "dist/Dialect/Dist/IR/ShardedTypeUses.h"
#include "dist/Dialect/Dist/Transforms/BufferizableOpInterfaceImpl.h"
#include "dist/Dialect/Dist/Transforms/PartitionModels.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/AllInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/IR/TensorTilingInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Vector/Transforms/SubsetOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void dist::registerDistDialect(DialectRegistry &registry) {
  registry.insert<DistDialect>();
  registerBufferizableOpInterfaceExternalModels(registry);
  registerPartitionModels(registry);
  registerShardedTypeUsesExternalModels(registry);
}

void dist::registerAllDistDialects(DialectRegistry &registry) {
  registerDistDialect(registry);
  registry
      .insert<arith::ArithDialect, bufferization::BufferizationDialect,
              cf::ControlFlowDialect, func::FuncDialect, linalg::LinalgDialect,
              LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
              scf::SCFDialect, shard::ShardDialect, tensor::TensorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  // Loops over layers carry tensors (scf.for iter_args).
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  // The user's compute, once partitioned and localized.
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  // The local compute's code generation (include/dist/Codegen): tiling and
  // fusion (the linalg and tensor models), vector code on tensors and its
  // bufferization.
  registry.insert<affine::AffineDialect, vector::VectorDialect>();
  linalg::registerAllDialectInterfaceImplementations(registry);
  tensor::registerTilingInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  // Vector transfers as subsets of tensors: loop-invariant-subset-hoisting
  // keeps a loop's accumulator in a vector instead of memory.
  vector::registerSubsetOpInterfaceExternalModels(registry);
  tensor::registerSubsetOpInterfaceExternalModels(registry);
  // Lets buffer-results-to-out-params hoist a result's allocation into the
  // caller's buffer instead of computing into a temporary and copying.
  memref::registerAllocationOpInterfaceExternalModels(registry);
  // target=gpu: kernels (gpu, NVVM), their compilation to an embedded
  // binary (the NVVM target), and the translations that binary and the
  // host code's launches go through.
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}

void dist::registerDistOwnPasses() {
  registerDistPassesAndPipelines();
  registerDistCodegenPasses();
  registerDistConversionPassesAndPipelines();
}

llvm::ArrayRef<llvm::StringRef> dist::getDistOwnPassNames() {
  // Kept next to registerDistOwnPasses: a pass registered there belongs
  // here too (test/Plugin checks every name works as an mlir-opt flag).
  static const llvm::StringRef names[] = {
      "dist-partition",          "dist-lower-reshard",
      "dist-reshard-pipeline",   "dist-localize",
      "convert-dist-to-runtime", "dist-to-llvm",
      "dist-import-shard",       "dist-distinct-result-buffers",
      "dist-fuse-elementwise",   "dist-fuse-rows",
      "dist-vectorize",          "dist-approximate-vector-math",
      "dist-tree-reductions",    "dist-cpu-compute"};
  return names;
}

void dist::registerAllDistPasses() {
  registerTransformsPasses();
  registerConversionPasses();
  bufferization::registerBufferizationPasses();
  bufferization::registerBufferizationPipelines();
  registerDistOwnPasses();
}
