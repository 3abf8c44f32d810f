// RUN: dist-opt %s --dist-lower-reshard="moves=collective" | FileCheck %s
// RUN: dist-opt %s --dist-lower-reshard="moves=collective" -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// The lowered IR must verify again on its own.
// RUN: dist-opt %s --dist-lower-reshard="moves=collective" | dist-opt --verify-roundtrip | FileCheck %s

// Collective plans (moves=collective; lower-reshard-redistribute.mlir has
// the point-to-point steps). Every reshard is gone; only collectives remain.
// CHECK-NOT: dist.reshard

dist.mesh @m1 = <["x"=4]>
dist.mesh @m2 = <["x"=2, "y"=4]>
dist.mesh @sq = <["x"=2, "y"=2]>
dist.mesh @m3 = <["x"=2, "y"=2, "z"=2]>
dist.mesh @m4 = <["a"=2, "b"=2, "c"=2, "d"=2]>
dist.mesh @ids = <["x"=2, "y"=2], devices = [3, 2, 1, 0]>
dist.mesh @m82 = <["x"=8, "y"=2]>
dist.mesh @m42 = <["x"=4, "y"=2]>

// CHECK-LABEL: func @gather
// CHECK-SAME: (%[[A:.*]]: tensor
// CHECK: %[[G:.*]] = dist.all_gather %[[A]] axes = ["x"] dim = 0
// CHECK-SAME: -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>>
// CHECK: return %[[G]]
// REMARK: remark: planned (optimal, cache miss): 1 step, cost 3.003e-05 s, peak 20480 B, lower bound {{[0-9.e+-]+}} s: [all_gather {"x"} dim 0, 3.003e-05 s]
func.func @gather(%a: tensor<64x64xf32, #dist.sharding<@m1, [{"x"}, {}]>>) -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m1, [{"x"}, {}]>> -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>>
}

// CHECK-LABEL: func @slice
// CHECK: dist.all_slice %{{.*}} axes = ["x"] dim = 1
// REMARK: remark: planned (optimal, cache miss): 1 step, cost 0.000e+00 s
func.func @slice(%a: tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>>) -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {"x"}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>> -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {"x"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@m1, [{}, {"x"}]>>
}

// CHECK-LABEL: func @a2a
// CHECK: dist.all_to_all %{{.*}} axes = ["x"] dim = 0 to_dim = 1
// REMARK: [all_to_all {"x"} dim 0 -> 1, 3.001e-05 s]
func.func @a2a(%a: tensor<64x64xf32, #dist.sharding<@m1, [{"x"}, {}]>>) -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {"x"}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m1, [{"x"}, {}]>> -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {"x"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@m1, [{}, {"x"}]>>
}

// Partial sum to sharded.
// CHECK-LABEL: func @rs
// CHECK: dist.reduce_scatter %{{.*}} axes = ["x"] dim = 0 reduction = sum
// REMARK: [reduce_scatter {"x"} dim 0 sum, 3.003e-05 s]
func.func @rs(%a: tensor<64x64xf32, #dist.sharding<@m1, [{}, {}], partial = sum {"x"}>>) -> tensor<64x64xf32, #dist.sharding<@m1, [{"x"}, {}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m1, [{}, {}], partial = sum {"x"}>> -> tensor<64x64xf32, #dist.sharding<@m1, [{"x"}, {}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@m1, [{"x"}, {}]>>
}

// Partial max to replicated.
// CHECK-LABEL: func @ar
// CHECK: dist.all_reduce %{{.*}} axes = ["x"] reduction = max
// REMARK: [all_reduce {"x"} max, 6.007e-05 s]
func.func @ar(%a: tensor<64x64xf32, #dist.sharding<@m1, [{}, {}], partial = max {"x"}>>) -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m1, [{}, {}], partial = max {"x"}>> -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>>
}

