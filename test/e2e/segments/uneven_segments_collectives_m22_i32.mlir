// Uneven segments [7, 3, 3] on a 2x2 mesh, every per-segment collective the
// lowering has: gathered over b (blocks of 2 become blocks of 4 in every
// segment), all_to_all'd into the columns and back, sliced again, and the
// partial sums over b reduce-scattered into segments. The planner is given
// no choice: each step is a dist op. i32, exact.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:13 %s --dump %t
// RUN: %check_shards %s %t --input random:13

dist.mesh @m = <["a"=2, "b"=2]>

func.func @collectives(%x: tensor<13x4xi32, #dist.sharding<@m, [{"a", "b"} segments [7, 3, 3], {}]>>,
                       %p: tensor<13x4xi32, #dist.sharding<@m, [{"a"} segments [7, 3, 3], {}], partial = sum {"b"}>>)
    -> (tensor<13x4xi32, #dist.sharding<@m, [{"a", "b"} segments [7, 3, 3], {}]>>,
        tensor<13x4xi32, #dist.sharding<@m, [{"a", "b"} segments [7, 3, 3], {}]>>) {
  %0 = dist.all_gather %x axes = ["b"] dim = 0 : tensor<13x4xi32, #dist.sharding<@m, [{"a", "b"} segments [7, 3, 3], {}]>> -> tensor<13x4xi32, #dist.sharding<@m, [{"a"} segments [7, 3, 3], {}]>>
  %1 = dist.all_to_all %0 axes = ["a"] dim = 0 to_dim = 1 : tensor<13x4xi32, #dist.sharding<@m, [{"a"} segments [7, 3, 3], {}]>> -> tensor<13x4xi32, #dist.sharding<@m, [{}, {"a"}]>>
  %2 = dist.all_to_all %1 axes = ["a"] dim = 1 to_dim = 0 : tensor<13x4xi32, #dist.sharding<@m, [{}, {"a"}]>> -> tensor<13x4xi32, #dist.sharding<@m, [{"a"} segments [7, 3, 3], {}]>>
  %3 = dist.all_slice %2 axes = ["b"] dim = 0 : tensor<13x4xi32, #dist.sharding<@m, [{"a"} segments [7, 3, 3], {}]>> -> tensor<13x4xi32, #dist.sharding<@m, [{"a", "b"} segments [7, 3, 3], {}]>>
  %4 = dist.reduce_scatter %p axes = ["b"] dim = 0 reduction = sum : tensor<13x4xi32, #dist.sharding<@m, [{"a"} segments [7, 3, 3], {}], partial = sum {"b"}>> -> tensor<13x4xi32, #dist.sharding<@m, [{"a", "b"} segments [7, 3, 3], {}]>>
  return %3, %4 : tensor<13x4xi32, #dist.sharding<@m, [{"a", "b"} segments [7, 3, 3], {}]>>, tensor<13x4xi32, #dist.sharding<@m, [{"a", "b"} segments [7, 3, 3], {}]>>
}
