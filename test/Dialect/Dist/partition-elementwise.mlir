// Elementwise ops, constants and data movement (transpose, broadcast, map).
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
dist.mesh @m = <["x"=4]>
dist.mesh @sq = <["x"=2, "y"=2]>
dist.mesh @dp_tp = <["dp"=2, "tp"=2]>

// A free intermediate whose best layout needs no communication at all:
// data parallel elementwise chain on a 2-D mesh.
// CHECK-LABEL: func @free_chain
// CHECK-NOT: dist.reshard
// CHECK: return
func.func @free_chain(%a: tensor<8x8xf64, #dist.sharding<@dp_tp, [{"dp"}, {"tp"}]>>)
    -> tensor<8x8xf64, #dist.sharding<@dp_tp, [{"dp"}, {"tp"}]>> {
  %t = math.tanh %a : tensor<8x8xf64, #dist.sharding<@dp_tp, [{"dp"}, {"tp"}]>>
  %two = arith.constant dense<2.0> : tensor<8x8xf64>
  %e = tensor.empty() : tensor<8x8xf64>
  %m = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%t, %two : tensor<8x8xf64, #dist.sharding<@dp_tp, [{"dp"}, {"tp"}]>>, tensor<8x8xf64>)
      outs(%e : tensor<8x8xf64>) {
    ^bb0(%in: f64, %c: f64, %out: f64):
      %r = arith.mulf %in, %c : f64
      linalg.yield %r : f64
  } -> tensor<8x8xf64>
  %e2 = tensor.empty() : tensor<8x8xf64, #dist.sharding<@dp_tp, [{"dp"}, {"tp"}]>>
  %out = linalg.map { arith.addf } ins(%m, %a : tensor<8x8xf64>, tensor<8x8xf64, #dist.sharding<@dp_tp, [{"dp"}, {"tp"}]>>)
                     outs(%e2 : tensor<8x8xf64, #dist.sharding<@dp_tp, [{"dp"}, {"tp"}]>>)
  return %out : tensor<8x8xf64, #dist.sharding<@dp_tp, [{"dp"}, {"tp"}]>>
}

// Constants nothing uses are dropped (and never crash the pass).
// CHECK-LABEL: func @dead_fill
// CHECK-NOT: linalg.fill
// CHECK: dist.reshard
func.func @dead_fill(%a: tensor<4xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<4xf32, #dist.sharding<@m, [{}]>> {
  %zf = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4xf32>
  %dead = linalg.fill ins(%zf : f32) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
  %b = dist.reshard %a : tensor<4xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<4xf32, #dist.sharding<@m, [{}]>>
  return %b : tensor<4xf32, #dist.sharding<@m, [{}]>>
}

// transpose and broadcast carry the split to the permuted / kept dims.
// CHECK-LABEL: func @transpose_broadcast
// CHECK-NOT: dist.reshard
// CHECK: linalg.transpose {{.*}} outs(%{{.*}} : tensor<12x8xf32, #dist.sharding<@sq, [{"y"}, {"x"}]>>)
// CHECK: linalg.broadcast
func.func @transpose_broadcast(%a: tensor<8x12xf32, #dist.sharding<@sq, [{"x"}, {"y"}]>>)
    -> tensor<12x8x6xf32, #dist.sharding<@sq, [{"y"}, {"x"}, {}]>> {
  %e = tensor.empty() : tensor<12x8xf32>
  %t = linalg.transpose ins(%a : tensor<8x12xf32, #dist.sharding<@sq, [{"x"}, {"y"}]>>) outs(%e : tensor<12x8xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<12x8x6xf32, #dist.sharding<@sq, [{"y"}, {"x"}, {}]>>
  %b = linalg.broadcast ins(%t : tensor<12x8xf32>) outs(%e2 : tensor<12x8x6xf32, #dist.sharding<@sq, [{"y"}, {"x"}, {}]>>) dimensions = [2]
  return %b : tensor<12x8x6xf32, #dist.sharding<@sq, [{"y"}, {"x"}, {}]>>
}

// A constant a dist.reshard reads keeps the layout it was written with (the
// reshard needs an encoded operand); constants computed for compute ops are
// free. (Found by the program fuzzer: it was refused.)
// CHECK-LABEL: func @reshard_of_constant
// CHECK: %[[F:.*]] = linalg.fill {{.*}} -> tensor<15xf32, #dist.sharding<@dp_tp, [{"tp"}]>>
// CHECK: dist.reshard %[[F]] : tensor<15xf32, #dist.sharding<@dp_tp, [{"tp"}]>> -> tensor<15xf32, #dist.sharding<@dp_tp, [{"dp", "tp"}]>>
func.func @reshard_of_constant() -> tensor<15xf32, #dist.sharding<@dp_tp, [{"dp", "tp"}]>> {
  %e = tensor.empty() : tensor<15xf32, #dist.sharding<@dp_tp, [{"tp"}]>>
  %c = arith.constant 1.5 : f32
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<15xf32, #dist.sharding<@dp_tp, [{"tp"}]>>) -> tensor<15xf32, #dist.sharding<@dp_tp, [{"tp"}]>>
  %r = dist.reshard %f : tensor<15xf32, #dist.sharding<@dp_tp, [{"tp"}]>> -> tensor<15xf32, #dist.sharding<@dp_tp, [{"dp", "tp"}]>>
  return %r : tensor<15xf32, #dist.sharding<@dp_tp, [{"dp", "tp"}]>>
}