// CHECK-LABEL: func @r2p
// CHECK: dist.replicate_to_partial %{{.*}} axes = ["x"] reduction = sum
// REMARK: [replicate_to_partial {"x"} sum, 0.000e+00 s]
func.func @r2p(%a: tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>>) -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {}], partial = sum {"x"}>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m1, [{}, {}]>> -> tensor<64x64xf32, #dist.sharding<@m1, [{}, {}], partial = sum {"x"}>>
  return %b : tensor<64x64xf32, #dist.sharding<@m1, [{}, {}], partial = sum {"x"}>>
}

// Reordering the axes of one dim is one permute (a swap between two devices).
// CHECK-LABEL: func @permute_xy
// CHECK: dist.permute %{{.*}} axes = ["x", "y"]
// CHECK-SAME: -> tensor<64xf32, #dist.sharding<@sq, [{"y", "x"}]>>
// REMARK: [permute {"x", "y"} to [{"y", "x"}], 1.000e-05 s]
func.func @permute_xy(%a: tensor<64xf32, #dist.sharding<@sq, [{"x", "y"}]>>) -> tensor<64xf32, #dist.sharding<@sq, [{"y", "x"}]>> {
  %b = dist.reshard %a : tensor<64xf32, #dist.sharding<@sq, [{"x", "y"}]>> -> tensor<64xf32, #dist.sharding<@sq, [{"y", "x"}]>>
  return %b : tensor<64xf32, #dist.sharding<@sq, [{"y", "x"}]>>
}

// Swapping which axes split which dims on a square mesh is one permute too.
// CHECK-LABEL: func @permute_2d
// CHECK: dist.permute %{{.*}} axes = ["x", "y"]
// REMARK: [permute {"x", "y"} to [{"y"}, {"x"}], 1.001e-05 s]
func.func @permute_2d(%a: tensor<64x64xf32, #dist.sharding<@sq, [{"x"}, {"y"}]>>) -> tensor<64x64xf32, #dist.sharding<@sq, [{"y"}, {"x"}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@sq, [{"x"}, {"y"}]>> -> tensor<64x64xf32, #dist.sharding<@sq, [{"y"}, {"x"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@sq, [{"y"}, {"x"}]>>
}

// Known hard case: a free local slice, then a single all-to-all.
// CHECK-LABEL: func @hard82
// CHECK: %[[S:.*]] = dist.all_slice %{{.*}} axes = ["x"] dim = 0
// CHECK: dist.all_to_all %[[S]] axes = ["y"] dim = 1 to_dim = 0
// REMARK: 2 steps, cost 1.000e-05 s
func.func @hard82(%a: tensor<64x64xf32, #dist.sharding<@m82, [{}, {"y"}]>>) -> tensor<64x64xf32, #dist.sharding<@m82, [{"x", "y"}, {}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m82, [{}, {"y"}]>> -> tensor<64x64xf32, #dist.sharding<@m82, [{"x", "y"}, {}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@m82, [{"x", "y"}, {}]>>
}

// Known hard case: partial over both axes to sharded over one.
// CHECK-LABEL: func @hard42
// CHECK: %[[RS:.*]] = dist.reduce_scatter %{{.*}} axes = ["x"] dim = 1 reduction = sum
// CHECK: dist.all_reduce %[[RS]] axes = ["y"] reduction = sum
// REMARK: 2 steps, cost 5.004e-05 s
func.func @hard42(%a: tensor<64x64xf32, #dist.sharding<@m42, [{}, {}], partial = sum {"x", "y"}>>) -> tensor<64x64xf32, #dist.sharding<@m42, [{}, {"x"}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m42, [{}, {}], partial = sum {"x", "y"}>> -> tensor<64x64xf32, #dist.sharding<@m42, [{}, {"x"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@m42, [{}, {"x"}]>>
}

