// The whole pipeline, from a reshard in the global view to LLVM IR.
// RUN: dist-opt %s --dist-to-llvm="moves=collective" | FileCheck %s
// RUN: dist-opt %s --dist-to-llvm="moves=collective" | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

dist.mesh @m = <["x"=2, "y"=2]>

// Only the LLVM dialect is left: the entry takes the input's local 3x6
// buffer and a caller-allocated 5x3 output, as expanded descriptors.
// CHECK-NOT: dist.
// CHECK-NOT: memref.
// CHECK-LABEL: llvm.func @transpose_uneven
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK: llvm.call @distRtAllGather
// LLVMIR-DAG: declare i64 @distRtMeshCreate(i64, ptr, ptr)
// LLVMIR-DAG: declare i32 @distRtAllGather(i64, ptr, ptr, i64, i32, ptr)
// LLVMIR: define void @transpose_uneven(ptr %0, ptr %1, i64 %2, i64 %3, i64 %4, i64 %5, i64 %6, ptr %7, ptr %8, i64 %9, i64 %10, i64 %11, i64 %12, i64 %13)
// LLVMIR: call i32 @distRtAllGather(
func.func @transpose_uneven(%a: tensor<10x6xf32, #dist.sharding<@m, [{"x", "y"}, {}]>>) -> tensor<10x6xf32, #dist.sharding<@m, [{"x"}, {"y"}]>> {
  %b = dist.reshard %a : tensor<10x6xf32, #dist.sharding<@m, [{"x", "y"}, {}]>> -> tensor<10x6xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>
  return %b : tensor<10x6xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>
}
