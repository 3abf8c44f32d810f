// Partial operands flow through ops where that is exact (docs/partitioning.md).
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
dist.mesh @m = <["x"=4]>

// A partial sum flows through linear ops (negation, sum of two partials)
// and stops at a non-linear one, which needs the reduced value.
// CHECK-LABEL: func @partial_flow
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32, {{.*}}>, %[[B:.*]]: tensor<8xf32, {{.*}}>)
// CHECK: %[[N:.*]] = linalg.generic {{.*}} ins(%[[A]] : {{.*}})
// CHECK: arith.negf
// CHECK: } -> tensor<8xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[N]], %[[B]] : {{.*}})
// CHECK: arith.addf
// CHECK: } -> tensor<8xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
// CHECK: %[[RED:.*]] = dist.reshard %[[S]] {{.*}} -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
// CHECK: linalg.generic {{.*}} ins(%[[RED]] : {{.*}})
// CHECK: math.exp
func.func @partial_flow(%a: tensor<8xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>,
                        %b: tensor<8xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %n = arith.negf %a : tensor<8xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  %s = arith.addf %n, %b : tensor<8xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  %e = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %x = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%s : tensor<8xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>)
      outs(%e : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) {
    ^bb0(%in: f32, %out: f32):
      %r = math.exp %in : f32
      linalg.yield %r : f32
  } -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %x : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

// A max-partial value flows through exp (monotone) and stays partial.
// CHECK-LABEL: func @max_through_exp
// CHECK-NOT: dist.reshard
// CHECK: math.exp
// CHECK: } -> tensor<8xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>
func.func @max_through_exp(%a: tensor<8xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>)
    -> tensor<8xf32, #dist.sharding<@m, [{}], partial = max {"x"}>> {
  %e = math.exp %a : tensor<8xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>
  return %e : tensor<8xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>
}
