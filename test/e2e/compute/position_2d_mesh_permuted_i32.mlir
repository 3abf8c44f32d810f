// Positions on a 2-D mesh whose devices are permuted, both dims split
// unevenly: the iota-like value 100 * i + j is added to the input, then
// summed over the columns.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// EXPECT result0 = arg0 + 100 * np.arange(7)[:, None] + np.arange(5)[None, :]
// EXPECT result1 = (arg0 + 100 * np.arange(7)[:, None] + np.arange(5)[None, :]).sum(axis=1)

dist.mesh @m = <["x"=2, "y"=2], devices = [3, 1, 0, 2]>

func.func @positions(%x: tensor<7x5xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>)
    -> (tensor<7x5xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>,
        tensor<7xi32, #dist.sharding<@m, [{}]>>) {
  %e = tensor.empty() : tensor<7x5xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>
  %out = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<7x5xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>)
      outs(%e : tensor<7x5xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>) {
  ^bb0(%a: i32, %o: i32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %hundred = arith.constant 100 : index
    %row = arith.muli %i, %hundred : index
    %pos = arith.addi %row, %j : index
    %p = arith.index_cast %pos : index to i32
    %v = arith.addi %a, %p : i32
    linalg.yield %v : i32
  } -> tensor<7x5xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>
  %zero = arith.constant 0 : i32
  %e1 = tensor.empty() : tensor<7xi32, #dist.sharding<@m, [{}]>>
  %f1 = linalg.fill ins(%zero : i32) outs(%e1 : tensor<7xi32, #dist.sharding<@m, [{}]>>) -> tensor<7xi32, #dist.sharding<@m, [{}]>>
  %s = linalg.reduce ins(%out : tensor<7x5xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>)
                     outs(%f1 : tensor<7xi32, #dist.sharding<@m, [{}]>>) dimensions = [1]
    (%in: i32, %acc: i32) {
      %sum = arith.addi %acc, %in : i32
      linalg.yield %sum : i32
    }
  return %out, %s : tensor<7x5xi32, #dist.sharding<@m, [{"x"}, {"y"}]>>,
                     tensor<7xi32, #dist.sharding<@m, [{}]>>
}
