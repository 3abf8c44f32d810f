// A fused QKV weight [q=64; k=16; v=16] split contiguously over tp=4 (which
// gives rank r rows that mix Q, K and V) re-split per segment, so that rank
// r holds [Q_r; K_r; V_r] (semantics §2 segments). One exchange; every element
// is checked against the global tensor, so a scrambled segment fails.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s
// CHECK: dist.redistribute %{{.*}} -> tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"} segments [64, 16, 16], {}]>>

dist.mesh @tp = <["tp"=4]>

func.func @qkv(%w: tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"} segments [64, 16, 16], {}]>> {
  %0 = dist.reshard %w : tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"}, {}]>>
      -> tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"} segments [64, 16, 16], {}]>>
  return %0 : tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"} segments [64, 16, 16], {}]>>
}
