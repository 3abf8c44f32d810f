// RUN: dist-opt %s --dist-partition | FileCheck %s
// A mesh of six axes: trying every assignment of axes to loops would price
// millions of reshards; the partitioner tries the ones seeded by the
// operands' layouts (docs/partitioning.md) and still finds the layouts that
// need no communication at all.

// CHECK-LABEL: func @mm
// CHECK-NOT: dist.reshard
// CHECK: linalg.matmul
// CHECK-SAME: -> tensor<64x64xf32, #dist.sharding<@m, [{"a"}, {"b"}]>>
// CHECK-NOT: dist.reshard
// CHECK: return
dist.mesh @m = <["a"=2, "b"=2, "c"=2, "d"=2, "e"=2, "f"=2]>
func.func @mm(%x: tensor<64x64xf32, #dist.sharding<@m, [{"a"}, {}]>>, %w: tensor<64x64xf32, #dist.sharding<@m, [{}, {"b"}]>>)
    -> tensor<64x64xf32, #dist.sharding<@m, [{"a"}, {"b"}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64x64xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %h = linalg.matmul ins(%x, %w : tensor<64x64xf32, #dist.sharding<@m, [{"a"}, {}]>>, tensor<64x64xf32, #dist.sharding<@m, [{}, {"b"}]>>) outs(%f : tensor<64x64xf32>) -> tensor<64x64xf32>
  %t = math.tanh %h : tensor<64x64xf32>
  %e2 = tensor.empty() : tensor<64x64xf32, #dist.sharding<@m, [{"a"}, {"b"}]>>
  %o = linalg.map { math.exp } ins(%t : tensor<64x64xf32>) outs(%e2 : tensor<64x64xf32, #dist.sharding<@m, [{"a"}, {"b"}]>>)
  return %o : tensor<64x64xf32, #dist.sharding<@m, [{"a"}, {"b"}]>>
}
