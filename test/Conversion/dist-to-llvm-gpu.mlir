// target=gpu: buffers come from the runtime (device memory with NCCL) and
// all work is enqueued on the runtime's stream.
// RUN: dist-opt %s --dist-to-llvm="target=gpu moves=collective" | FileCheck %s
// RUN: dist-opt %s --dist-to-llvm="target=gpu moves=collective" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

dist.mesh @m = <["x"=2, "y"=2]>

// CHECK-NOT: llvm.call @malloc
// CHECK-NOT: llvm.call @free
// CHECK-LABEL: llvm.func @transpose_uneven
// CHECK: llvm.call @distRtDefaultStream
// CHECK: llvm.call @_mlir_memref_to_llvm_alloc
// CHECK: llvm.call @distRtAllGather
// CHECK: llvm.call @distRtCopyStrided
// CHECK: llvm.call @_mlir_memref_to_llvm_free
// LLVMIR-DAG: declare ptr @_mlir_memref_to_llvm_alloc(i64)
// LLVMIR-DAG: declare void @_mlir_memref_to_llvm_free(ptr)
// LLVMIR-DAG: declare ptr @distRtDefaultStream()
func.func @transpose_uneven(%a: tensor<10x6xf32, #dist.sharding<@m, [{"x", "y"}, {}]>>) -> tensor<10x6xf32, #dist.sharding<@m, [{"x"}, {"y"}]>> {
  %b = dist.reshard %a : tensor<10x6xf32, #dist.sharding<@m, [{"x", "y"}, {}]>> -> tensor<10x6xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>
  return %b : tensor<10x6xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>
}
