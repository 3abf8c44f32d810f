// Windows (compound indexing expressions) never split their loops.
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
dist.mesh @m = <["x"=4]>

// A window (d0 + d1) may not be split: the input is gathered, then the
// result is computed replicated and sliced (free) into its layout.
// CHECK-LABEL: func @window
// CHECK: %[[G:.*]] = dist.reshard %{{.*}} -> tensor<10xf32, #dist.sharding<@m, [{}]>>
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[G]], %{{.*}} : {{.*}})
// CHECK: } -> tensor<8xf32, #dist.sharding<@m, [{}]>>
// CHECK: dist.reshard %[[W]] {{.*}} -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
func.func @window(%a: tensor<10xf32, #dist.sharding<@m, [{"x"}]>>,
                  %k: tensor<3xf32, #dist.sharding<@m, [{}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%a, %k : tensor<10xf32, #dist.sharding<@m, [{"x"}]>>, tensor<3xf32, #dist.sharding<@m, [{}]>>)
      outs(%f : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) {
    ^bb0(%in: f32, %kw: f32, %acc: f32):
      %p = arith.mulf %in, %kw : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
  } -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %w : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}
