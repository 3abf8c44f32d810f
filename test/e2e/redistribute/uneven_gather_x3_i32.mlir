// Uneven blocks: 10 rows over 3 (blocks of 4, 4, 2) redistributed to 10
// columns' worth of rows over 2 (blocks of 5): every device receives
// exactly the rows it lacks, from the device holding them. i32, exact.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 6 --timeout 120 --input random:3 %s --dump %t
// RUN: %check_shards %s %t --input random:3

dist.mesh @m = <["a"=3, "b"=2]>

func.func @uneven(%a: tensor<10x7xi32, #dist.sharding<@m, [{"a"}, {}]>>)
    -> tensor<10x7xi32, #dist.sharding<@m, [{"b"}, {"a"}]>> {
  %0 = dist.redistribute %a
      : tensor<10x7xi32, #dist.sharding<@m, [{"a"}, {}]>>
     -> tensor<10x7xi32, #dist.sharding<@m, [{"b"}, {"a"}]>>
  return %0 : tensor<10x7xi32, #dist.sharding<@m, [{"b"}, {"a"}]>>
}
