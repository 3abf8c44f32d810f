// A 2-D dp x tp MLP in f64 on 8 ranks: the batch is split by dp, the hidden
// dim by tp; the second matmul's partial sums are reduced over tp.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 8 --timeout 180 --input random:11 %s --dump %t
// RUN: %check_shards %s %t --input random:11
// EXPECT result0 = np.tanh(arg0 @ arg1) @ arg2

dist.mesh @m = <["dp"=2, "tp"=4]>

func.func @mlp2d(%x: tensor<8x12xf64, #dist.sharding<@m, [{"dp"}, {}]>>,
                 %w1: tensor<12x32xf64, #dist.sharding<@m, [{}, {"tp"}]>>,
                 %w2: tensor<32x12xf64, #dist.sharding<@m, [{"tp"}, {}]>>)
    -> tensor<8x12xf64, #dist.sharding<@m, [{"dp"}, {}]>> {
  %zero = arith.constant 0.0 : f64
  %e1 = tensor.empty() : tensor<8x32xf64>
  %f1 = linalg.fill ins(%zero : f64) outs(%e1 : tensor<8x32xf64>) -> tensor<8x32xf64>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x12xf64, #dist.sharding<@m, [{"dp"}, {}]>>, tensor<12x32xf64, #dist.sharding<@m, [{}, {"tp"}]>>)
                     outs(%f1 : tensor<8x32xf64>) -> tensor<8x32xf64>
  %t = math.tanh %h : tensor<8x32xf64>
  %e2 = tensor.empty() : tensor<8x12xf64, #dist.sharding<@m, [{"dp"}, {}]>>
  %f2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<8x12xf64, #dist.sharding<@m, [{"dp"}, {}]>>) -> tensor<8x12xf64, #dist.sharding<@m, [{"dp"}, {}]>>
  %y = linalg.matmul ins(%t, %w2 : tensor<8x32xf64>, tensor<32x12xf64, #dist.sharding<@m, [{"tp"}, {}]>>)
                     outs(%f2 : tensor<8x12xf64, #dist.sharding<@m, [{"dp"}, {}]>>) -> tensor<8x12xf64, #dist.sharding<@m, [{"dp"}, {}]>>
  return %y : tensor<8x12xf64, #dist.sharding<@m, [{"dp"}, {}]>>
}
