// A transpose of shards on 2x4 (rows over x, columns over y -> rows over y,
// columns over x): dist-lower-reshard plans one point-to-point redistribute,
// half the cost of the best collective chain; the exchange runs on 8 ranks.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 8 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s
// CHECK: dist.redistribute
// CHECK-NOT: dist.all_

dist.mesh @m = <["x"=2, "y"=4]>

func.func @transpose_shards(%a: tensor<64x48xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>)
    -> tensor<64x48xf32, #dist.sharding<@m, [{"y"}, {"x"}]>> {
  %0 = dist.reshard %a
      : tensor<64x48xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>
     -> tensor<64x48xf32, #dist.sharding<@m, [{"y"}, {"x"}]>>
  return %0 : tensor<64x48xf32, #dist.sharding<@m, [{"y"}, {"x"}]>>
}
