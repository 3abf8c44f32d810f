// From 2 ranks to 4 (a larger stage on permuted ranks 4, 1, 3, 2), uneven
// extents, bf16; rank 0 is in the source mesh only, rank 4 in the target
// only, ranks 1-3 in both.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 5 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t

dist.mesh @small = <["x"=2], devices = [0, 1]>
dist.mesh @large = <["a"=2, "b"=2], devices = [4, 1, 3, 2]>

func.func @grow(%a: tensor<9x7xbf16, #dist.sharding<@small, [{}, {"x"}]>>)
    -> tensor<9x7xbf16, #dist.sharding<@large, [{"b"}, {"a"}]>> {
  %0 = dist.reshard %a
      : tensor<9x7xbf16, #dist.sharding<@small, [{}, {"x"}]>>
     -> tensor<9x7xbf16, #dist.sharding<@large, [{"b"}, {"a"}]>>
  return %0 : tensor<9x7xbf16, #dist.sharding<@large, [{"b"}, {"a"}]>>
}
