// RUN: dist-opt %s --dist-localize | FileCheck %s
// RUN: dist-opt %s --dist-localize | dist-opt --verify-roundtrip | FileCheck %s

// dist.redistribute becomes dist.local.redistribute with the planner's
// exchange table: per transfer, sender and receiver world ranks, the box's
// offsets in the sender's and the receiver's local buffers, its extents.

dist.mesh @sq = <["x"=2, "y"=2]>
dist.mesh @s0 = <["tp"=2], devices = [0, 1]>
dist.mesh @s1 = <["tp"=2], devices = [3, 2]>

// 8x6 rows/cols over x/y -> over y/x: every 4x3 block moves whole, to the
// device with the coordinates swapped; (0,0) and (1,1) keep theirs.
// CHECK-LABEL: func @transpose_shards
// CHECK-SAME: (%[[A:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK: %[[R:.*]] = dist.local.redistribute %[[A]] from @sq to @sq
// CHECK-SAME: table = [0, 0, 0, 0, 0, 0, 4, 3, 2, 1, 0, 0, 0, 0, 4, 3, 1, 2, 0, 0, 0, 0, 4, 3, 3, 3, 0, 0, 0, 0, 4, 3]
// CHECK-SAME: : tensor<4x3xf32> -> tensor<4x3xf32>
// CHECK: return %[[R]]
func.func @transpose_shards(%a: tensor<8x6xf32, #dist.sharding<@sq, [{"x"}, {"y"}]>>) -> tensor<8x6xf32, #dist.sharding<@sq, [{"y"}, {"x"}]>> {
  %0 = dist.redistribute %a : tensor<8x6xf32, #dist.sharding<@sq, [{"x"}, {"y"}]>> -> tensor<8x6xf32, #dist.sharding<@sq, [{"y"}, {"x"}]>>
  return %0 : tensor<8x6xf32, #dist.sharding<@sq, [{"y"}, {"x"}]>>
}

// Uneven: 5 rows over 2 (blocks of 3, the last padded) to replicated; each
// device keeps its rows and receives the others' (rank 1 holds 2 rows).
// CHECK-LABEL: func @gather_uneven
// CHECK: dist.local.redistribute %{{.*}} from @s0 to @s0
// CHECK-SAME: table = [0, 0, 0, 0, 3, 1, 0, 0, 3, 2, 0, 1, 0, 0, 3, 1, 1, 0, 3, 2]
// CHECK-SAME: : tensor<3xi32> -> tensor<5xi32>
func.func @gather_uneven(%a: tensor<5xi32, #dist.sharding<@s0, [{"tp"}]>>) -> tensor<5xi32, #dist.sharding<@s0, [{}]>> {
  %0 = dist.redistribute %a : tensor<5xi32, #dist.sharding<@s0, [{"tp"}]>> -> tensor<5xi32, #dist.sharding<@s0, [{}]>>
  return %0 : tensor<5xi32, #dist.sharding<@s0, [{}]>>
}

// Across meshes, with a device table: block 0 goes to rank 3, block 1 to
// rank 2.
// CHECK-LABEL: func @handoff
// CHECK: dist.local.redistribute %{{.*}} from @s0 to @s1
// CHECK-SAME: table = [0, 3, 0, 0, 4, 1, 2, 0, 0, 4]
func.func @handoff(%a: tensor<8xbf16, #dist.sharding<@s0, [{"tp"}]>>) -> tensor<8xbf16, #dist.sharding<@s1, [{"tp"}]>> {
  %0 = dist.redistribute %a : tensor<8xbf16, #dist.sharding<@s0, [{"tp"}]>> -> tensor<8xbf16, #dist.sharding<@s1, [{"tp"}]>>
  return %0 : tensor<8xbf16, #dist.sharding<@s1, [{"tp"}]>>
}
