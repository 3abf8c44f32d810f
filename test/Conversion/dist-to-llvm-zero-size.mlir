// A tensor with a zero extent has an empty block on every device.
// dist-to-llvm emitted a memref.subview at offset 0 of the empty dim, which
// the verifier refuses; now the collectives of such a tensor move nothing and
// call nothing (every device skips them alike), and the module lowers.
// test/e2e/*zero* run these programs under dist-run.
// RUN: %bounded 60 4096 dist-opt %s --dist-to-llvm -split-input-file | FileCheck %s

// CHECK-LABEL: llvm.func @all_slice_zero_rows
// CHECK-NOT: memref.subview
// CHECK-NOT: llvm.call @distRt
// CHECK: llvm.return
dist.mesh @m4 = <["x"=4]>
func.func @all_slice_zero_rows(%a: tensor<0x4xf32, #dist.sharding<@m4, [{}, {}]>>)
    -> tensor<0x4xf32, #dist.sharding<@m4, [{"x"}, {}]>> {
  %0 = dist.all_slice %a axes = ["x"] dim = 0
      : tensor<0x4xf32, #dist.sharding<@m4, [{}, {}]>>
     -> tensor<0x4xf32, #dist.sharding<@m4, [{"x"}, {}]>>
  return %0 : tensor<0x4xf32, #dist.sharding<@m4, [{"x"}, {}]>>
}

// -----

// CHECK-LABEL: llvm.func @reduce_scatter_zero_cols
// CHECK-NOT: llvm.call @distRtReduceScatter
// CHECK: llvm.return
dist.mesh @m4 = <["x"=4]>
func.func @reduce_scatter_zero_cols(%a: tensor<3x0xf32, #dist.sharding<@m4, [{}, {}], partial = sum {"x"}>>)
    -> tensor<3x0xf32, #dist.sharding<@m4, [{"x"}, {}]>> {
  %0 = dist.reduce_scatter %a axes = ["x"] dim = 0 reduction = sum
      : tensor<3x0xf32, #dist.sharding<@m4, [{}, {}], partial = sum {"x"}>>
     -> tensor<3x0xf32, #dist.sharding<@m4, [{"x"}, {}]>>
  return %0 : tensor<3x0xf32, #dist.sharding<@m4, [{"x"}, {}]>>
}
