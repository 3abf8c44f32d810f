//===- Pipelines.h - from global-view dist IR down to LLVM ------*- C++ -*-===//
//
// The full compilation pipeline of a dist program:
//
//   dist-reshard-pipeline   plan every dist.reshard into collectives
//   dist-localize           global view (sharded tensor types) -> per-device
//                           local padded buffers and dist.local.* ops
//   compute=fused: dist-fuse-elementwise; target=cpu: dist-fuse-rows,
//               dist-vectorize
//                           the local compute as fused vector loop nests
//   one-shot-bufferize      tensors -> memrefs (dist ops included)
//   convert-contractions-to-runtime
//                           local matrix products -> the runtime's GEMM
//   convert-dist-to-runtime collectives -> runtime calls + local data movement
//   target=gpu: convert-compute-to-gpu, convert-parallel-loops-to-gpu,
//               gpu-kernel-outlining, NVVM, gpu-module-to-binary
//                           the rest of the compute as GPU kernels, embedded
//   ... -> LLVM dialect
//
// Calling convention of the result. Every public func.func @f of the input
// whose arguments and results are sharded tensors becomes an llvm.func @f
// that returns nothing and takes, in order,
//   - for each argument, the expanded memref descriptor (allocated pointer,
//     aligned pointer, offset, sizes..., strides...) of this device's local
//     padded buffer: identity layout, shape = planner::localShape(mesh,
//     layout, global shape) (semantics §2);
//   - then, for each result, the same for a caller-allocated output buffer of
//     the result's local padded shape, which @f fills.
// Padding is zero in the inputs and stays zero in the outputs. The caller
// must have initialised the runtime (distRtInit / distRtInitWithBackend)
// before the call and finalise it afterwards.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CONVERSION_PIPELINES_H
#define DIST_CONVERSION_PIPELINES_H

#include "dist/Codegen/Defaults.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Pass/PassOptions.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace dist {

/// The CUDA toolkit found when dist was configured ("" if none).
const char *defaultCudaToolkit();

struct DistToLLVMPipelineOptions
    : public ReshardPlanningOptions<DistToLLVMPipelineOptions> {
  Option<RuntimeTarget> target{
      *this, "target",
      llvm::cl::desc("cpu (host buffers, MPI) or gpu (device buffers, NCCL)"),
      llvm::cl::init(RuntimeTarget::Cpu), runtimeTargetOptionValues()};
  Option<ContractionLowering> contractions{
      *this, "contractions",
      llvm::cl::desc("Local matrix products: the runtime's GEMM (BLAS, "
                     "cuBLAS) or loops"),
      llvm::cl::init(ContractionLowering::Runtime),
      contractionLoweringOptionValues()};
  Option<ComputeLowering> compute{
      *this, "compute",
      llvm::cl::desc("The local compute other than products: fused (cpu: "
                     "fused, tiled and vectorized loop nests; gpu: elementwise "
                     "chains fused into one kernel) or linalg's loops (one "
                     "kernel per op on gpu)"),
      llvm::cl::init(ComputeLowering::Fused), computeLoweringOptionValues()};
  Option<int64_t> vectorBytes{
      *this, "vector-bytes",
      llvm::cl::desc("compute=fused: the vector width in bytes (64: AVX-512)"),
      llvm::cl::init(codegen::kDefaultVectorBytes)};
  Option<int64_t> rowTileElements{
      *this, "row-tile-elements",
      llvm::cl::desc("compute=fused: about how many elements a block of rows "
                     "dist-fuse-rows computes together holds"),
      llvm::cl::init(codegen::kDefaultRowTileElements)};
  Option<int64_t> microbatches{
      *this, "microbatches",
      llvm::cl::desc("Run a function whose compute spans several meshes as "
                     "a pipeline of this many microbatches (dist-pipeline, "
                     "semantics §3c; 1: as written)"),
      llvm::cl::init(1)};
  Option<std::string> gpuChip{
      *this, "gpu-chip",
      llvm::cl::desc("target=gpu: the GPU architecture kernels are compiled "
                     "for (cubin; PTX for newer GPUs rides along)"),
      llvm::cl::init("sm_80")};
  Option<std::string> cudaToolkit{
      *this, "cuda-toolkit",
      llvm::cl::desc("target=gpu: the CUDA toolkit whose ptxas, fatbinary "
                     "and libdevice build the kernels (default: the one "
                     "found when dist was configured)"),
      llvm::cl::init(defaultCudaToolkit())};
  Option<int64_t> permuteTableDevices{
      *this, "permute-table-devices",
      llvm::cl::desc("Largest mesh whose permutes carry a rank-to-rank "
                     "table (dist-localize)"),
      llvm::cl::init(4096)};
};

/// The knobs of the local compute's code generation (compute=fused).
struct CpuComputeOptions : public mlir::PassPipelineOptions<CpuComputeOptions> {
  Option<int64_t> vectorBytes{*this, "vector-bytes",
                              llvm::cl::desc("The vector width in bytes"),
                              llvm::cl::init(codegen::kDefaultVectorBytes)};
  Option<int64_t> rowTileElements{
      *this, "row-tile-elements",
      llvm::cl::desc("About how many elements a block of rows holds"),
      llvm::cl::init(codegen::kDefaultRowTileElements)};
};

/// target=cpu, compute=fused: the local compute on tensors as fused,
/// vectorized loop nests (dist-fuse-elementwise, dist-fuse-rows,
/// dist-vectorize), right after dist-localize.
void buildCpuComputePipeline(mlir::OpPassManager &pm,
                             const CpuComputeOptions &options);

/// The vector code's lowering towards LLVM, after bufferization:
/// multi-reductions, transfers, vector math.
void buildCpuVectorLoweringPipeline(mlir::OpPassManager &pm);

/// The choice of layouts: dist-pipeline (when `microbatches` is not 1),
/// then dist-partition.
void buildPartitionPipeline(mlir::OpPassManager &pm,
                            const DistToLLVMPipelineOptions &options);

/// Everything after reshard planning: localize, bufferize, convert to
/// runtime calls and lower to the LLVM dialect.
void buildDistLocalToLLVMPipeline(mlir::OpPassManager &pm,
                                  const DistToLLVMPipelineOptions &options);

/// The whole pipeline: dist-reshard-pipeline, then the above.
void buildDistToLLVMPipeline(mlir::OpPassManager &pm,
                             const DistToLLVMPipelineOptions &options);

/// Registers the conversion passes and the `dist-to-llvm` pipeline.
void registerDistConversionPassesAndPipelines();

} // namespace dist

#endif // DIST_CONVERSION_PIPELINES_H
