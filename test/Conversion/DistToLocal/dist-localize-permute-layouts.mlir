// Permutes on meshes larger than permute-table-devices (default 4096) carry
// the two layouts instead of a rank-to-rank table: the IR and compile time do
// not grow with the mesh. On 2^25 devices this runs at once (a table would be
// 32 M entries).
// RUN: dist-opt %s --dist-localize | FileCheck %s
// RUN: dist-opt %s --dist-localize | dist-opt --verify-roundtrip > /dev/null
// RUN: dist-opt %s --dist-localize=permute-table-devices=0 | FileCheck %s --check-prefix=ALWAYS

dist.mesh @huge = <["x"=4096, "y"=4096, "z"=2]>
dist.mesh @small = <["a"=2, "b"=2]>

// Per dim: the source's axes, then the target's (count, axis indices).
// CHECK-LABEL: func @huge_swap
// CHECK: dist.local.permute %{{.*}} on @huge dim_axes = [1, 0, 1, 1, 1, 1, 1, 0] : tensor<2x2xf32> -> tensor<2x2xf32>
func.func @huge_swap(%a: tensor<8192x8192xf32, #dist.sharding<@huge, [{"x"}, {"y"}]>>)
    -> tensor<8192x8192xf32, #dist.sharding<@huge, [{"y"}, {"x"}]>> {
  %0 = dist.permute %a axes = ["x", "y"] : tensor<8192x8192xf32, #dist.sharding<@huge, [{"x"}, {"y"}]>> -> tensor<8192x8192xf32, #dist.sharding<@huge, [{"y"}, {"x"}]>>
  return %0 : tensor<8192x8192xf32, #dist.sharding<@huge, [{"y"}, {"x"}]>>
}

// A small mesh keeps its table, unless asked otherwise.
// CHECK-LABEL: func @small_swap
// CHECK: dist.local.permute %{{.*}} on @small sources = [0, 2, 1, 3]
// ALWAYS-LABEL: func @small_swap
// ALWAYS: dist.local.permute %{{.*}} on @small dim_axes = [1, 0, 1, 1, 1, 1, 1, 0]
func.func @small_swap(%a: tensor<8x8xf32, #dist.sharding<@small, [{"a"}, {"b"}]>>)
    -> tensor<8x8xf32, #dist.sharding<@small, [{"b"}, {"a"}]>> {
  %0 = dist.permute %a axes = ["a", "b"] : tensor<8x8xf32, #dist.sharding<@small, [{"a"}, {"b"}]>> -> tensor<8x8xf32, #dist.sharding<@small, [{"b"}, {"a"}]>>
  return %0 : tensor<8x8xf32, #dist.sharding<@small, [{"b"}, {"a"}]>>
}
