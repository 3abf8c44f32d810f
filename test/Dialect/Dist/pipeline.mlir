// RUN: dist-opt %s -split-input-file --dist-pipeline=microbatches=2 | FileCheck %s
// RUN: dist-opt %s -split-input-file --dist-pipeline=microbatches=1 | FileCheck %s --check-prefix=ONE
// RUN: not dist-opt %s -split-input-file --dist-pipeline=microbatches=0 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: dist-pipeline: microbatches must be at least 1, got 0
// RUN: dist-opt %s -split-input-file --dist-pipeline=microbatches=2 --dist-partition -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=MODEL
// MODEL: remark: dist-partition: @two_stages: 4 stages: @two_stages_stage0 on @s0 (8 ops), @two_stages_stage1 on @s1 (3 ops), @two_stages_stage2 on @s0 (8 ops), @two_stages_stage3 on @s1 (4 ops)
// MODEL: remark: dist-partition: @two_stages: pipeline of 2 stages x 2 microbatches (gpipe, blocking hand-offs): stages @s0 {{[0-9.e+-]+}} s, @s1 {{[0-9.e+-]+}} s; hand-offs {{[0-9.e+-]+}} s; step {{[0-9.e+-]+}} s, bubble {{[0-9.]+}}%
// A result on the first stage's mesh is concatenated after the last
// microbatch: a stage past the pipe, modelled after it has drained.
// MODEL: remark: dist-partition: @direct: 6 stages:
// MODEL: remark: dist-partition: @direct: pipeline of 2 stages x 2 microbatches (gpipe, blocking hand-offs): stages @a {{[0-9.e+-]+}} s, @b {{[0-9.e+-]+}} s; hand-offs {{[0-9.e+-]+}} s; then {{[0-9.e+-]+}} s; step {{[0-9.e+-]+}} s, bubble {{[0-9.]+}}%
// Semantics §3c: the batch dims followed through the ops, the body cloned
// per microbatch with the batch cut to the part, the results concatenated.

