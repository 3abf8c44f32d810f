// A row-parallel GEMM's output (partial sums over tp=4) resharded into a
// fused gate/up layout split per segment [g=24; u=8]: one reduce_scatter
// that hands each rank the sums of its block of every segment (the buffer
// packed per rank, then the plain reduce_scatter).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:2 %s --dump %t
// RUN: %check_shards %s %t --input random:2
// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s
// CHECK: dist.reduce_scatter {{.*}} -> tensor<32x8xf32, #dist.sharding<@tp, [{"tp"} segments [24, 8], {}]>>
// CHECK-NOT: dist.redistribute

dist.mesh @tp = <["tp"=4]>

func.func @partial_into_segments(%y: tensor<32x8xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>)
    -> tensor<32x8xf32, #dist.sharding<@tp, [{"tp"} segments [24, 8], {}]>> {
  %0 = dist.reshard %y : tensor<32x8xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>
      -> tensor<32x8xf32, #dist.sharding<@tp, [{"tp"} segments [24, 8], {}]>>
  return %0 : tensor<32x8xf32, #dist.sharding<@tp, [{"tp"} segments [24, 8], {}]>>
}
