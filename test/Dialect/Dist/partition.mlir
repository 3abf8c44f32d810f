// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
// The Megatron MLP plans exactly one all-gather and one reduce-scatter (and
// the local replicate_to_partial of the second matmul's zero init).
// RUN: dist-opt %s --dist-partition --dist-lower-reshard | FileCheck %s --check-prefix=LOWERED

dist.mesh @tp = <["tp"=4]>
dist.mesh @m = <["x"=4]>
dist.mesh @dp_tp = <["dp"=2, "tp"=2]>

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
// LOWERED-LABEL: func @sum_exp_partial
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
