// Reductions: a split reduction loop yields a partial result of the
// combiner's kind; an unknown combiner keeps the loop whole.
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
dist.mesh @m = <["x"=4]>

// A reduction over the split dim yields the partial result with the
// combiner's kind: nothing moves but the init, made partial locally.
// CHECK-LABEL: func @sum_exp_partial
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>)
// CHECK: math.exp
// CHECK: %[[INIT:.*]] = dist.reshard %{{.*}} : tensor<3xf32, #dist.sharding<@m, [{}]>> -> tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[E]] : {{.*}}) outs(%[[INIT]] : {{.*}})
// CHECK: return %[[S]]
func.func @sum_exp_partial(%a: tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>> {
  %e = math.exp %a : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  %fill = linalg.fill ins(%zero : f32) outs(%init : tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) -> tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>)
      outs(%fill : tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %acc, %in : f32
      linalg.yield %r : f32
  } -> tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  return %s : tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
}

// An accumulator used twice has no known combiner: the reduction loop is
// not split, so the input is gathered first.
// CHECK-LABEL: func @unknown_combiner
// CHECK: %[[G:.*]] = dist.reshard %arg0 {{.*}} -> tensor<4x8xf32, #dist.sharding<@m, [{}, {}]>>
// CHECK: linalg.generic {{.*}} ins(%[[G]] :
func.func @unknown_combiner(%a: tensor<4x8xf32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> tensor<4xf32, #dist.sharding<@m, [{}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@m, [{}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32, #dist.sharding<@m, [{}]>>) -> tensor<4xf32, #dist.sharding<@m, [{}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x8xf32, #dist.sharding<@m, [{}, {"x"}]>>) outs(%f : tensor<4xf32, #dist.sharding<@m, [{}]>>) {
    ^bb0(%in: f32, %acc: f32):
      %s = arith.mulf %acc, %acc : f32
      %t = arith.addf %s, %in : f32
      linalg.yield %t : f32
  } -> tensor<4xf32, #dist.sharding<@m, [{}]>>
  return %r : tensor<4xf32, #dist.sharding<@m, [{}]>>
}
