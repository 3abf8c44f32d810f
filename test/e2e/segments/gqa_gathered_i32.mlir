// A GQA projection [q=32; k=8; v=8] split per segment over tp=4, gathered
// whole on every rank. i32, exact.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:9 %s --dump %t
// RUN: %check_shards %s %t --input random:9

dist.mesh @tp = <["tp"=4]>

func.func @gather(%w: tensor<48x4xi32, #dist.sharding<@tp, [{"tp"} segments [32, 8, 8], {}]>>)
    -> tensor<48x4xi32, #dist.sharding<@tp, [{}, {}]>> {
  %0 = dist.reshard %w : tensor<48x4xi32, #dist.sharding<@tp, [{"tp"} segments [32, 8, 8], {}]>>
      -> tensor<48x4xi32, #dist.sharding<@tp, [{}, {}]>>
  return %0 : tensor<48x4xi32, #dist.sharding<@tp, [{}, {}]>>
}
