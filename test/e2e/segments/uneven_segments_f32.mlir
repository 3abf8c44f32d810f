// Uneven segments: [7, 3, 3] rows over x=2 (blocks of 4, 2 and 2, each
// padded on its own) to columns over x in segments [6, 4] and rows over y.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t

dist.mesh @m = <["x"=2, "y"=2]>

func.func @uneven(%a: tensor<13x10xf32, #dist.sharding<@m, [{"x"} segments [7, 3, 3], {}]>>)
    -> tensor<13x10xf32, #dist.sharding<@m, [{"y"}, {"x"} segments [6, 4]]>> {
  %0 = dist.reshard %a : tensor<13x10xf32, #dist.sharding<@m, [{"x"} segments [7, 3, 3], {}]>>
      -> tensor<13x10xf32, #dist.sharding<@m, [{"y"}, {"x"} segments [6, 4]]>>
  return %0 : tensor<13x10xf32, #dist.sharding<@m, [{"y"}, {"x"} segments [6, 4]]>>
}
