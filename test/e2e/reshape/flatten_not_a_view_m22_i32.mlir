// Columns split are not blocks of the flattened matrix, and 6 rows do not
// split into 4 blocks of whole rows: no layout of the 6x8 matrix flattens
// into 48 elements split over b then a. dist-partition exchanges the rows
// into 2 blocks over b (one redistribute), flattens them in place and
// slices over a (local): as cheap as any plan through a view. i32, exact.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:4 %s --dump %t
// RUN: %check_shards %s %t --input random:4
// RUN: dist-opt %s --dist-partition | FileCheck %s
// CHECK-LABEL: func @flatten
// CHECK: dist.reshard %{{.*}} -> tensor<6x8xi32, #dist.sharding<@m, [{"b"}, {}]>>
// CHECK: tensor.collapse_shape %{{.*}} into tensor<48xi32, #dist.sharding<@m, [{"b"}]>>
// CHECK: dist.reshard %{{.*}} -> tensor<48xi32, #dist.sharding<@m, [{"b", "a"}]>>
// EXPECT result0 = arg0.reshape(48)

dist.mesh @m = <["a"=2, "b"=2]>

func.func @flatten(%x: tensor<6x8xi32, #dist.sharding<@m, [{"a"}, {"b"}]>>)
    -> tensor<48xi32, #dist.sharding<@m, [{"b", "a"}]>> {
  %f = tensor.collapse_shape %x [[0, 1]] : tensor<6x8xi32, #dist.sharding<@m, [{"a"}, {"b"}]>> into tensor<48xi32, #dist.sharding<@m, [{"b", "a"}]>>
  return %f : tensor<48xi32, #dist.sharding<@m, [{"b", "a"}]>>
}
