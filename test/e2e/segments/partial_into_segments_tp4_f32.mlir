// A row-parallel GEMM's output (partial sums over tp=4) resharded into a
// fused gate/up layout split per segment [g=24; u=8]: the partial sums are
// reduced on a contiguous layout first, then one exchange re-splits the rows.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:2 %s --dump %t
// RUN: %check_shards %s %t --input random:2
// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s
// CHECK: dist.reduce_scatter
// CHECK: dist.redistribute

dist.mesh @tp = <["tp"=4]>

func.func @partial_into_segments(%y: tensor<32x8xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>)
    -> tensor<32x8xf32, #dist.sharding<@tp, [{"tp"} segments [24, 8], {}]>> {
  %0 = dist.reshard %y : tensor<32x8xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>
      -> tensor<32x8xf32, #dist.sharding<@tp, [{"tp"} segments [24, 8], {}]>>
  return %0 : tensor<32x8xf32, #dist.sharding<@tp, [{"tp"} segments [24, 8], {}]>>
}
