// tensor.extract of one element of a split tensor: the tensor is
// gathered for it (every device needs the element), and the scalar scales
// the split tensor locally.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// EXPECT result0 = arg0 * arg0[1, 2]
dist.mesh @m = <["x"=4]>
func.func @scale(%a: tensor<8x4xi32, #dist.sharding<@m, [{"x"}, {}]>>) -> tensor<8x4xi32, #dist.sharding<@m, [{"x"}, {}]>> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %s = tensor.extract %a[%c1, %c2] : tensor<8x4xi32, #dist.sharding<@m, [{"x"}, {}]>>
  %e = tensor.empty() : tensor<8x4xi32, #dist.sharding<@m, [{"x"}, {}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]}
    ins(%a : tensor<8x4xi32, #dist.sharding<@m, [{"x"}, {}]>>) outs(%e : tensor<8x4xi32, #dist.sharding<@m, [{"x"}, {}]>>) {
  ^bb0(%v: i32, %o: i32):
    %m = arith.muli %v, %s : i32
    linalg.yield %m : i32
  } -> tensor<8x4xi32, #dist.sharding<@m, [{"x"}, {}]>>
  return %r : tensor<8x4xi32, #dist.sharding<@m, [{"x"}, {}]>>
}
