// RUN: dist-opt %s --dist-localize --split-input-file | FileCheck %s

// Local padded shapes: 10 rows on 4 shards are blocks of 3; 6 columns on 2
// shards blocks of 3. Signatures, calls and returns follow.
dist.mesh @m = <["x"=2, "y"=2]>

// CHECK-LABEL: func @signature_and_gather
// CHECK-SAME: (%[[A:.*]]: tensor<3x6xf32>) -> tensor<10x6xf32>
// CHECK: %[[G:.*]] = dist.local.all_gather %[[A]] on @m axes = ["x", "y"] dim = 0 : tensor<3x6xf32> -> tensor<10x6xf32>
// CHECK: return %[[G]] : tensor<10x6xf32>
func.func @signature_and_gather(%a: tensor<10x6xf32, #dist.sharding<@m, [{"x", "y"}, {}]>>) -> tensor<10x6xf32, #dist.sharding<@m, [{}, {}]>> {
  %b = dist.all_gather %a axes = ["x", "y"] dim = 0 : tensor<10x6xf32, #dist.sharding<@m, [{"x", "y"}, {}]>> -> tensor<10x6xf32, #dist.sharding<@m, [{}, {}]>>
  return %b : tensor<10x6xf32, #dist.sharding<@m, [{}, {}]>>
}

// CHECK-LABEL: func @every_move
// CHECK-SAME: (%[[A:.*]]: tensor<5x8xf32>, %[[P:.*]]: tensor<10x6xi32>)
func.func @every_move(%a: tensor<10x8xf32, #dist.sharding<@m, [{"x"}, {}]>>,
                      %p: tensor<10x6xi32, #dist.sharding<@m, [{}, {}], partial = max {"x", "y"}>>) {
  // CHECK: %[[S:.*]] = dist.local.all_slice %[[A]] on @m axes = ["y"] dim = 1 : tensor<5x8xf32> -> tensor<5x4xf32>
  %s = dist.all_slice %a axes = ["y"] dim = 1 : tensor<10x8xf32, #dist.sharding<@m, [{"x"}, {}]>> -> tensor<10x8xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>
  // CHECK: dist.local.all_to_all %[[S]] on @m axes = ["x"] dim = 0 to_dim = 1 : tensor<5x4xf32> -> tensor<10x2xf32>
  %t = dist.all_to_all %s axes = ["x"] dim = 0 to_dim = 1 : tensor<10x8xf32, #dist.sharding<@m, [{"x"}, {"y"}]>> -> tensor<10x8xf32, #dist.sharding<@m, [{}, {"y", "x"}]>>
  // CHECK: %[[RS:.*]] = dist.local.reduce_scatter %[[P]] on @m axes = ["x"] dim = 0 reduction = max : tensor<10x6xi32> -> tensor<5x6xi32>
  %rs = dist.reduce_scatter %p axes = ["x"] dim = 0 reduction = max : tensor<10x6xi32, #dist.sharding<@m, [{}, {}], partial = max {"x", "y"}>> -> tensor<10x6xi32, #dist.sharding<@m, [{"x"}, {}], partial = max {"y"}>>
  // CHECK: %[[AR:.*]] = dist.local.all_reduce %[[RS]] on @m axes = ["y"] reduction = max : tensor<5x6xi32> -> tensor<5x6xi32>
  %ar = dist.all_reduce %rs axes = ["y"] reduction = max : tensor<10x6xi32, #dist.sharding<@m, [{"x"}, {}], partial = max {"y"}>> -> tensor<10x6xi32, #dist.sharding<@m, [{"x"}, {}]>>
  // CHECK: dist.local.replicate_to_partial %[[AR]] on @m axes = ["y"] reduction = sum : tensor<5x6xi32> -> tensor<5x6xi32>
  %rp = dist.replicate_to_partial %ar axes = ["y"] reduction = sum : tensor<10x6xi32, #dist.sharding<@m, [{"x"}, {}]>> -> tensor<10x6xi32, #dist.sharding<@m, [{"x"}, {}], partial = sum {"y"}>>
  return
}

// -----

// A permute's table: on a 2x2 mesh, [{"x", "y"}] -> [{"y", "x"}] swaps the
// blocks of (0,1) and (1,0), i.e. ranks 1 and 2; with device ids the table
// is in ranks, not linear indices.
dist.mesh @m = <["x"=2, "y"=2]>
dist.mesh @ids = <["x"=2, "y"=2], devices = [3, 2, 1, 0]>

// CHECK-LABEL: func @permute_table
// CHECK: dist.local.permute %{{.*}} on @m sources = [0, 2, 1, 3] : tensor<4xf32> -> tensor<4xf32>
// CHECK: dist.local.permute %{{.*}} on @ids sources = [0, 2, 1, 3] : tensor<4xf32> -> tensor<4xf32>
func.func @permute_table(%a: tensor<16xf32, #dist.sharding<@m, [{"x", "y"}]>>,
                         %b: tensor<16xf32, #dist.sharding<@ids, [{"x", "y"}]>>) {
  %0 = dist.permute %a axes = ["x", "y"] : tensor<16xf32, #dist.sharding<@m, [{"x", "y"}]>> -> tensor<16xf32, #dist.sharding<@m, [{"y", "x"}]>>
  %1 = dist.permute %b axes = ["x", "y"] : tensor<16xf32, #dist.sharding<@ids, [{"x", "y"}]>> -> tensor<16xf32, #dist.sharding<@ids, [{"y", "x"}]>>
  return
}

// -----

// A permute over no axes (only size-1 axes change place) leaves
// every device its own buffer: nothing to run.
dist.mesh @u = <["tp"=1, "x"=2]>

// CHECK-LABEL: func @permute_relabel
// CHECK-SAME: (%[[A:.*]]: tensor<4x4xf32>) -> tensor<4x4xf32>
// CHECK-NOT: dist.local
// CHECK: return %[[A]] : tensor<4x4xf32>
func.func @permute_relabel(%a: tensor<8x4xf32, #dist.sharding<@u, [{"x"}, {}]>>) -> tensor<8x4xf32, #dist.sharding<@u, [{"tp", "x"}, {}]>> {
  %0 = dist.permute %a axes = [] : tensor<8x4xf32, #dist.sharding<@u, [{"x"}, {}]>> -> tensor<8x4xf32, #dist.sharding<@u, [{"tp", "x"}, {}]>>
  return %0 : tensor<8x4xf32, #dist.sharding<@u, [{"tp", "x"}, {}]>>
}

// -----

// Calls between functions with sharded signatures follow the conversion;
// unsharded tensors and the mesh stay as they are.
dist.mesh @m = <["x"=4]>

// CHECK-LABEL: func private @callee(tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32>
func.func private @callee(tensor<16xf32, #dist.sharding<@m, [{"x"}]>>, tensor<8xf32>) -> tensor<16xf32, #dist.sharding<@m, [{"x"}]>>
// CHECK-LABEL: func @caller
// CHECK: call @callee(%{{.*}}, %{{.*}}) : (tensor<4xf32>, tensor<8xf32>) -> tensor<4xf32>
func.func @caller(%a: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>, %b: tensor<8xf32>) -> tensor<16xf32, #dist.sharding<@m, [{"x"}]>> {
  %0 = call @callee(%a, %b) : (tensor<16xf32, #dist.sharding<@m, [{"x"}]>>, tensor<8xf32>) -> tensor<16xf32, #dist.sharding<@m, [{"x"}]>>
  return %0 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>>
}
