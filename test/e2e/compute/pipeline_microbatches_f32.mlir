// Two stages of Megatron MLPs (tp=4 on ranks 0-3, then dp=2 x tp=2 on ranks
// 4-7) run as a pipeline of 2, 4 and 8 microbatches (semantics §3c): the
// batch of x cut into parts, every stage once per part (2M stage calls,
// each behind its mesh's membership), the parts of the result concatenated;
// the result equals NumPy's for every M.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t.2 && dist-run --np 8 --timeout 120 --input random:3 --microbatches 2 %s --dump %t.2 --save-lowered %t.2.mlir
// RUN: %check_shards %s %t.2 --input random:3
// RUN: grep -c 'llvm.call @two_mlp_stages_stage' %t.2.mlir | FileCheck %s --check-prefix=CALLS2
// CALLS2: 4
// RUN: rm -rf %t.4 && dist-run --np 8 --timeout 120 --input random:3 --microbatches 4 %s --dump %t.4
// RUN: %check_shards %s %t.4 --input random:3
// RUN: rm -rf %t.8 && dist-run --np 8 --timeout 120 --input random:3 --microbatches 8 %s --dump %t.8 --save-lowered %t.8.mlir
// RUN: %check_shards %s %t.8 --input random:3
// RUN: grep -c 'llvm.call @two_mlp_stages_stage' %t.8.mlir | FileCheck %s --check-prefix=CALLS8
// CALLS8: 16
// RUN: not dist-run --np 8 --microbatches 0 %s 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: --microbatches must be at least 1 (got 0)

dist.mesh @s0 = <["tp"=4], devices = [0, 1, 2, 3]>
dist.mesh @s1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>

// EXPECT result0 = np.maximum(np.maximum(arg0 @ arg1, 0) @ arg2 @ arg3, 0) @ arg4
func.func @two_mlp_stages(%x: tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>> {dist.batch_dim = 0 : i64},
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
