// A fused QKV weight [q=64; k=16; v=16] split per segment over tp=4
// gathered whole: one all_gather of each rank's [Q_r; K_r; V_r], regrouped
// per segment (the plain all_gather, at its cost).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:11 %s --dump %t
// RUN: %check_shards %s %t --input random:11
// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s
// CHECK: dist.all_gather {{.*}} axes = ["tp"] dim = 0
// CHECK-NOT: dist.redistribute

dist.mesh @tp = <["tp"=4]>

func.func @gather(%w: tensor<96x6xbf16, #dist.sharding<@tp, [{"tp"} segments [64, 16, 16], {}]>>)
    -> tensor<96x6xbf16, #dist.sharding<@tp, [{}, {}]>> {
  %0 = dist.reshard %w : tensor<96x6xbf16, #dist.sharding<@tp, [{"tp"} segments [64, 16, 16], {}]>>
      -> tensor<96x6xbf16, #dist.sharding<@tp, [{}, {}]>>
  return %0 : tensor<96x6xbf16, #dist.sharding<@tp, [{}, {}]>>
}
