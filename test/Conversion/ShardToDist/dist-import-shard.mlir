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
// The elementwise op becomes a linalg.generic, which reads inputs of any
// layout; its result is free, and its annotation copies it into its layout.
// CHECK-LABEL: func.func @chain_and_compute
// CHECK-SAME: (%[[ARG:.*]]: tensor<8x8xf32, #dist.sharding<@grid, [{"0"}, {}]>>)
// CHECK-SAME: -> tensor<8x8xf32, #dist.sharding<@grid, [{}, {"0"}]>>
// CHECK: %[[R1:.*]] = dist.reshard %[[ARG]]
// CHECK-SAME: -> tensor<8x8xf32, #dist.sharding<@grid, [{}, {}]>>
// CHECK: %[[R2:.*]] = dist.reshard %[[R1]]
// CHECK-SAME: -> tensor<8x8xf32, #dist.sharding<@grid, [{}, {"0"}]>>
// CHECK: %[[INIT:.*]] = tensor.empty() : tensor<8x8xf32>
// CHECK: %[[SUM:.*]] = linalg.generic
// CHECK-SAME: ins(%[[R2]], %[[R2]] : tensor<8x8xf32, #dist.sharding<@grid, [{}, {"0"}]>>, tensor<8x8xf32, #dist.sharding<@grid, [{}, {"0"}]>>)
// CHECK-SAME: outs(%[[INIT]] : tensor<8x8xf32>)
// CHECK: arith.addf
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<8x8xf32, #dist.sharding<@grid, [{}, {"0"}]>>
// CHECK: %[[COPY:.*]] = linalg.copy ins(%[[SUM]] : tensor<8x8xf32>) outs(%[[EMPTY]] :
// CHECK: return %[[COPY]] : tensor<8x8xf32, #dist.sharding<@grid, [{}, {"0"}]>>
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

// -----

// A linalg result computed into a tensor.empty takes the layout with its
// whole init chain: dist's way of stating a computed result's layout.
// CHECK-LABEL: func.func @matmul_result
// CHECK-SAME: -> tensor<4x6xf32, #dist.sharding<@grid, [{"0"}, {}]>>
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x6xf32, #dist.sharding<@grid, [{"0"}, {}]>>
// CHECK: %[[FILL:.*]] = linalg.fill {{.*}} outs(%[[EMPTY]] : tensor<4x6xf32, #dist.sharding<@grid, [{"0"}, {}]>>)
// CHECK: %[[MM:.*]] = linalg.matmul {{.*}} outs(%[[FILL]] : {{.*}}) -> tensor<4x6xf32, #dist.sharding<@grid, [{"0"}, {}]>>
// CHECK: return %[[MM]]
shard.grid @grid(shape = 2)
func.func @matmul_result(%arg0: tensor<4x8xf32>, %arg1: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s_k = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %s_rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %a = shard.shard %arg0 to %s_k : tensor<4x8xf32>
  %b = shard.shard %arg1 to %s_rows : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x6xf32>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c0 = shard.shard %c to %s_rows : tensor<4x6xf32>
  return %c0 : tensor<4x6xf32>
}

// -----

// Any other op result stays free and is copied into a tensor of the layout
// (here an elementwise op's, which computes into its operand's tensor); its
// other users keep the free value.
// CHECK-LABEL: func.func @elementwise_result
// CHECK-SAME: (%[[A:.*]]: tensor<4x6xf32>)
// CHECK-SAME: -> (tensor<4x6xf32, #dist.sharding<@grid, [{}, {"0"}]>>, tensor<4x6xf32>)
// CHECK: %[[SQ:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[A]] : {{.*}})
// CHECK: arith.mulf
// CHECK: %[[EMPTY:.*]] = tensor.empty() : tensor<4x6xf32, #dist.sharding<@grid, [{}, {"0"}]>>
// CHECK: %[[COPY:.*]] = linalg.copy ins(%[[SQ]] : tensor<4x6xf32>) outs(%[[EMPTY]] : tensor<4x6xf32, #dist.sharding<@grid, [{}, {"0"}]>>)
// CHECK: %[[OTHER:.*]] = linalg.generic {{.*}} ins(%[[SQ]], %[[SQ]] : {{.*}})
// CHECK: arith.addf
// CHECK: return %[[COPY]], %[[OTHER]]
shard.grid @grid(shape = 2)
func.func @elementwise_result(%arg0: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %s_cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %sq = arith.mulf %arg0, %arg0 : tensor<4x6xf32>
  %0 = shard.shard %sq to %s_cols : tensor<4x6xf32>
  %1 = arith.addf %sq, %sq : tensor<4x6xf32>
  return %0, %1 : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// An init shared with another user cannot take the layout without changing
// that user's view: the result is copied into its layout instead.
// CHECK-LABEL: func.func @shared_init
// CHECK: %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<4x6xf32>
// CHECK: %[[MM:.*]] = linalg.matmul {{.*}} outs(%[[FILL]] : tensor<4x6xf32>) -> tensor<4x6xf32>
// CHECK: %[[COPY:.*]] = linalg.copy ins(%[[MM]] : tensor<4x6xf32>)
// CHECK: return %[[COPY]], %[[FILL]] : tensor<4x6xf32, #dist.sharding<@grid, [{"0"}, {}]>>, tensor<4x6xf32>
shard.grid @grid(shape = 2)
func.func @shared_init(%arg0: tensor<4x8xf32>, %arg1: tensor<8x6xf32>) -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %s_rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x6xf32>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c0 = shard.shard %c to %s_rows : tensor<4x6xf32>
  return %c0, %f : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// An annotated argument that starts a loop's carry (JAX's lax.scan over
// layers): the loop's init reads a copy in the free type, so the carry's
// layout stays dist-partition's choice and the IR stays valid.
// CHECK-LABEL: func.func @scan_init
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32, #dist.sharding<@grid, [{"0"}, {}]>>,
// CHECK: %[[FREE:.*]] = tensor.empty() : tensor<8x4xf32>
// CHECK: %[[COPY:.*]] = linalg.copy ins(%[[X]] : {{.*}}) outs(%[[FREE]] : tensor<8x4xf32>)
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[COPY]]) -> (tensor<8x4xf32>)
shard.grid @grid(shape = 2)
func.func @scan_init(%x: tensor<8x4xf32>, %w: tensor<3x4x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %xs = shard.shard %x to %s : tensor<8x4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %xs) -> (tensor<8x4xf32>) {
    %wi = tensor.extract_slice %w[%i, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<3x4x4xf32> to tensor<4x4xf32>
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %m = linalg.matmul ins(%h, %wi : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    scf.yield %m : tensor<8x4xf32>
  }
  return %r : tensor<8x4xf32>
}

// -----

// An annotated op result that is yielded by a loop body: the product takes
// the layout, and the yield reads a free copy (the loop's types stay).
// CHECK-LABEL: func.func @yielded
// CHECK: %[[M:.*]] = linalg.matmul {{.*}} -> tensor<8x4xf32, #dist.sharding<@grid, [{"0"}, {}]>>
// CHECK: %[[F:.*]] = linalg.copy ins(%[[M]] : {{.*}}) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK: scf.yield %[[F]] : tensor<8x4xf32>
shard.grid @grid(shape = 2)
func.func @yielded(%x: tensor<8x4xf32>, %w: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<8x4xf32>) {
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %m = linalg.matmul ins(%h, %w : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    %ms = shard.shard %m to %s : tensor<8x4xf32>
    scf.yield %ms : tensor<8x4xf32>
  }
  return %r : tensor<8x4xf32>
}
