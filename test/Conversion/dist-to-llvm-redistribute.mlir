// A redistribute and a cross-mesh reshard through the whole pipeline, on both
// targets: one distRtExchange each, with the table as a constant; on
// target=gpu the call takes the runtime's stream.
// RUN: dist-opt %s --dist-to-llvm | FileCheck %s --check-prefixes=CHECK,CPU
// RUN: dist-opt %s --dist-to-llvm="target=gpu" | FileCheck %s --check-prefixes=CHECK,GPU
// RUN: dist-opt %s --dist-to-llvm | mlir-translate --mlir-to-llvmir | FileCheck %s --check-prefix=LLVMIR

dist.mesh @m = <["x"=2, "y"=4]>
dist.mesh @s0 = <["tp"=4], devices = [0, 1, 2, 3]>
dist.mesh @s1 = <["tp"=2], devices = [4, 5]>

// CHECK-LABEL: llvm.func @transpose_shards
// GPU: llvm.call @distRtDefaultStream
// CHECK: llvm.call @distRtMeshCreate
// CHECK: llvm.call @distRtExchange
// CHECK-NOT: llvm.call @distRtAll
// CPU-NOT: llvm.call @distRtDefaultStream
// CHECK: llvm.return
// LLVMIR: declare i32 @distRtExchange(i64, ptr, ptr, ptr, ptr, i64, ptr, i32, ptr)
func.func @transpose_shards(%a: tensor<64x64xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>) -> tensor<64x64xf32, #dist.sharding<@m, [{"y"}, {"x"}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m, [{"x"}, {"y"}]>> -> tensor<64x64xf32, #dist.sharding<@m, [{"y"}, {"x"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@m, [{"y"}, {"x"}]>>
}

// CHECK-LABEL: llvm.func @handoff
// CHECK: llvm.call @distRtExchange
// CHECK: llvm.return
func.func @handoff(%a: tensor<64x64xbf16, #dist.sharding<@s0, [{"tp"}, {}]>>) -> tensor<64x64xbf16, #dist.sharding<@s1, [{"tp"}, {}]>> {
  %b = dist.reshard %a : tensor<64x64xbf16, #dist.sharding<@s0, [{"tp"}, {}]>> -> tensor<64x64xbf16, #dist.sharding<@s1, [{"tp"}, {}]>>
  return %b : tensor<64x64xbf16, #dist.sharding<@s1, [{"tp"}, {}]>>
}
