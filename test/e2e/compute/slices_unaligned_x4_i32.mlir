// Slices that are not aligned with the blocks: a middle slice of a split
// dim (resharded into the segment view [3, 8, 5] first), an insert into a
// split destination, and a row of a stacked tensor at a dynamic offset on
// its unsplit dim (local).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// EXPECT result0 = arg0[3:11]
// EXPECT result1 = np.concatenate([arg1[:2], arg0[3:11], arg1[10:]])
// EXPECT result2 = arg2[2]
dist.mesh @m = <["x"=4]>
func.func @slices(%a: tensor<16xi32, #dist.sharding<@m, [{"x"}]>>,
                  %d: tensor<14xi32, #dist.sharding<@m, [{"x"}]>>,
                  %s: tensor<4x8xi32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> (tensor<8xi32, #dist.sharding<@m, [{"x"}]>>, tensor<14xi32, #dist.sharding<@m, [{"x"}]>>, tensor<8xi32, #dist.sharding<@m, [{"x"}]>>) {
  %p = tensor.extract_slice %a[3] [8] [1] : tensor<16xi32, #dist.sharding<@m, [{"x"}]>> to tensor<8xi32, #dist.sharding<@m, [{"x"}]>>
  %p2 = tensor.extract_slice %a[3] [8] [1] : tensor<16xi32, #dist.sharding<@m, [{"x"}]>> to tensor<8xi32>
  %i = tensor.insert_slice %p2 into %d[2] [8] [1] : tensor<8xi32> into tensor<14xi32, #dist.sharding<@m, [{"x"}]>>
  %c2 = arith.constant 2 : index
  %row = tensor.extract_slice %s[%c2, 0] [1, 8] [1, 1] : tensor<4x8xi32, #dist.sharding<@m, [{}, {"x"}]>> to tensor<8xi32, #dist.sharding<@m, [{"x"}]>>
  return %p, %i, %row : tensor<8xi32, #dist.sharding<@m, [{"x"}]>>, tensor<14xi32, #dist.sharding<@m, [{"x"}]>>, tensor<8xi32, #dist.sharding<@m, [{"x"}]>>
}
