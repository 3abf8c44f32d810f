// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s
// RUN: dist-opt %s --dist-lower-reshard="strategy=greedy" | FileCheck %s --check-prefix=GREEDY
// The lowered IR must verify again on its own.
// RUN: dist-opt %s --dist-lower-reshard | dist-opt --verify-roundtrip | FileCheck %s

// On meshes with size-1 axes, layout changes that move no data.
// Where no collective does the change, the plan is a permute over no axes
// (a relabelling the verifier used to reject); where one does, the plan is
// that collective over the size-1 axes alone. Every step verifies.
// CHECK-NOT: dist.reshard
// GREEDY-NOT: dist.reshard

dist.mesh @u = <["tp"=1, "x"=2]>
dist.mesh @ones = <["a"=1, "b"=1]>

// CHECK-LABEL: func @before_x
// CHECK-SAME: (%[[A:.*]]: tensor
// CHECK: %[[P:.*]] = dist.permute %[[A]] axes = []
// CHECK-SAME: -> tensor<8xf32, #dist.sharding<@u, [{"tp", "x"}]>>
// CHECK: return %[[P]]
// GREEDY-LABEL: func @before_x
// GREEDY: dist.permute %{{.*}} axes = []
func.func @before_x(%a: tensor<8xf32, #dist.sharding<@u, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@u, [{"tp", "x"}]>> {
  %b = dist.reshard %a : tensor<8xf32, #dist.sharding<@u, [{"x"}]>> -> tensor<8xf32, #dist.sharding<@u, [{"tp", "x"}]>>
  return %b : tensor<8xf32, #dist.sharding<@u, [{"tp", "x"}]>>
}

// CHECK-LABEL: func @after_x
// CHECK: dist.all_slice %{{.*}} axes = ["tp"] dim = 0
func.func @after_x(%a: tensor<8xf32, #dist.sharding<@u, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@u, [{"x", "tp"}]>> {
  %b = dist.reshard %a : tensor<8xf32, #dist.sharding<@u, [{"x"}]>> -> tensor<8xf32, #dist.sharding<@u, [{"x", "tp"}]>>
  return %b : tensor<8xf32, #dist.sharding<@u, [{"x", "tp"}]>>
}

// CHECK-LABEL: func @drop_minor
// CHECK: dist.all_gather %{{.*}} axes = ["tp"] dim = 0
func.func @drop_minor(%a: tensor<8xf32, #dist.sharding<@u, [{"x", "tp"}]>>) -> tensor<8xf32, #dist.sharding<@u, [{"x"}]>> {
  %b = dist.reshard %a : tensor<8xf32, #dist.sharding<@u, [{"x", "tp"}]>> -> tensor<8xf32, #dist.sharding<@u, [{"x"}]>>
  return %b : tensor<8xf32, #dist.sharding<@u, [{"x"}]>>
}

// CHECK-LABEL: func @unit_partial
// CHECK: dist.all_reduce %{{.*}} axes = ["tp"] reduction = sum
func.func @unit_partial(%a: tensor<8xf32, #dist.sharding<@u, [{"x"}], partial = sum {"tp"}>>) -> tensor<8xf32, #dist.sharding<@u, [{"x"}]>> {
  %b = dist.reshard %a : tensor<8xf32, #dist.sharding<@u, [{"x"}], partial = sum {"tp"}>> -> tensor<8xf32, #dist.sharding<@u, [{"x"}]>>
  return %b : tensor<8xf32, #dist.sharding<@u, [{"x"}]>>
}

// A mesh of size-1 axes only: any two layouts of the same partial axes
// hold the same data everywhere.
// CHECK-LABEL: func @only_size_one
// CHECK: %[[P:.*]] = dist.permute %{{.*}} axes = []
// CHECK-SAME: -> tensor<4x4xf32, #dist.sharding<@ones, [{"b"}, {"a"}]>>
// CHECK: return %[[P]]
func.func @only_size_one(%a: tensor<4x4xf32, #dist.sharding<@ones, [{"a"}, {"b"}]>>) -> tensor<4x4xf32, #dist.sharding<@ones, [{"b"}, {"a"}]>> {
  %b = dist.reshard %a : tensor<4x4xf32, #dist.sharding<@ones, [{"a"}, {"b"}]>> -> tensor<4x4xf32, #dist.sharding<@ones, [{"b"}, {"a"}]>>
  return %b : tensor<4x4xf32, #dist.sharding<@ones, [{"b"}, {"a"}]>>
}
