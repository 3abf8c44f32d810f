// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s
// RUN: dist-opt %s --dist-lower-reshard -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: dist-opt %s --dist-lower-reshard | dist-opt --verify-roundtrip | FileCheck %s

// Plans with point-to-point steps (semantics §3 redistribute, the default move
// set) and reshards onto another mesh (semantics §3a).

dist.mesh @m24 = <["x"=2, "y"=4]>
dist.mesh @s0 = <["tp"=4], devices = [0, 1, 2, 3]>
dist.mesh @s1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>
dist.mesh @s2 = <["tp"=2], devices = [2, 3]>

// A transpose of shards: one exchange, each device receiving its block from
// two senders (2 alpha + 512 KiB beta), half the best collective chain.
// CHECK-LABEL: func @transpose_shards
// CHECK: %[[R:.*]] = dist.redistribute %{{.*}} : tensor<1024x1024xf32, #dist.sharding<@m24, [{"x"}, {"y"}]>> -> tensor<1024x1024xf32, #dist.sharding<@m24, [{"y"}, {"x"}]>>
// CHECK-NEXT: return %[[R]]
// REMARK: remark: planned (optimal, cache miss): 1 step, cost 2.142e-05 s, peak 1048576 B, lower bound {{.*}}: [redistribute {} to [{"y"}, {"x"}], 2.142e-05 s]
func.func @transpose_shards(%a: tensor<1024x1024xf32, #dist.sharding<@m24, [{"x"}, {"y"}]>>) -> tensor<1024x1024xf32, #dist.sharding<@m24, [{"y"}, {"x"}]>> {
  %b = dist.reshard %a : tensor<1024x1024xf32, #dist.sharding<@m24, [{"x"}, {"y"}]>> -> tensor<1024x1024xf32, #dist.sharding<@m24, [{"y"}, {"x"}]>>
  return %b : tensor<1024x1024xf32, #dist.sharding<@m24, [{"y"}, {"x"}]>>
}

// A pipeline hand-off from stage 0 (tp=4 on ranks 0-3) to stage 1 (dp x tp
// on ranks 4-7): each dp replica is sent half of its block, then the two
// complete it with an all-gather over dp (one latency less per device than
// receiving the whole block from four senders).
// CHECK-LABEL: func @handoff
// CHECK: %[[T:.*]] = dist.redistribute %{{.*}} : tensor<64x64xf32, #dist.sharding<@s0, [{"tp"}, {}]>> -> tensor<64x64xf32, #dist.sharding<@s1, [{"dp"}, {"tp"}]>>
// CHECK-NEXT: %[[G:.*]] = dist.all_gather %[[T]] axes = ["dp"] dim = 0
// CHECK-NEXT: return %[[G]]
// REMARK: remark: planned (optimal, cache miss): 2 steps, cost 3.002e-05 s, {{.*}}: [redistribute {} to the target mesh, 2.001e-05 s] [all_gather {"dp"} dim 0, 1.001e-05 s]
func.func @handoff(%a: tensor<64x64xf32, #dist.sharding<@s0, [{"tp"}, {}]>>) -> tensor<64x64xf32, #dist.sharding<@s1, [{}, {"tp"}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@s0, [{"tp"}, {}]>> -> tensor<64x64xf32, #dist.sharding<@s1, [{}, {"tp"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@s1, [{}, {"tp"}]>>
}

// A partial source is reduced on its own mesh before it leaves (a
// reduce-scatter first: each device then sends a quarter).
// Ranks 2 and 3 are in both meshes: their share is a local copy.
// CHECK-LABEL: func @reduce_then_send
// CHECK: %[[RS:.*]] = dist.reduce_scatter %{{.*}} axes = ["tp"] dim = 0 reduction = sum
// CHECK-NEXT: %[[T:.*]] = dist.redistribute %[[RS]] : tensor<64x64xf32, #dist.sharding<@s0, [{"tp"}, {}]>> -> tensor<64x64xf32, #dist.sharding<@s2, [{"tp"}, {}]>>
// CHECK-NEXT: return %[[T]]
// REMARK: remark: dist-lower-reshard: 3 reshards lowered, 0 cache hits, 3 cache misses
func.func @reduce_then_send(%a: tensor<64x64xf32, #dist.sharding<@s0, [{}, {}], partial = sum {"tp"}>>) -> tensor<64x64xf32, #dist.sharding<@s2, [{"tp"}, {}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@s0, [{}, {}], partial = sum {"tp"}>> -> tensor<64x64xf32, #dist.sharding<@s2, [{"tp"}, {}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@s2, [{"tp"}, {}]>>
}