// CHECK-LABEL: func.func @two_stages(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8x16xf32, #dist.sharding<@s0, [{}, {}]>> {dist.batch_dim = 0 : i64}, %[[W0:[a-z0-9]+]]: {{.*}}, %[[W1:[a-z0-9]+]]: {{.*}})
// CHECK: %[[X0:.*]] = tensor.extract_slice %[[X]][0, 0] [4, 16] [1, 1] : tensor<8x16xf32, #dist.sharding<@s0, [{}, {}]>> to tensor<4x16xf32, #dist.sharding<@s0, [{}, {}]>>
// CHECK: %[[E0:.*]] = tensor.empty() : tensor<4x32xf32>
// CHECK: %[[F0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E0]] : tensor<4x32xf32>)
// CHECK: %[[A0:.*]] = linalg.matmul ins(%[[X0]], %[[W0]] : tensor<4x16xf32, #dist.sharding<@s0, [{}, {}]>>, tensor<16x32xf32, {{.*}}>) outs(%[[F0]] : tensor<4x32xf32>) -> tensor<4x32xf32>
// CHECK: %[[Z0:.*]] = arith.constant dense<0.000000e+00> : tensor<4x32xf32>
// CHECK: %[[R0:.*]] = arith.maximumf %[[A0]], %[[Z0]] : tensor<4x32xf32>
// CHECK: %[[H0:.*]] = linalg.copy ins(%[[R0]] : tensor<4x32xf32>) outs(%{{.*}} : tensor<4x32xf32, #dist.sharding<@s0, [{}, {}]>>)
// CHECK: %[[S0:.*]] = dist.reshard %[[H0]] : tensor<4x32xf32, #dist.sharding<@s0, [{}, {}]>> -> tensor<4x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
// CHECK: %[[Y0:.*]] = linalg.matmul ins(%[[S0]], %[[W1]] : {{.*}}) outs(%{{.*}} : tensor<4x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>)
// CHECK: %[[X1:.*]] = tensor.extract_slice %[[X]][4, 0] [4, 16] [1, 1]
// CHECK: linalg.matmul ins(%[[X1]], %[[W0]]
// CHECK: %[[Y1:.*]] = linalg.matmul
// CHECK: %[[Y:.*]] = tensor.concat dim(0) %[[Y0]], %[[Y1]] : (tensor<4x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>, tensor<4x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>) -> tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
// CHECK: return %[[Y]]
// ONE-LABEL: func.func @two_stages(
// ONE-NOT: tensor.extract_slice
// ONE-NOT: tensor.concat
dist.mesh @s0 = <["tp"=4], devices = [0, 1, 2, 3]>
dist.mesh @s1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>
func.func @two_stages(%x: tensor<8x16xf32, #dist.sharding<@s0, [{}, {}]>> {dist.batch_dim = 0 : i64},
                      %w0: tensor<16x32xf32, #dist.sharding<@s0, [{}, {"tp"}]>>,
                      %w1: tensor<32x8xf32, #dist.sharding<@s1, [{"tp"}, {}]>>)
    -> tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x32xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<8x16xf32, #dist.sharding<@s0, [{}, {}]>>, tensor<16x32xf32, #dist.sharding<@s0, [{}, {"tp"}]>>)
                     outs(%f0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %z = arith.constant dense<0.0> : tensor<8x32xf32>
  %r = arith.maximumf %a, %z : tensor<8x32xf32>
  %eh = tensor.empty() : tensor<8x32xf32, #dist.sharding<@s0, [{}, {}]>>
  %h = linalg.copy ins(%r : tensor<8x32xf32>) outs(%eh : tensor<8x32xf32, #dist.sharding<@s0, [{}, {}]>>) -> tensor<8x32xf32, #dist.sharding<@s0, [{}, {}]>>
  %s = dist.reshard %h : tensor<8x32xf32, #dist.sharding<@s0, [{}, {}]>> -> tensor<8x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %e1 = tensor.empty() : tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>) -> tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %y = linalg.matmul ins(%s, %w1 : tensor<8x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>, tensor<32x8xf32, #dist.sharding<@s1, [{"tp"}, {}]>>)
                     outs(%f1 : tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>) -> tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  return %y : tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
}

// -----

// A function on one mesh is not a pipeline: left as it is.
// CHECK-LABEL: func.func @one_mesh(
// CHECK-NOT: tensor.extract_slice
// CHECK: return
dist.mesh @m = <["x"=2]>
func.func @one_mesh(%x: tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {dist.batch_dim = 0 : i64}) -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = math.exp %x : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %e : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

// A weight-only result (no batch dim) is the first microbatch's.
// CHECK-LABEL: func.func @weight_result(
// CHECK: %[[W0:.*]] = math.exp %{{.*}} : tensor<4xf32, #dist.sharding<@b, [{}]>>
// CHECK: math.exp
// CHECK: tensor.concat dim(0)
// CHECK: return %{{.*}}, %[[W0]]
dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
func.func @weight_result(%x: tensor<8xf32, #dist.sharding<@a, [{"x"}]>> {dist.batch_dim = 0 : i64},
                         %w: tensor<4xf32, #dist.sharding<@b, [{}]>>)
    -> (tensor<8xf32, #dist.sharding<@b, [{"x"}]>>, tensor<4xf32, #dist.sharding<@b, [{}]>>) {
  %n = arith.negf %x : tensor<8xf32, #dist.sharding<@a, [{"x"}]>>
  %to_b = dist.reshard %n : tensor<8xf32, #dist.sharding<@a, [{"x"}]>> -> tensor<8xf32, #dist.sharding<@b, [{"x"}]>>
  %we = math.exp %w : tensor<4xf32, #dist.sharding<@b, [{}]>>
  return %to_b, %we : tensor<8xf32, #dist.sharding<@b, [{"x"}]>>, tensor<4xf32, #dist.sharding<@b, [{}]>>
}
// -----

// CHECK-LABEL: func.func @direct(
// CHECK: tensor.concat dim(0)
// CHECK: tensor.concat dim(0)
dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=3], devices = [2, 3, 4]>
func.func @direct(%x: tensor<8x4xf32, #dist.sharding<@a, [{"x"}, {}]>> {dist.batch_dim = 0 : i64}, %w: tensor<4xf32, #dist.sharding<@b, [{}]>>)
    -> (tensor<8x4xf32, #dist.sharding<@a, [{"x"}, {}]>>, tensor<8x4xf32, #dist.sharding<@b, [{"x"}, {}]>>, tensor<8x4xf32, #dist.sharding<@b, [{"x"}, {}]>>) {
  %s = dist.reshard %x : tensor<8x4xf32, #dist.sharding<@a, [{"x"}, {}]>> -> tensor<8x4xf32, #dist.sharding<@b, [{"x"}, {}]>>
  %e = tensor.empty() : tensor<8x4xf32, #dist.sharding<@b, [{"x"}, {}]>>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
      ins(%s, %w : tensor<8x4xf32, #dist.sharding<@b, [{"x"}, {}]>>, tensor<4xf32, #dist.sharding<@b, [{}]>>) outs(%e : tensor<8x4xf32, #dist.sharding<@b, [{"x"}, {}]>>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %m = arith.mulf %p, %q : f32
    linalg.yield %m : f32
  } -> tensor<8x4xf32, #dist.sharding<@b, [{"x"}, {}]>>
  return %x, %y, %y : tensor<8x4xf32, #dist.sharding<@a, [{"x"}, {}]>>, tensor<8x4xf32, #dist.sharding<@b, [{"x"}, {}]>>, tensor<8x4xf32, #dist.sharding<@b, [{"x"}, {}]>>
}
