// A partial tensor on a mesh with a permuted device table: redistribute
// keeps the partial axis and only moves data between devices with the same
// coordinate on it; the result is still partial (the checker reduces it).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t

dist.mesh @m = <["x"=2, "p"=2], devices = [2, 0, 3, 1]>

func.func @partial(%a: tensor<6x8xbf16, #dist.sharding<@m, [{"x"}, {}], partial = sum {"p"}>>)
    -> tensor<6x8xbf16, #dist.sharding<@m, [{}, {"x"}], partial = sum {"p"}>> {
  %0 = dist.redistribute %a
      : tensor<6x8xbf16, #dist.sharding<@m, [{"x"}, {}], partial = sum {"p"}>>
     -> tensor<6x8xbf16, #dist.sharding<@m, [{}, {"x"}], partial = sum {"p"}>>
  return %0 : tensor<6x8xbf16, #dist.sharding<@m, [{}, {"x"}], partial = sum {"p"}>>
}
