// Issue 46's two stages of Megatron MLPs in one function (semantics §3c):
// tp=4 on ranks 0-3, then dp=2 x tp=2 on ranks 4-7, the hand-off a
// cross-mesh reshard that changes the layout. dist-partition cuts the
// function into one stage function per mesh; each rank runs only the stage
// of the mesh that holds it (its call behind distRtMeshContains), and the
// result on stage 1's ranks equals NumPy's.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 8 --timeout 120 --input random:3 %s --dump %t --save-lowered %t.lowered.mlir
// RUN: %check_shards %s %t --input random:3
// RUN: ls %t | FileCheck %s --check-prefix=DUMPS
// RUN: FileCheck %s --check-prefix=LOWERED --input-file %t.lowered.mlir
// DUMPS-NOT: rank0
// DUMPS: result0.rank4.npy
// DUMPS: result0.rank7.npy
// LOWERED-LABEL: llvm.func @two_mlp_stages(
// LOWERED: %[[IN0:.*]] = llvm.call @distRtMeshContains(
// LOWERED-NEXT: %[[M0:.*]] = llvm.icmp "ne" %[[IN0]]
// LOWERED-NEXT: llvm.cond_br %[[M0]], ^[[RUN0:bb[0-9]+]], ^
// LOWERED: ^[[RUN0]]:
// LOWERED-NOT: {{\^bb[0-9]+:}}
// LOWERED: llvm.call @two_mlp_stages_stage0(
// LOWERED: llvm.call @distRtExchange(
// LOWERED: %[[IN1:.*]] = llvm.call @distRtMeshContains(
// LOWERED-NEXT: %[[M1:.*]] = llvm.icmp "ne" %[[IN1]]
// LOWERED-NEXT: llvm.cond_br %[[M1]], ^[[RUN1:bb[0-9]+]], ^
// LOWERED: ^[[RUN1]]:
// LOWERED-NOT: {{\^bb[0-9]+:}}
// LOWERED: llvm.call @two_mlp_stages_stage1(

dist.mesh @s0 = <["tp"=4], devices = [0, 1, 2, 3]>
dist.mesh @s1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>

// EXPECT result0 = np.maximum(np.maximum(arg0 @ arg1, 0) @ arg2 @ arg3, 0) @ arg4
func.func @two_mlp_stages(%x: tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>,
    %w1: tensor<32x64xf32, #dist.sharding<@s0, [{}, {"tp"}]>>,
    %w2: tensor<64x32xf32, #dist.sharding<@s0, [{"tp"}, {}]>>,
    %w3: tensor<32x64xf32, #dist.sharding<@s1, [{}, {"tp"}]>>,
    %w4: tensor<64x32xf32, #dist.sharding<@s1, [{"tp"}, {}]>>)
    -> tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x64xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %a = linalg.matmul ins(%x, %w1 : tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>, tensor<32x64xf32, #dist.sharding<@s0, [{}, {"tp"}]>>)
                     outs(%f1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %z1 = arith.constant dense<0.0> : tensor<16x64xf32>
  %r = arith.maximumf %a, %z1 : tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>
  %h = linalg.matmul ins(%r, %w2 : tensor<16x64xf32>, tensor<64x32xf32, #dist.sharding<@s0, [{"tp"}, {}]>>)
                     outs(%f2 : tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>
  %s = dist.reshard %h : tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>> -> tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %e3 = tensor.empty() : tensor<16x64xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %b = linalg.matmul ins(%s, %w3 : tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>, tensor<32x64xf32, #dist.sharding<@s1, [{}, {"tp"}]>>)
                     outs(%f3 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %z2 = arith.constant dense<0.0> : tensor<16x64xf32>
  %q = arith.maximumf %b, %z2 : tensor<16x64xf32>
  %e4 = tensor.empty() : tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %y = linalg.matmul ins(%q, %w4 : tensor<16x64xf32>, tensor<64x32xf32, #dist.sharding<@s1, [{"tp"}, {}]>>)
                     outs(%f4 : tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  return %y : tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
}
