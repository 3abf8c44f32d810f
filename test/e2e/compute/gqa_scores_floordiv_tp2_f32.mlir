// Grouped-query attention scores with the kv head written as `h floordiv 4`
// (8 query heads share 2 kv heads): the head loop is split over tp=2 with
// each device's query heads a whole group of its kv head, so Q, K and the
// scores stay split by heads and nothing moves.
// REQUIRES: mpi, mlir, numpy
// RUN: dist-opt %s --dist-partition -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 --input random:7 %s --dump %t
// RUN: %check_shards %s %t --input random:7
// CHECK: 0 reshards inserted, modelled cost 0.000e+00 s
// EXPECT result0 = np.einsum('hsd,htd->hst', arg0, np.repeat(arg1, 4, axis=0))
dist.mesh @tp = <["tp"=2]>
func.func @scores(%q: tensor<8x4x16xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>,
                  %k: tensor<2x4x16xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>)
    -> tensor<8x4x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>) -> tensor<8x4x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>
  %s = linalg.generic {indexing_maps = [affine_map<(h, s, t, d) -> (h, s, d)>, affine_map<(h, s, t, d) -> (h floordiv 4, t, d)>, affine_map<(h, s, t, d) -> (h, s, t)>],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<8x4x16xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>, tensor<2x4x16xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>)
      outs(%f : tensor<8x4x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %m : f32
    linalg.yield %r : f32
  } -> tensor<8x4x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>
  return %s : tensor<8x4x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>
}
