// Non-splat tensor constants, as exporters write them (a JAX array closed
// over by the function, torch-mlir's dense_resource blobs): every device holds
// the whole value, so a constant is replicated and each consumer takes the
// part its layout needs locally. A weight matrix read by a product whose rows
// are split, and a bias added to a row-split tensor (a local slice of the
// replicated constant, no communication).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:7 %s --dump %t
// RUN: %check_shards %s %t --input random:7
// RUN: dist-opt %s --dist-partition | FileCheck %s
// CHECK: arith.constant dense<{{.*}}> : tensor<3x2xf32, #dist.sharding<@x, [{}, {}]>>
// CHECK: arith.constant dense_resource<bias> : tensor<4xf32, #dist.sharding<@x, [{}]>>
// CHECK-NOT: dist.reshard {{.*}}all_gather
// EXPECT result0 = arg0 @ np.array([[1, -2], [0.5, 3], [-1, 0.25]], dtype=np.float32)
// EXPECT result1 = arg1 + np.array([0.5, -1, 2, 0.25], dtype=np.float32)[:, None]
dist.mesh @x = <["x"=4]>
func.func @constants(%a: tensor<8x3xf32, #dist.sharding<@x, [{"x"}, {}]>>,
                     %b: tensor<4x5xf32, #dist.sharding<@x, [{"x"}, {}]>>)
    -> (tensor<8x2xf32, #dist.sharding<@x, [{"x"}, {}]>>,
        tensor<4x5xf32, #dist.sharding<@x, [{"x"}, {}]>>) {
  %w = arith.constant dense<[[1.0, -2.0], [0.5, 3.0], [-1.0, 0.25]]> : tensor<3x2xf32>
  %bias = arith.constant dense_resource<bias> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x2xf32, #dist.sharding<@x, [{"x"}, {}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x2xf32, #dist.sharding<@x, [{"x"}, {}]>>) -> tensor<8x2xf32, #dist.sharding<@x, [{"x"}, {}]>>
  %p = linalg.matmul ins(%a, %w : tensor<8x3xf32, #dist.sharding<@x, [{"x"}, {}]>>, tensor<3x2xf32>)
                     outs(%f : tensor<8x2xf32, #dist.sharding<@x, [{"x"}, {}]>>) -> tensor<8x2xf32, #dist.sharding<@x, [{"x"}, {}]>>
  %e2 = tensor.empty() : tensor<4x5xf32, #dist.sharding<@x, [{"x"}, {}]>>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%b, %bias : tensor<4x5xf32, #dist.sharding<@x, [{"x"}, {}]>>, tensor<4xf32>)
      outs(%e2 : tensor<4x5xf32, #dist.sharding<@x, [{"x"}, {}]>>) {
  ^bb0(%v: f32, %c: f32, %o: f32):
    %r = arith.addf %v, %c : f32
    linalg.yield %r : f32
  } -> tensor<4x5xf32, #dist.sharding<@x, [{"x"}, {}]>>
  return %p, %s : tensor<8x2xf32, #dist.sharding<@x, [{"x"}, {}]>>, tensor<4x5xf32, #dist.sharding<@x, [{"x"}, {}]>>
}
{-#
  dialect_resources: {
    builtin: {
      bias: "0x040000000000003F000080BF000000400000803E"
    }
  }
#-}
