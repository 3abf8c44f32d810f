// Reshape views (semantics §2a) in dist-partition: a reshape takes layouts under
// which it moves nothing, and a loop may be split per segment where an
// operand arrives interleaved (a fused QKV weight).
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
// RUN: dist-opt %s --dist-partition --dist-lower-reshard | FileCheck %s --check-prefix=LOWERED
// RUN: %bounded 30 2048 dist-opt %s --dist-partition | FileCheck %s --check-prefix=BOUNDED
dist.mesh @tp = <["tp"=4]>

// The fused projection computes on the interleaved rows where they are, and
// [Q_r; K_r; V_r] is the view of the heads split per projection.
// CHECK-LABEL: func @fused_qkv_heads
// CHECK-NOT: dist.reshard
// CHECK: %[[Y:.*]] = linalg.matmul {{.*}} -> tensor<96x5xf32, #dist.sharding<@tp, [{"tp"} segments [32, 32, 32], {}]>>
// CHECK: %[[V:.*]] = tensor.expand_shape %[[Y]] {{\[}}[0, 1], [2]] {{.*}} into tensor<3x32x5xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
// CHECK-NOT: dist.reshard
// CHECK: return
func.func @fused_qkv_heads(%w: tensor<96x8xf32, #dist.sharding<@tp, [{"tp"} segments [32, 32, 32], {}]>>,
                           %x: tensor<8x5xf32, #dist.sharding<@tp, [{}, {}]>>)
    -> tensor<3x32x5xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x5xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<96x5xf32>) -> tensor<96x5xf32>
  %y = linalg.matmul ins(%w, %x : tensor<96x8xf32, #dist.sharding<@tp, [{"tp"} segments [32, 32, 32], {}]>>, tensor<8x5xf32, #dist.sharding<@tp, [{}, {}]>>)
                     outs(%f : tensor<96x5xf32>) -> tensor<96x5xf32>
  %v = tensor.expand_shape %y [[0, 1], [2]] output_shape [3, 32, 5] : tensor<96x5xf32> into tensor<3x32x5xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
  return %v : tensor<3x32x5xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
}

// Heads split over tp: merging heads and head dims keeps every device's
// bytes (a contiguous split of h * d).
// CHECK-LABEL: func @merge_heads
// CHECK-NOT: dist.reshard
// CHECK: tensor.collapse_shape %{{.*}} {{\[}}[0], [1, 2]] : tensor<6x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> into tensor<6x32xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
func.func @merge_heads(%a: tensor<6x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>)
    -> tensor<6x32xf32, #dist.sharding<@tp, [{}, {"tp"}]>> {
  %b = tensor.collapse_shape %a [[0], [1, 2]] : tensor<6x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> into tensor<6x32xf32>
  %e = tensor.empty() : tensor<6x32xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  %c = linalg.copy ins(%b : tensor<6x32xf32>) outs(%e : tensor<6x32xf32, #dist.sharding<@tp, [{}, {"tp"}]>>) -> tensor<6x32xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  return %c : tensor<6x32xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
}

// 12 rows in 4 contiguous runs are not blocks of [3, 4]: the reshape is not
// a view of its operand, so the operand moves first (here, one exchange into
// the interleaved rows whose view the result is).
// CHECK-LABEL: func @not_a_view
// CHECK: %[[M:.*]] = dist.reshard %{{.*}} -> tensor<12x8xf32, #dist.sharding<@tp, [{"tp"} segments [4, 4, 4], {}]>>
// CHECK: tensor.expand_shape %[[M]] {{.*}} into tensor<3x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
// LOWERED-LABEL: func @not_a_view
// LOWERED: dist.redistribute
// LOWERED: tensor.expand_shape
func.func @not_a_view(%a: tensor<12x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<3x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> {
  %b = tensor.expand_shape %a [[0, 1], [2]] output_shape [3, 4, 8] : tensor<12x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>> into tensor<3x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
  return %b : tensor<3x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
}

// Partial sums pass through a reshape as they are: with a partial result
// declared, nothing is reduced.
// CHECK-LABEL: func @partial_through_view
// CHECK: %[[P:.*]] = linalg.matmul {{.*}} partial = sum {"tp"}>>
// CHECK-NOT: dist.reshard
// CHECK: tensor.expand_shape %[[P]] {{.*}} into tensor<8x3x4xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>>
// CHECK-NOT: dist.reshard
// CHECK: return
func.func @partial_through_view(%x: tensor<8x16xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                                %w: tensor<16x12xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<8x3x4xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x12xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x12xf32>) -> tensor<8x12xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x16xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<16x12xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
                     outs(%f : tensor<8x12xf32>) -> tensor<8x12xf32>
  %v = tensor.expand_shape %y [[0], [1, 2]] output_shape [8, 3, 4] : tensor<8x12xf32> into tensor<8x3x4xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>>
  return %v : tensor<8x3x4xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>>
}

// Elementwise compute on an interleaved tensor runs on its blocks in place.
// CHECK-LABEL: func @segmented_elementwise
// CHECK-NOT: dist.reshard
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [16, 4, 4], {}]>>)
// CHECK: } -> tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [16, 4, 4], {}]>>
// CHECK-NOT: dist.reshard
// CHECK: return
func.func @segmented_elementwise(%a: tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [16, 4, 4], {}]>>)
    -> tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [16, 4, 4], {}]>> {
  %0 = arith.negf %a : tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [16, 4, 4], {}]>>
  return %0 : tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [16, 4, 4], {}]>>
}

// A collapse of a replicated 7x8x7 tensor on a 2x2x2 mesh (found by the
// program fuzzer: 40 s, as the partitioner priced moves into views of 7
// segments for every consumer layout) partitions at once: views with many
// segments are proposed only when an operand or a type already has them.
// BOUNDED-LABEL: func @collapse_three_axes
// BOUNDED: tensor.collapse_shape
dist.mesh @m222 = <["x"=2, "y"=2, "z"=2]>
func.func @collapse_three_axes(%a: tensor<7x8x7xf32, #dist.sharding<@m222, [{}, {}, {}]>>)
    -> tensor<56x7xf32, #dist.sharding<@m222, [{}, {}]>> {
  %c = tensor.collapse_shape %a [[0, 1], [2]] : tensor<7x8x7xf32, #dist.sharding<@m222, [{}, {}, {}]>> into tensor<56x7xf32>
  %e = tensor.empty() : tensor<56x7xf32, #dist.sharding<@m222, [{}, {}]>>
  %r = linalg.copy ins(%c : tensor<56x7xf32>) outs(%e : tensor<56x7xf32, #dist.sharding<@m222, [{}, {}]>>) -> tensor<56x7xf32, #dist.sharding<@m222, [{}, {}]>>
  return %r : tensor<56x7xf32, #dist.sharding<@m222, [{}, {}]>>
}
