// tensor.concat of inputs split alike by rows is split per input
// (segments [8, 4, 4]) and local; tensor.pad of a split dim is split as
// segments [low, N, high] and pads each block locally.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// EXPECT result0 = np.concatenate([arg0, arg1, arg1], axis=0)
// EXPECT result1 = np.pad(arg0, ((3, 2), (0, 1)), constant_values=7)
// EXPECT result2 = np.concatenate([arg0, arg1, arg1], axis=0) * 2
dist.mesh @m = <["x"=2, "y"=2]>
func.func @cp(%a: tensor<8x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>,
              %b: tensor<4x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>)
    -> (tensor<16x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>, tensor<13x7xi32, #dist.sharding<@m, [{"x"}, {}]>>, tensor<16x6xi32, #dist.sharding<@m, [{"x"} segments [8, 4, 4], {"y"}]>>) {
  %c = tensor.concat dim(0) %a, %b, %b : (tensor<8x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>, tensor<4x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>, tensor<4x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>) -> tensor<16x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>
  %seven = arith.constant 7 : i32
  %p = tensor.pad %a low[3, 0] high[2, 1] {
  ^bb0(%i: index, %j: index):
    tensor.yield %seven : i32
  } : tensor<8x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>> to tensor<13x7xi32, #dist.sharding<@m, [{"x"}, {}]>>
  %c2 = arith.addi %c, %c : tensor<16x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>
  %r2 = dist.reshard %c2 : tensor<16x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>> -> tensor<16x6xi32, #dist.sharding<@m, [{"x"} segments [8, 4, 4], {"y"}]>>
  return %c, %p, %r2 : tensor<16x6xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>, tensor<13x7xi32, #dist.sharding<@m, [{"x"}, {}]>>, tensor<16x6xi32, #dist.sharding<@m, [{"x"} segments [8, 4, 4], {"y"}]>>
}
