// Contractions (matmul, batch_matmul, generic): split loops, partial sums.
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
// The Megatron MLP plans exactly one all-gather and one reduce-scatter (and
// the local replicate_to_partial of the second matmul's zero init).
// RUN: dist-opt %s --dist-partition --dist-lower-reshard | FileCheck %s --check-prefix=LOWERED
dist.mesh @tp = <["tp"=4]>
dist.mesh @m = <["x"=4]>

// Sequence-parallel in and out: x [tokens/tp, h], w1 column-split, w2
// row-split, result sequence-split.
// CHECK-LABEL: func @megatron_mlp
// CHECK-SAME: (%[[X:.*]]: tensor<16x64xf32, {{.*}}>, %[[W1:.*]]: tensor<64x256xf32, {{.*}}>, %[[W2:.*]]: tensor<256x64xf32, {{.*}}>)
// CHECK: %[[XG:.*]] = dist.reshard %[[X]] {{.*}} -> tensor<16x64xf32, #dist.sharding<@tp, [{}, {}]>>
// CHECK: %[[H:.*]] = linalg.matmul ins(%[[XG]], %[[W1]] : {{.*}}) outs({{.*}}) -> tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
// CHECK: %[[R:.*]] = linalg.generic {{.*}} ins(%[[H]], {{.*}})
// CHECK: arith.maximumf
// CHECK: } -> tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
// CHECK: %[[Y:.*]] = linalg.matmul ins(%[[R]], %[[W2]] : {{.*}}) outs({{.*}}) -> tensor<16x64xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>
// CHECK: %[[OUT:.*]] = dist.reshard %[[Y]] {{.*}} -> tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
// CHECK: return %[[OUT]]
// LOWERED-LABEL: func @megatron_mlp
// LOWERED-COUNT-1: dist.all_gather
// LOWERED-NOT: dist.all_gather
// LOWERED: dist.replicate_to_partial
// LOWERED-COUNT-1: dist.reduce_scatter
// LOWERED-NOT: dist.all_reduce
// LOWERED-LABEL: func @batched
func.func @megatron_mlp(%x: tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>,
                        %w1: tensor<64x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                        %w2: tensor<256x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x256xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<64x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
                     outs(%f1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %zeros = arith.constant dense<0.0> : tensor<16x256xf32>
  %r = arith.maximumf %h, %zeros : tensor<16x256xf32>
  %e2 = tensor.empty() : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) -> tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %y = linalg.matmul ins(%r, %w2 : tensor<16x256xf32>, tensor<256x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
                     outs(%f2 : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) -> tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %y : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}

// batch_matmul with the batch split: nothing moves.
// CHECK-LABEL: func @batched
// CHECK-NOT: dist.reshard
// CHECK: linalg.batch_matmul
// CHECK-SAME: -> tensor<4x8x8xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>
func.func @batched(%a: tensor<4x8x16xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>,
                   %b: tensor<4x16x8xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>)
    -> tensor<4x8x8xf32, #dist.sharding<@m, [{"x"}, {}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8x8xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8x8xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>) -> tensor<4x8x8xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>
  %c = linalg.batch_matmul ins(%a, %b : tensor<4x8x16xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>, tensor<4x16x8xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>)
                           outs(%f : tensor<4x8x8xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>) -> tensor<4x8x8xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>
  return %c : tensor<4x8x8xf32, #dist.sharding<@m, [{"x"}, {}, {}]>>
}

// A value read by three ops that all want it gathered is gathered once: the
// model prices one move (a hub), and the program has one.
// CHECK-LABEL: func @shared_gather
// CHECK-COUNT-1: dist.reshard %arg0
// CHECK-NOT: dist.reshard %arg0
// CHECK: return
func.func @shared_gather(%x: tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>,
                         %wq: tensor<64x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                         %wk: tensor<64x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                         %wv: tensor<64x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
    -> (tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
        tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>) -> tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  %q = linalg.matmul ins(%x, %wq : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<64x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
                     outs(%f : tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>) -> tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  %k = linalg.matmul ins(%x, %wk : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<64x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
                     outs(%f : tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>) -> tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  %v = linalg.matmul ins(%x, %wv : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<64x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
                     outs(%f : tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>) -> tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  return %q, %k, %v : tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<16x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
}
