// A causal mask feeding a reduction over the masked (column) dim, split
// unevenly over x=4 (9 columns: blocks of 3, 3, 3 and padding): the body's
// positions are global and padded iterations stay out of the sum (the
// result is declared partial, so the reduction loop is split).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:5 %s --dump %t
// RUN: %check_shards %s %t --input random:5
// EXPECT result0 = np.tril(arg0).sum(axis=1)

dist.mesh @m = <["x"=4]>

func.func @row_sums(%x: tensor<9x9xf32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> tensor<9xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<9xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<9xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) -> tensor<9xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  %s = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<9x9xf32, #dist.sharding<@m, [{}, {"x"}]>>)
      outs(%init : tensor<9xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) {
  ^bb0(%a: f32, %acc: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi ule, %j, %i : index
    %z = arith.constant 0.0 : f32
    %v = arith.select %keep, %a, %z : f32
    %sum = arith.addf %acc, %v : f32
    linalg.yield %sum : f32
  } -> tensor<9xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  return %s : tensor<9xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
}
