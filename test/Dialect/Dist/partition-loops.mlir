// scf.for over layers: one layout per carried tensor, moves of values the
// loop does not change hoisted before it, and every move inside the body
// counted once per iteration (static trip counts).
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
// RUN: dist-opt %s --dist-partition -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=COST
dist.mesh @tp = <["tp"=4]>

// A Megatron MLP per layer over 16 stacked layers of realistic weights (w1
// split by columns, w2 by rows): each iteration reduces its partial product
// once (an all-reduce of 8x4096 f32, 6.053e-05 s under the default model;
// gathering the weights instead would cost far more), and the carried
// activation stays replicated. 16 iterations: 9.685e-04 s.
// CHECK-LABEL: func @mlp_layers
// CHECK-NOT: dist.reshard
// CHECK: %[[R:.*]] = scf.for %{{.*}} iter_args(%[[H:.*]] = %{{.*}}) -> (tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>)
// CHECK: %[[W1:.*]] = tensor.extract_slice {{.*}} to tensor<4096x11008xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
// CHECK: linalg.matmul ins(%[[H]], %[[W1]] :
// CHECK: %[[Y:.*]] = linalg.matmul {{.*}} -> tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>
// CHECK: %[[SUM:.*]] = dist.reshard %[[Y]] {{.*}} -> tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>
// CHECK: scf.yield %[[SUM]]
// The module's total: 16 x 6.053e-05 s here, and one all-gather (3.000e-05
// s) in @hoisted.
// COST: dist-partition: 9 ops partitioned (chooser optimal), 3 reshards inserted, modelled cost 9.985e-04 s
func.func @mlp_layers(%x: tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>,
                      %w1: tensor<16x4096x11008xf32, #dist.sharding<@tp, [{}, {}, {"tp"}]>>,
                      %w2: tensor<16x11008x4096xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>)
    -> tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %l = %c0 to %c16 step %c1 iter_args(%h = %x) -> (tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>) {
    %a = tensor.extract_slice %w1[%l, 0, 0] [1, 4096, 11008] [1, 1, 1] : tensor<16x4096x11008xf32, #dist.sharding<@tp, [{}, {}, {"tp"}]>> to tensor<4096x11008xf32>
    %b = tensor.extract_slice %w2[%l, 0, 0] [1, 11008, 4096] [1, 1, 1] : tensor<16x11008x4096xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> to tensor<11008x4096xf32>
    %e1 = tensor.empty() : tensor<8x11008xf32>
    %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x11008xf32>) -> tensor<8x11008xf32>
    %u = linalg.matmul ins(%h, %a : tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>, tensor<4096x11008xf32>) outs(%f1 : tensor<8x11008xf32>) -> tensor<8x11008xf32>
    %zeros = arith.constant dense<0.0> : tensor<8x11008xf32>
    %g = arith.maximumf %u, %zeros : tensor<8x11008xf32>
    %e2 = tensor.empty() : tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>) -> tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>
    %y = linalg.matmul ins(%g, %b : tensor<8x11008xf32>, tensor<11008x4096xf32>) outs(%f2 : tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>) -> tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>
    scf.yield %y : tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>
  }
  return %r : tensor<8x4096xf32, #dist.sharding<@tp, [{}, {}]>>
}

// A tensor the loop does not change is moved once, before the loop.
// CHECK-LABEL: func @hoisted
// CHECK: %[[G:.*]] = dist.reshard %{{.*}} -> tensor<16x16xf32, #dist.sharding<@tp, [{}, {}]>>
// CHECK: scf.for
// CHECK-NOT: dist.reshard
// CHECK: linalg.matmul ins(%{{.*}}, %[[G]] :
// CHECK: scf.yield
func.func @hoisted(%x: tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>,
                   %w: tensor<16x16xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %l = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>) {
    %e = tensor.empty() : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>) -> tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>
    %y = linalg.matmul ins(%h, %w : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>, tensor<16x16xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) outs(%f : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>) -> tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>
    scf.yield %y : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>
  }
  return %r : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>
}

// A free carried tensor gets one layout for the whole loop: here the one
// its split init and its elementwise body keep, so nothing moves.
// CHECK-LABEL: func @carried_layout
// CHECK-NOT: dist.reshard
// CHECK: scf.for {{.*}} -> (tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
// CHECK: math.exp
// CHECK-NOT: dist.reshard
// CHECK: return
func.func @carried_layout(%x: tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, %n: index)
    -> tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<16x8xf32>
  %init = linalg.copy ins(%x : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) outs(%e : tensor<16x8xf32>) -> tensor<16x8xf32>
  %r = scf.for %l = %c0 to %n step %c1 iter_args(%h = %init) -> (tensor<16x8xf32>) {
    %y = math.exp %h : tensor<16x8xf32>
    scf.yield %y : tensor<16x8xf32>
  }
  %e2 = tensor.empty() : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %out = linalg.copy ins(%r : tensor<16x8xf32>) outs(%e2 : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) -> tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %out : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}
