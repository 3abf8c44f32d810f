// A checkpoint saved at TP=4 (axes a, b of a 2x2 mesh) loaded at TP=2 (axis
// b only), keeping the GQA segmentation [q=32, k=8, v=8] on both sides.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:4 %s --dump %t
// RUN: %check_shards %s %t --input random:4

dist.mesh @m = <["a"=2, "b"=2]>

func.func @tp4_to_tp2(%w: tensor<48x6xf32, #dist.sharding<@m, [{"a", "b"} segments [32, 8, 8], {}]>>)
    -> tensor<48x6xf32, #dist.sharding<@m, [{"b"} segments [32, 8, 8], {}]>> {
  %0 = dist.reshard %w : tensor<48x6xf32, #dist.sharding<@m, [{"a", "b"} segments [32, 8, 8], {}]>>
      -> tensor<48x6xf32, #dist.sharding<@m, [{"b"} segments [32, 8, 8], {}]>>
  return %0 : tensor<48x6xf32, #dist.sharding<@m, [{"b"} segments [32, 8, 8], {}]>>
}
