// linalg.index on a dim interleaved in segments [6, 2, 2] (a GQA fused QKV
// weight's rows on tp=2): the loop is split per segment, and the global row
// of every local row is found through its segment.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// EXPECT result0 = arg0 + 1000 * np.arange(10)[:, None]

dist.mesh @tp = <["tp"=2]>

func.func @rows(%w: tensor<10x3xi32, #dist.sharding<@tp, [{"tp"} segments [6, 2, 2], {}]>>)
    -> tensor<10x3xi32, #dist.sharding<@tp, [{"tp"} segments [6, 2, 2], {}]>> {
  %e = tensor.empty() : tensor<10x3xi32, #dist.sharding<@tp, [{"tp"} segments [6, 2, 2], {}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<10x3xi32, #dist.sharding<@tp, [{"tp"} segments [6, 2, 2], {}]>>)
      outs(%e : tensor<10x3xi32, #dist.sharding<@tp, [{"tp"} segments [6, 2, 2], {}]>>) {
  ^bb0(%a: i32, %o: i32):
    %i = linalg.index 0 : index
    %thousand = arith.constant 1000 : index
    %row = arith.muli %i, %thousand : index
    %p = arith.index_cast %row : index to i32
    %v = arith.addi %a, %p : i32
    linalg.yield %v : i32
  } -> tensor<10x3xi32, #dist.sharding<@tp, [{"tp"} segments [6, 2, 2], {}]>>
  return %r : tensor<10x3xi32, #dist.sharding<@tp, [{"tp"} segments [6, 2, 2], {}]>>
}
