// RUN: dist-opt %s -split-input-file --dist-partition | FileCheck %s
// RUN: dist-opt %s -split-input-file --dist-partition -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// Semantics §3c, stage-local compute: a function whose compute spans several
// meshes becomes calls of stage functions, one per run of ops on one mesh,
// each partitioned on its mesh; the hand-offs stay between the calls.

// Two Megatron MLP halves: tp=4 on ranks 0-3, then dp=2 x tp=2 on 4-7.
// REMARK: remark: dist-partition: @two_stages: 2 stages: @two_stages_stage0 on @s0 (6 ops), @two_stages_stage1 on @s1 (3 ops)
// The modelled pipeline: each stage's partitioned time, the planned hand-off,
// the step in program order (GPipe, blocking hand-offs).
// REMARK: remark: dist-partition: @two_stages: pipeline of 2 stages x 1 microbatches (gpipe, blocking hand-offs): stages @s0 3.000e-05 s, @s1 1.000e-05 s; hand-offs 1.000e-05 s; step 5.001e-05 s, bubble 60.0%
// CHECK-LABEL: func.func @two_stages(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8x16xf32, #dist.sharding<@s0, [{}, {}]>>, %[[W0:[a-z0-9]+]]: {{.*}}, %[[W1:[a-z0-9]+]]: {{.*}})
// CHECK-NEXT: %[[H:.*]] = call @two_stages_stage0(%[[X]], %[[W0]])
// CHECK-NEXT: %[[S:.*]] = dist.reshard %[[H]] : tensor<8x32xf32, #dist.sharding<@s0, [{}, {}]>> -> tensor<8x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
// CHECK-NEXT: %[[Y:.*]] = call @two_stages_stage1(%[[S]], %[[W1]])
// CHECK-NEXT: return %[[Y]]
// CHECK: func.func private @two_stages_stage0({{.*}}) -> tensor<8x32xf32, #dist.sharding<@s0, [{}, {}]>> attributes {dist.stage = @s0}
// CHECK-NOT: @s1
// CHECK: linalg.matmul {{.*}}#dist.sharding<@s0, [{}, {"tp"}]>
// CHECK: return
// CHECK: func.func private @two_stages_stage1({{.*}}) -> tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>> attributes {dist.stage = @s1}
// CHECK-NOT: @s0
// CHECK: return
dist.mesh @s0 = <["tp"=4], devices = [0, 1, 2, 3]>
dist.mesh @s1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>
func.func @two_stages(%x: tensor<8x16xf32, #dist.sharding<@s0, [{}, {}]>>,
                      %w0: tensor<16x32xf32, #dist.sharding<@s0, [{}, {"tp"}]>>,
                      %w1: tensor<32x8xf32, #dist.sharding<@s1, [{"tp"}, {}]>>)
    -> tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x32xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %a = linalg.matmul ins(%x, %w0 : tensor<8x16xf32, #dist.sharding<@s0, [{}, {}]>>, tensor<16x32xf32, #dist.sharding<@s0, [{}, {"tp"}]>>)
                     outs(%f0 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %z = arith.constant dense<0.0> : tensor<8x32xf32>
  %eh = tensor.empty() : tensor<8x32xf32, #dist.sharding<@s0, [{}, {}]>>
  %h = linalg.map { arith.maximumf } ins(%a, %z : tensor<8x32xf32>, tensor<8x32xf32>)
                  outs(%eh : tensor<8x32xf32, #dist.sharding<@s0, [{}, {}]>>)
  %s = dist.reshard %h : tensor<8x32xf32, #dist.sharding<@s0, [{}, {}]>> -> tensor<8x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %e1 = tensor.empty() : tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>) -> tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %unused = tensor.empty() : tensor<8x8xf32>
  %y = linalg.matmul ins(%s, %w1 : tensor<8x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>, tensor<32x8xf32, #dist.sharding<@s1, [{"tp"}, {}]>>)
                     outs(%f1 : tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>) -> tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  return %y : tensor<8x8xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
}

// -----

// Back and forth: the third stage reads the first's result (on its mesh,
// with a layout) and the second's hand-off; stages follow program order, so
// there is no cycle between them.
// REMARK: remark: dist-partition: @there_and_back: 3 stages: @there_and_back_stage0 on @a (1 ops), @there_and_back_stage1 on @b (1 ops), @there_and_back_stage2 on @a (1 ops)
// CHECK-LABEL: func.func @there_and_back(
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<8xf32
// CHECK-NEXT: %[[E:.*]] = call @there_and_back_stage0(%[[X]])
// CHECK-NEXT: %[[TO_B:.*]] = dist.reshard %[[E]]
// CHECK-NEXT: %[[N:.*]] = call @there_and_back_stage1(%[[TO_B]])
// CHECK-NEXT: %[[TO_A:.*]] = dist.reshard %[[N]]
// CHECK-NEXT: %[[S:.*]] = call @there_and_back_stage2(%[[E]], %[[TO_A]])
// CHECK-NEXT: return %[[S]]
// CHECK: func.func private @there_and_back_stage0({{.*}} attributes {dist.stage = @a}
// CHECK: math.exp
// CHECK: func.func private @there_and_back_stage1({{.*}} attributes {dist.stage = @b}
// CHECK: arith.negf
// CHECK: func.func private @there_and_back_stage2({{.*}} attributes {dist.stage = @a}
// CHECK: arith.addf
dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
func.func @there_and_back(%x: tensor<8xf32, #dist.sharding<@a, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@a, [{"x"}]>> {
  %e = math.exp %x : tensor<8xf32, #dist.sharding<@a, [{"x"}]>>
  %to_b = dist.reshard %e : tensor<8xf32, #dist.sharding<@a, [{"x"}]>> -> tensor<8xf32, #dist.sharding<@b, [{}]>>
  %n = arith.negf %to_b : tensor<8xf32, #dist.sharding<@b, [{}]>>
  %to_a = dist.reshard %n : tensor<8xf32, #dist.sharding<@b, [{}]>> -> tensor<8xf32, #dist.sharding<@a, [{"x"}]>>
  %s = arith.addf %e, %to_a : tensor<8xf32, #dist.sharding<@a, [{"x"}]>>
  return %s : tensor<8xf32, #dist.sharding<@a, [{"x"}]>>
}

// -----

// Compute on one mesh and a hand-off to the next stage as the result: one
// stage. A function on a mesh without a device list (the whole world), or
// one that calls another, is not marked.
// REMARK: remark: dist-partition: @hand_off: 1 stages: @hand_off_stage0 on @p (1 ops)
// REMARK: remark: dist-partition: @hand_off: pipeline of 1 stages x 1 microbatches (gpipe, blocking hand-offs): stages @p {{.*}} s; hand-offs none; then 1.000e-05 s; step 1.000e-05 s, bubble 0.0%
// CHECK-LABEL: func.func @hand_off(
// CHECK-NEXT: call @hand_off_stage0
// CHECK-NEXT: dist.reshard
// CHECK-NEXT: return
// CHECK: func.func private @hand_off_stage0({{.*}} attributes {dist.stage = @p}
// CHECK: func.func @world(
// CHECK-NOT: dist.stage
// CHECK-SAME: {
// CHECK: func.func @calls(
// CHECK-NOT: dist.stage
// CHECK-SAME: {
dist.mesh @p = <["x"=2], devices = [0, 1]>
dist.mesh @q = <["x"=2], devices = [2, 3]>
dist.mesh @w = <["x"=4]>
func.func @hand_off(%x: tensor<8xf32, #dist.sharding<@p, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@q, [{"x"}]>> {
  %e = math.exp %x : tensor<8xf32, #dist.sharding<@p, [{"x"}]>>
  %r = dist.reshard %e : tensor<8xf32, #dist.sharding<@p, [{"x"}]>> -> tensor<8xf32, #dist.sharding<@q, [{"x"}]>>
  return %r : tensor<8xf32, #dist.sharding<@q, [{"x"}]>>
}
func.func @world(%x: tensor<8xf32, #dist.sharding<@w, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@w, [{"x"}]>> {
  %e = math.exp %x : tensor<8xf32, #dist.sharding<@w, [{"x"}]>>
  return %e : tensor<8xf32, #dist.sharding<@w, [{"x"}]>>
}
func.func @calls(%x: tensor<8xf32, #dist.sharding<@p, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@p, [{"x"}]>> {
  %e = math.exp %x : tensor<8xf32, #dist.sharding<@p, [{"x"}]>>
  %c = call @callee(%e) : (tensor<8xf32, #dist.sharding<@p, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@p, [{"x"}]>>
  return %c : tensor<8xf32, #dist.sharding<@p, [{"x"}]>>
}
func.func private @callee(%x: tensor<8xf32, #dist.sharding<@p, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@p, [{"x"}]>>
