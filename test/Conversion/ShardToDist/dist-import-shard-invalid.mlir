// RUN: dist-opt %s --dist-import-shard --split-input-file -verify-diagnostics

shard.grid @grid(shape = 4)
func.func @halo(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{halo sizes have no dist equivalent}}
  %s = shard.sharding @grid split_axes = [[0]] halo_sizes = [1, 2] : !shard.sharding
  %0 = shard.shard %arg0 to %s : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 4)
func.func @offsets(%arg0: tensor<14xf32>) -> tensor<14xf32> {
  // expected-error @+1 {{explicit shard offsets (sharded_dims_offsets) have no dist equivalent}}
  %s = shard.sharding @grid split_axes = [[0]] sharded_dims_offsets = [0, 2, 5, 9, 14] : !shard.sharding
  %0 = shard.shard %arg0 to %s : tensor<14xf32>
  return %0 : tensor<14xf32>
}

// -----

// expected-error @+1 {{grid axis 1 has a dynamic size; a dist mesh needs every size}}
shard.grid @grid(shape = 2x?)

// -----

shard.grid @grid(shape = 2)
func.func @too_many_entries(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %s = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  // expected-error @+1 {{the sharding has 2 split_axes entries but the tensor has rank 1}}
  %0 = shard.shard %arg0 to %s : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @dynamic_tensor(%arg0: tensor<?xf32>) -> tensor<?xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{sharded tensors must have a static shape}}
  %0 = shard.shard %arg0 to %s : tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @partitioned(%arg0: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'shard.all_gather' has no dist equivalent}}
  %0 = shard.all_gather %arg0 on @grid grid_axes = [0] gather_axis = 0 : tensor<4xf32> -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @sharding_value(%arg0: tensor<4xf32>) -> (tensor<4xf32>, !shard.sharding) {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s : tensor<4xf32>
  // expected-error @+1 {{uses a !shard.sharding value, which has no dist equivalent}}
  return %0, %s : tensor<4xf32>, !shard.sharding
}

// -----

shard.grid @grid(shape = 2)
// expected-error @+1 {{has annotated arguments or results but is called in the module}}
func.func @callee(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %0 = shard.shard %arg0 to %s : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @caller(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = func.call @callee(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @loop_carried(%arg0: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%t = %arg0) -> tensor<4xf32> {
    // expected-error @+1 {{only function arguments and op results can be annotated}}
    %0 = shard.shard %t to %s : tensor<4xf32>
    scf.yield %0 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}


// -----

shard.grid @grid(shape = 2)
func.func @other_encoding(%arg0: tensor<4xf32, "tiled">) -> tensor<4xf32, "tiled"> {
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{the annotated tensor already has an encoding ("tiled") that is not a dist layout}}
  %0 = shard.shard %arg0 to %s : tensor<4xf32, "tiled">
  return %0 : tensor<4xf32, "tiled">
}

// -----

shard.grid @grid(shape = 2)
func.func @sharding_argument(%arg0: tensor<4xf32>, %s: !shard.sharding) -> tensor<4xf32> {
  // expected-error @+1 {{the sharding must be made by a shard.sharding op}}
  %0 = shard.shard %arg0 to %s : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @grid(shape = 2)
func.func @two_returns(%arg0: tensor<4xf32>, %c: i1) -> tensor<4xf32> {
  %s0 = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %s1 = shard.sharding @grid split_axes = [[]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<4xf32>
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  return %0 : tensor<4xf32>
^bb2:
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<4xf32>
  // expected-error @+1 {{the function's returns give its results different layouts}}
  return %1 : tensor<4xf32>
}
