// Loops divided into groups (`d floordiv G`) or periods (`d mod M`) are split
// where each device's block keeps its groups whole, and the remark on the op
// says why they are not split elsewhere.
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
// RUN: dist-opt %s --dist-partition -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
dist.mesh @tp = <["tp"=4]>

// 16 query heads over 4 kv heads (G = 4), tp = 4: each device's 4 query
// heads are its kv head's group; K stays split by kv heads.
// CHECK-LABEL: func @gqa_groups
// CHECK-NOT: dist.reshard
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<4x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
// CHECK-NOT: dist.reshard
// CHECK: return
func.func @gqa_groups(%q: tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>,
                      %k: tensor<4x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %e = tensor.empty() : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(h, d) -> (h, d)>, affine_map<(h, d) -> (h floordiv 4, d)>, affine_map<(h, d) -> (h, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%q, %k : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<4x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
      outs(%e : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
  } -> tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %r : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}

// 8 query heads over 2 kv heads (G = 4) on tp = 4: blocks of 2 query heads
// would cut the groups, so the head loop is not split there and the remark
// says why; the heads are split by the dim it can split instead.
// CHECK-LABEL: func @gqa_cut_groups
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<8x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<2x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
// REMARK: partition-groups.mlir:[[# @LINE + 5]]:8: remark: dist-partition: loop d0 is not split into 4 parts: operand #1 indexes dim 0 by `d0 floordiv 4`, and blocks of 2 iterations are not whole groups of 4 matching that dim's blocks of 1
func.func @gqa_cut_groups(%q: tensor<8x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                          %k: tensor<2x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
    -> tensor<8x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>> {
  %e = tensor.empty() : tensor<8x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(h, d) -> (h, d)>, affine_map<(h, d) -> (h floordiv 4, d)>, affine_map<(h, d) -> (h, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%q, %k : tensor<8x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<2x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
      outs(%e : tensor<8x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
  } -> tensor<8x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  return %r : tensor<8x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
}

// A period (`h mod 4`, e.g. a table of 4 rows repeated along the heads):
// the table is read whole, and the head loop is split into blocks of whole
// periods (16 over 4: blocks of 4).
// CHECK-LABEL: func @periods
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<4x8xf32, #dist.sharding<@tp, [{}, {}]>>)
// CHECK-NOT: dist.reshard
// CHECK: return
func.func @periods(%q: tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>,
                   %t: tensor<4x8xf32, #dist.sharding<@tp, [{}, {}]>>)
    -> tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %e = tensor.empty() : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(h, d) -> (h, d)>, affine_map<(h, d) -> (h mod 4, d)>, affine_map<(h, d) -> (h, d)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%q, %t : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<4x8xf32, #dist.sharding<@tp, [{}, {}]>>)
      outs(%e : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
  } -> tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %r : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}
