// Found by the program fuzzer
// (seed 50000 of --features ci,+size1-axes at this commit), minimized: on a
// mesh with a size-1 axis the planner emits a dist.permute over no axes,
// which the verifier rejects: 'dist.permute' op requires at least one mesh axis.
// Fixed: a permute over no axes (a relabelling) verifies and lowers to nothing.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 --input random:1 %s --dump %t
// RUN: %check_shards %s %t --input random:1
// EXPECT result0 = (v10 := np.asarray(arg0).astype(np.float32),
// ...   v12 := np.asarray(arg1).astype(np.float32),
// ...   v13 := np.full((1, 2), np.float32(0.0)) + np.matmul(np.asarray(v10).astype(np.float32), np.asarray(v12).astype(np.float32)),
// ...   v13)[-1]
dist.mesh @m = <["a"=1, "b"=2]>

func.func @fuzz(
    %v10: tensor<1x2xbf16, #dist.sharding<@m, [{}, {}]>>,
    %v12: tensor<2x2xbf16, #dist.sharding<@m, [{}, {"a", "b"}]>>)
    -> tensor<1x2xf32, #dist.sharding<@m, [{}, {}]>> {
  %e1 = tensor.empty() : tensor<1x2xf32>
  %c2 = arith.constant 0.0 : f32
  %f3 = linalg.fill ins(%c2 : f32) outs(%e1 : tensor<1x2xf32>) -> tensor<1x2xf32>
  %v13 = linalg.matmul ins(%v10, %v12 : tensor<1x2xbf16, #dist.sharding<@m, [{}, {}]>>, tensor<2x2xbf16, #dist.sharding<@m, [{}, {"a", "b"}]>>) outs(%f3 : tensor<1x2xf32>) -> tensor<1x2xf32>
  %e4 = tensor.empty() : tensor<1x2xf32, #dist.sharding<@m, [{}, {}]>>
  %r5 = linalg.copy ins(%v13 : tensor<1x2xf32>) outs(%e4 : tensor<1x2xf32, #dist.sharding<@m, [{}, {}]>>) -> tensor<1x2xf32, #dist.sharding<@m, [{}, {}]>>
  return %r5 : tensor<1x2xf32, #dist.sharding<@m, [{}, {}]>>
}