// Known hard case: three dims rotated on a 2x2x2 mesh, one permute.
// CHECK-LABEL: func @rot3
// CHECK: dist.permute %{{.*}} axes = ["x", "y", "z"]
// CHECK-SAME: -> tensor<64x64x64xf32, #dist.sharding<@m3, [{"y"}, {"z"}, {"x"}]>>
func.func @rot3(%a: tensor<64x64x64xf32, #dist.sharding<@m3, [{"x"}, {"y"}, {"z"}]>>) -> tensor<64x64x64xf32, #dist.sharding<@m3, [{"y"}, {"z"}, {"x"}]>> {
  %b = dist.reshard %a : tensor<64x64x64xf32, #dist.sharding<@m3, [{"x"}, {"y"}, {"z"}]>> -> tensor<64x64x64xf32, #dist.sharding<@m3, [{"y"}, {"z"}, {"x"}]>>
  return %b : tensor<64x64x64xf32, #dist.sharding<@m3, [{"y"}, {"z"}, {"x"}]>>
}

// 10 rows in 4 blocks of 3 do not nest into 2 blocks of 5, so no single
// all-to-all can do it: gather both axes at once, then slice locally.
// CHECK-LABEL: func @uneven
// CHECK: %[[G:.*]] = dist.all_gather %{{.*}} axes = ["x", "y"] dim = 0
// CHECK: %[[S:.*]] = dist.all_slice %[[G]] axes = ["x"] dim = 0
// CHECK: dist.all_slice %[[S]] axes = ["y"] dim = 1
func.func @uneven(%a: tensor<10x6xf32, #dist.sharding<@sq, [{"x", "y"}, {}]>>) -> tensor<10x6xf32, #dist.sharding<@sq, [{"x"}, {"y"}]>> {
  %b = dist.reshard %a : tensor<10x6xf32, #dist.sharding<@sq, [{"x", "y"}, {}]>> -> tensor<10x6xf32, #dist.sharding<@sq, [{"x"}, {"y"}]>>
  return %b : tensor<10x6xf32, #dist.sharding<@sq, [{"x"}, {"y"}]>>
}

// CHECK-LABEL: func @device_ids
// CHECK: dist.all_to_all %{{.*}} axes = ["x"] dim = 0 to_dim = 1
// CHECK-SAME: -> tensor<64x64xf32, #dist.sharding<@ids, [{}, {"y", "x"}]>>
func.func @device_ids(%a: tensor<64x64xf32, #dist.sharding<@ids, [{"x"}, {"y"}]>>) -> tensor<64x64xf32, #dist.sharding<@ids, [{}, {"y", "x"}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@ids, [{"x"}, {"y"}]>> -> tensor<64x64xf32, #dist.sharding<@ids, [{}, {"y", "x"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@ids, [{}, {"y", "x"}]>>
}

// 4-D mesh: swap the axis pairs of two dims in one permute.
// CHECK-LABEL: func @four_d
// CHECK: dist.permute %{{.*}} axes = ["a", "b", "c", "d"]
func.func @four_d(%a: tensor<64x64xf32, #dist.sharding<@m4, [{"a", "b"}, {"c", "d"}]>>) -> tensor<64x64xf32, #dist.sharding<@m4, [{"c", "d"}, {"a", "b"}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@m4, [{"a", "b"}, {"c", "d"}]>> -> tensor<64x64xf32, #dist.sharding<@m4, [{"c", "d"}, {"a", "b"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@m4, [{"c", "d"}, {"a", "b"}]>>
}


// A reshard between equal layouts disappears.
// CHECK-LABEL: func @identity
// CHECK-NEXT: return %arg0
func.func @identity(%a: tensor<64xf32, #dist.sharding<@m1, [{"x"}]>>) -> tensor<64xf32, #dist.sharding<@m1, [{"x"}]>> {
  %b = dist.reshard %a : tensor<64xf32, #dist.sharding<@m1, [{"x"}]>> -> tensor<64xf32, #dist.sharding<@m1, [{"x"}]>>
  return %b : tensor<64xf32, #dist.sharding<@m1, [{"x"}]>>
}

// The summary of the run.
// REMARK: remark: dist-lower-reshard: 15 reshards lowered, 0 cache hits, 14 cache misses, 18 collectives emitted
