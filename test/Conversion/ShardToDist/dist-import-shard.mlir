// RUN: dist-opt %s --dist-import-shard --split-input-file | FileCheck %s

// Programs written in upstream MLIR's shard syntax (LLVM 22,
// mlir/Dialect/Shard/IR/ShardOps.td); grid axis k becomes mesh axis "k".

// CHECK-LABEL: dist.mesh @grid_2d = <["0"=2, "1"=4]>
// CHECK-NOT: shard.
// CHECK-LABEL: func.func @arg_and_result
// CHECK-SAME: (%[[ARG:.*]]: tensor<8x16xf32, #dist.sharding<@grid_2d, [{"0"}, {"1"}]>>)
// CHECK-SAME: -> tensor<8x16xf32, #dist.sharding<@grid_2d, [{"1"}, {"0"}]>>
// CHECK: %[[MOVED:.*]] = dist.reshard %[[ARG]]
// CHECK-SAME: : tensor<8x16xf32, #dist.sharding<@grid_2d, [{"0"}, {"1"}]>>
// CHECK-SAME: -> tensor<8x16xf32, #dist.sharding<@grid_2d, [{"1"}, {"0"}]>>
// CHECK: return %[[MOVED]]
shard.grid @grid_2d(shape = 2x4)
func.func @arg_and_result(%arg0: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %s0 = shard.sharding @grid_2d split_axes = [[0], [1]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8x16xf32>
  %s1 = shard.sharding @grid_2d split_axes = [[1], [0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8x16xf32>
  return %1 : tensor<8x16xf32>
}

// -----

// Several axes on one dim are major to minor; missing trailing entries and
// `[]` are unsplit dims.
// CHECK-LABEL: dist.mesh @grid_3d = <["0"=2, "1"=2, "2"=2]>
// CHECK-LABEL: func.func @many_axes
// CHECK-SAME: (%[[ARG:.*]]: tensor<4x8x2xi32, #dist.sharding<@grid_3d, [{"2", "0"}, {}, {}]>>)
// CHECK-SAME: -> tensor<4x8x2xi32, #dist.sharding<@grid_3d, [{}, {"1", "0", "2"}, {}]>>
// CHECK: %[[MOVED:.*]] = dist.reshard %[[ARG]]
// CHECK: return %[[MOVED]]
shard.grid @grid_3d(shape = 2x2x2)
func.func @many_axes(%arg0: tensor<4x8x2xi32>) -> tensor<4x8x2xi32> {
  %s0 = shard.sharding @grid_3d split_axes = [[2, 0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<4x8x2xi32>
  %s1 = shard.sharding @grid_3d split_axes = [[], [1, 0, 2], []] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<4x8x2xi32>
  return %1 : tensor<4x8x2xi32>
}

// -----

// The same layout twice is no reshard; a replicated sharding is `{}` on
// every dim.
// CHECK-LABEL: func.func @same_layout
// CHECK-SAME: (%[[ARG:.*]]: tensor<6xf32, #dist.sharding<@grid_1d, [{}]>>)
// CHECK-SAME: -> tensor<6xf32, #dist.sharding<@grid_1d, [{}]>>
// CHECK-NOT: dist.reshard
// CHECK: return %[[ARG]]
shard.grid @grid_1d(shape = 4)
func.func @same_layout(%arg0: tensor<6xf32>) -> tensor<6xf32> {
  %s0 = shard.sharding @grid_1d split_axes = [[]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<6xf32>
  %s1 = shard.sharding @grid_1d split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<6xf32>
  return %1 : tensor<6xf32>
}

// -----

// Only the users' annotation: the argument takes its layout. Unannotated
// arguments and results stay as they are.
// CHECK-LABEL: func.func @users_only
// CHECK-SAME: (%[[A:.*]]: tensor<4x4xf32, #dist.sharding<@grid, [{}, {"0"}]>>,
// CHECK-SAME:  %[[B:.*]]: tensor<4xf32>)
// CHECK-SAME: -> (tensor<4x4xf32, #dist.sharding<@grid, [{}, {"0"}]>>, tensor<4xf32>)
// CHECK: return %[[A]], %[[B]]
shard.grid @grid(shape = 2)
func.func @users_only(%arg0: tensor<4x4xf32>, %arg1: tensor<4xf32>)
    -> (tensor<4x4xf32>, tensor<4xf32>) {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s annotate_for_users : tensor<4x4xf32>
  return %0, %arg1 : tensor<4x4xf32>, tensor<4xf32>
}

// -----

// A chain of annotations (upstream's "sharding triplet") is a chain of
// reshards, which dist's canonicalization composes into one planned move.
// An op result annotated after it is produced takes the layout in its type.
// CHECK-LABEL: func.func @chain_and_compute
// CHECK-SAME: (%[[ARG:.*]]: tensor<8x8xf32, #dist.sharding<@grid, [{"0"}, {}]>>)
// CHECK: %[[R1:.*]] = dist.reshard %[[ARG]]
// CHECK-SAME: -> tensor<8x8xf32, #dist.sharding<@grid, [{}, {}]>>
// CHECK: %[[R2:.*]] = dist.reshard %[[R1]]
// CHECK-SAME: -> tensor<8x8xf32, #dist.sharding<@grid, [{}, {"0"}]>>
// CHECK: %[[SUM:.*]] = arith.addf %[[R2]], %[[R2]] : tensor<8x8xf32, #dist.sharding<@grid, [{}, {"0"}]>>
// CHECK: return %[[SUM]] : tensor<8x8xf32, #dist.sharding<@grid, [{}, {"0"}]>>
shard.grid @grid(shape = 2)
func.func @chain_and_compute(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<8x8xf32>
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<8x8xf32>
  %s2 = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %2 = shard.shard %1 to %s2 annotate_for_users : tensor<8x8xf32>
  %3 = arith.addf %2, %2 : tensor<8x8xf32>
  %4 = shard.shard %3 to %s2 : tensor<8x8xf32>
  return %4 : tensor<8x8xf32>
}
