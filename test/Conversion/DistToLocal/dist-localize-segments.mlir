// Collectives on interleaved dims (semantics §2 segments) run the plain local
// collective on a buffer packed into one chunk per group member, chunk j
// holding member j's block of every segment.
// RUN: dist-opt %s --dist-localize | FileCheck %s
// RUN: dist-opt %s --dist-localize | dist-opt --verify-roundtrip > /dev/null

dist.mesh @tp = <["tp"=2]>

// Rank r holds [Q_r (4 rows); K_r (2 rows)]. The gather delivers [Q_0 K_0 |
// Q_1 K_1], which unpacking regroups into [Q_0 Q_1 | K_0 K_1].
// CHECK-LABEL: func @gather
// CHECK-SAME: (%[[X:.*]]: tensor<6x3xf32>) -> tensor<12x3xf32>
// CHECK: %[[G:.*]] = dist.local.all_gather %[[X]] on @tp axes = ["tp"] dim = 0 : tensor<6x3xf32> -> tensor<12x3xf32>
// CHECK: %[[U:.*]] = dist.local.unpack_segments %[[G]] dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : tensor<12x3xf32> -> tensor<12x3xf32>
// CHECK: return %[[U]]
func.func @gather(%x: tensor<12x3xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>>)
    -> tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>> {
  %0 = dist.all_gather %x axes = ["tp"] dim = 0 : tensor<12x3xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>> -> tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>>
  return %0 : tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>>
}

// The partial sums are packed as [Q[0:4] K[0:2] | Q[4:8] K[2:4]] and
// reduce-scattered: rank r receives the sums of [Q_r; K_r].
// CHECK-LABEL: func @reduce_scatter
// CHECK-SAME: (%[[P:.*]]: tensor<12x3xf32>) -> tensor<6x3xf32>
// CHECK: %[[PACKED:.*]] = dist.local.pack_segments %[[P]] dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : tensor<12x3xf32> -> tensor<12x3xf32>
// CHECK: dist.local.reduce_scatter %[[PACKED]] on @tp axes = ["tp"] dim = 0 reduction = sum : tensor<12x3xf32> -> tensor<6x3xf32>
func.func @reduce_scatter(%p: tensor<12x3xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>)
    -> tensor<12x3xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>> {
  %0 = dist.reduce_scatter %p axes = ["tp"] dim = 0 reduction = sum : tensor<12x3xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>> -> tensor<12x3xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>>
  return %0 : tensor<12x3xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>>
}

// An all-to-all into segments packs the split dim, and one out of them
// unpacks the joined dim.
// CHECK-LABEL: func @all_to_all
// CHECK: dist.local.pack_segments %{{.*}} dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : tensor<12x2xf32> -> tensor<12x2xf32>
// CHECK: dist.local.all_to_all %{{.*}} dim = 1 to_dim = 0 : tensor<12x2xf32> -> tensor<6x4xf32>
// CHECK-NOT: unpack_segments
func.func @all_to_all(%c: tensor<12x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
    -> tensor<12x4xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>> {
  %0 = dist.all_to_all %c axes = ["tp"] dim = 1 to_dim = 0 : tensor<12x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>> -> tensor<12x4xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>>
  return %0 : tensor<12x4xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>>
}

// Contiguous collectives are untouched.
// CHECK-LABEL: func @contiguous
// CHECK-NEXT: dist.local.all_gather
// CHECK-NEXT: return
func.func @contiguous(%x: tensor<12x3xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>> {
  %0 = dist.all_gather %x axes = ["tp"] dim = 0 : tensor<12x3xf32, #dist.sharding<@tp, [{"tp"}, {}]>> -> tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>>
  return %0 : tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>>
}
