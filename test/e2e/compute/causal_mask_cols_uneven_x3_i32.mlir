// The mask on columns split unevenly (10 columns over x=3: blocks of 4, 4
// and 2 plus padding), in integers so that the check is exact.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 3 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// EXPECT result0 = np.where(np.arange(10)[None, :] <= np.arange(6)[:, None], arg0, 0)

dist.mesh @m = <["x"=3]>

func.func @mask(%x: tensor<6x10xi32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> tensor<6x10xi32, #dist.sharding<@m, [{}, {"x"}]>> {
  %e = tensor.empty() : tensor<6x10xi32, #dist.sharding<@m, [{}, {"x"}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<6x10xi32, #dist.sharding<@m, [{}, {"x"}]>>)
      outs(%e : tensor<6x10xi32, #dist.sharding<@m, [{}, {"x"}]>>) {
  ^bb0(%a: i32, %o: i32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi ule, %j, %i : index
    %zero = arith.constant 0 : i32
    %v = arith.select %keep, %a, %zero : i32
    linalg.yield %v : i32
  } -> tensor<6x10xi32, #dist.sharding<@m, [{}, {"x"}]>>
  return %r : tensor<6x10xi32, #dist.sharding<@m, [{}, {"x"}]>>
}
