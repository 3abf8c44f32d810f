// linalg.softmax over a split dim (10 columns over x=4, uneven):
// decomposed into max, exp, sum and divide, with the padded columns kept
// out of both reductions.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:2 %s --dump %t
// RUN: %check_shards %s %t --input random:2
// EXPECT result0 = np.exp(arg0 - arg0.max(axis=1, keepdims=True)) / np.exp(arg0 - arg0.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)
dist.mesh @m = <["x"=4]>
func.func @sm(%a: tensor<8x10xf32, #dist.sharding<@m, [{}, {"x"}]>>) -> tensor<8x10xf32, #dist.sharding<@m, [{}, {"x"}]>> {
  %e = tensor.empty() : tensor<8x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %s = linalg.softmax dimension(1) ins(%a : tensor<8x10xf32, #dist.sharding<@m, [{}, {"x"}]>>) outs(%e : tensor<8x10xf32, #dist.sharding<@m, [{}, {"x"}]>>) -> tensor<8x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
  return %s : tensor<8x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
}
