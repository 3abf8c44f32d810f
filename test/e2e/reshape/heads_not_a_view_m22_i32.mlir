// Rows split contiguously over a x b are not blocks of the heads they are
// viewed as (12 rows in 4 runs of 3; heads of 4 rows): dist-partition moves
// the rows into the interleaved layout whose view the heads are, then
// reshapes in place. i32, exact.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:3 %s --dump %t
// RUN: %check_shards %s %t --input random:3
// RUN: dist-opt %s --dist-partition | FileCheck %s
// CHECK-LABEL: func @heads
// CHECK: dist.reshard %{{.*}} -> tensor<12x8xi32, #dist.sharding<@m, [{"a", "b"} segments [4, 4, 4], {}]>>
// CHECK: tensor.expand_shape
// EXPECT result0 = arg0.reshape(3, 4, 8)

dist.mesh @m = <["a"=2, "b"=2]>

func.func @heads(%w: tensor<12x8xi32, #dist.sharding<@m, [{"a", "b"}, {}]>>)
    -> tensor<3x4x8xi32, #dist.sharding<@m, [{}, {"a", "b"}, {}]>> {
  %h = tensor.expand_shape %w [[0, 1], [2]] output_shape [3, 4, 8] : tensor<12x8xi32, #dist.sharding<@m, [{"a", "b"}, {}]>> into tensor<3x4x8xi32, #dist.sharding<@m, [{}, {"a", "b"}, {}]>>
  return %h : tensor<3x4x8xi32, #dist.sharding<@m, [{}, {"a", "b"}, {}]>>
}
