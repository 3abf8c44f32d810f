// Replicated to sharded on both dims of 2x4 (uneven columns): the planner
// takes one redistribute (one step, where slicing each dim takes two), and
// every transfer of its table is a copy within a rank, so it runs as
// distRtExchangeLocal (no rank waits for another); checked element by
// element on 8 ranks.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 8 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s --check-prefix=PLAN
// RUN: dist-opt %s --dist-to-llvm | FileCheck %s --check-prefix=CALL
// PLAN: dist.redistribute
// PLAN-NOT: dist.all_
// CALL: llvm.call @distRtExchangeLocal
// CALL-NOT: llvm.call @distRtExchange(

dist.mesh @m = <["x"=2, "y"=4]>

func.func @replicated_to_sharded(%a: tensor<64x50xf32, #dist.sharding<@m, [{}, {}]>>)
    -> tensor<64x50xf32, #dist.sharding<@m, [{"x"}, {"y"}]>> {
  %0 = dist.reshard %a
      : tensor<64x50xf32, #dist.sharding<@m, [{}, {}]>>
     -> tensor<64x50xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>
  return %0 : tensor<64x50xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>
}
