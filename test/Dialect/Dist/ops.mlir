// RUN: dist-opt %s | dist-opt | FileCheck %s
// RUN: dist-opt %s --verify-roundtrip | FileCheck %s
// RUN: dist-opt %s -mlir-print-op-generic | dist-opt | FileCheck %s

// Meshes of rank 1 to 6, with and without device ids.
// CHECK: dist.mesh @m1 = <["x"=8]>
dist.mesh @m1 = <["x"=8]>
// CHECK: dist.mesh @m2 = <["x"=2, "y"=4]>
dist.mesh @m2 = <["x"=2, "y"=4]>
// CHECK: dist.mesh @m3 = <["x"=2, "y"=2, "z"=2]>
dist.mesh @m3 = <["x"=2, "y"=2, "z"=2]>
// CHECK: dist.mesh @m4 = <["a"=2, "b"=1, "c"=3, "d"=2]>
dist.mesh @m4 = <["a"=2, "b"=1, "c"=3, "d"=2]>
// CHECK: dist.mesh @m5 = <["a"=1, "b"=2, "c"=1, "d"=2, "e"=1]>
dist.mesh @m5 = <["a"=1, "b"=2, "c"=1, "d"=2, "e"=1]>
// CHECK: dist.mesh @m6 = <["a"=2, "b"=2, "c"=2, "d"=2, "e"=2, "f"=2]>
dist.mesh @m6 = <["a"=2, "b"=2, "c"=2, "d"=2, "e"=2, "f"=2]>
// CHECK: dist.mesh @ids = <["x"=2, "y"=2], devices = [3, 2, 1, 0]>
dist.mesh @ids = <["x"=2, "y"=2], devices = [3, 2, 1, 0]>
// CHECK: dist.mesh @single = <["x"=1]>
dist.mesh @single = <["x"=1]>
// Axis names are arbitrary strings.
// CHECK: dist.mesh @names = <["data parallel"=2, "tp.0"=2]>
dist.mesh @names = <["data parallel"=2, "tp.0"=2]>

// CHECK-LABEL: func @attribute_forms
// CHECK-SAME: tensor<16x16xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>>
// CHECK-SAME: tensor<16x16xf32, #dist.sharding<@m2, [{}, {}]>>
// CHECK-SAME: tensor<16x16xf32, #dist.sharding<@m2, [{"y", "x"}, {}]>>
// CHECK-SAME: tensor<16xf32, #dist.sharding<@m2, [{"x"}], partial = sum {"y"}>>
// CHECK-SAME: tensor<16xf32, #dist.sharding<@m2, [{}], partial = max {"x", "y"}>>
// CHECK-SAME: tensor<16xbf16, #dist.sharding<@m2, [{}], partial = min {"y"}>>
// CHECK-SAME: tensor<16xi32, #dist.sharding<@m2, [{}], partial = prod {"y"}>>
// CHECK-SAME: tensor<16xf64, #dist.sharding<@m2, [{}], partial = avg {"x"}>>
// CHECK-SAME: tensor<f32, #dist.sharding<@m2, [], partial = sum {"x"}>>
// CHECK-SAME: tensor<15x16xf32, #dist.sharding<@m2, [{"x", "y"}, {}]>>
// CHECK-SAME: tensor<2x3x5x7x11x13xf16, #dist.sharding<@m6, [{"a"}, {"b", "c"}, {}, {"d"}, {"e"}, {"f"}]>>
// CHECK-SAME: tensor<8x8xf32, #dist.sharding<@names, [{"data parallel"}, {"tp.0"}]>>
func.func @attribute_forms(
    %a: tensor<16x16xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>>,
    %b: tensor<16x16xf32, #dist.sharding<@m2, [{}, {}]>>,
    %c: tensor<16x16xf32, #dist.sharding<@m2, [{"y", "x"}, {}]>>,
    %d: tensor<16xf32, #dist.sharding<@m2, [{"x"}], partial = sum {"y"}>>,
    %e: tensor<16xf32, #dist.sharding<@m2, [{}], partial = max {"x", "y"}>>,
    %f: tensor<16xbf16, #dist.sharding<@m2, [{}], partial = min {"y"}>>,
    %g: tensor<16xi32, #dist.sharding<@m2, [{}], partial = prod {"y"}>>,
    %h: tensor<16xf64, #dist.sharding<@m2, [{}], partial = avg {"x"}>>,
    %i: tensor<f32, #dist.sharding<@m2, [], partial = sum {"x"}>>,
    %j: tensor<15x16xf32, #dist.sharding<@m2, [{"x", "y"}, {}]>>,
    %k: tensor<2x3x5x7x11x13xf16, #dist.sharding<@m6, [{"a"}, {"b", "c"}, {}, {"d"}, {"e"}, {"f"}]>>,
    %l: tensor<8x8xf32, #dist.sharding<@names, [{"data parallel"}, {"tp.0"}]>>) {
  return
}

// The standalone forms of the attributes.
// CHECK-LABEL: func @standalone_attributes
// CHECK: dist.test = #dist.dim<{"x", "y"}>
// CHECK: dist.test = #dist.dim<{}>
func.func @standalone_attributes() attributes {dist.test = #dist.dim<{"x", "y"}>} {
  return
}
func.func private @empty_dim() attributes {dist.test = #dist.dim<{}>}

// CHECK-LABEL: func @reshard
func.func @reshard(%arg0: tensor<1024x1024xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>>)
    -> tensor<1024x1024xf32, #dist.sharding<@m2, [{"y"}, {"x"}]>> {
  // CHECK: %[[R:.*]] = dist.reshard %{{.*}} : tensor<1024x1024xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>> -> tensor<1024x1024xf32, #dist.sharding<@m2, [{"y"}, {"x"}]>>
  %0 = dist.reshard %arg0 : tensor<1024x1024xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>>
                         -> tensor<1024x1024xf32, #dist.sharding<@m2, [{"y"}, {"x"}]>>
  // CHECK: return %[[R]]
  return %0 : tensor<1024x1024xf32, #dist.sharding<@m2, [{"y"}, {"x"}]>>
}

// CHECK-LABEL: func @collectives_2d
func.func @collectives_2d(%arg0: tensor<16x16xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>>) {
  // CHECK: %[[G:.*]] = dist.all_gather %{{.*}} axes = ["y"] dim = 1
  %g = dist.all_gather %arg0 axes = ["y"] dim = 1
      : tensor<16x16xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>>
     -> tensor<16x16xf32, #dist.sharding<@m2, [{"x"}, {}]>>
  // CHECK: dist.all_slice %[[G]] axes = ["y"] dim = 0
  %s = dist.all_slice %g axes = ["y"] dim = 0
      : tensor<16x16xf32, #dist.sharding<@m2, [{"x"}, {}]>>
     -> tensor<16x16xf32, #dist.sharding<@m2, [{"x", "y"}, {}]>>
  // CHECK: dist.all_to_all %{{.*}} axes = ["y"] dim = 0 to_dim = 1
  %t = dist.all_to_all %s axes = ["y"] dim = 0 to_dim = 1
      : tensor<16x16xf32, #dist.sharding<@m2, [{"x", "y"}, {}]>>
     -> tensor<16x16xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>>
  // Two axes at once: one collective over the 2x4 group.
  // CHECK: dist.all_gather %{{.*}} axes = ["x", "y"] dim = 0
  %g2 = dist.all_gather %s axes = ["x", "y"] dim = 0
      : tensor<16x16xf32, #dist.sharding<@m2, [{"x", "y"}, {}]>>
     -> tensor<16x16xf32, #dist.sharding<@m2, [{}, {}]>>
  return
}

// CHECK-LABEL: func @permutes
func.func @permutes(%arg0: tensor<16x16xf32, #dist.sharding<@m3, [{"x"}, {"y"}]>>,
                    %arg1: tensor<16xf32, #dist.sharding<@ids, [{"x", "y"}]>>) {
  // Swap which axes split which dims.
  // CHECK: dist.permute %{{.*}} axes = ["x", "y"]
  %p = dist.permute %arg0 axes = ["x", "y"]
      : tensor<16x16xf32, #dist.sharding<@m3, [{"x"}, {"y"}]>>
     -> tensor<16x16xf32, #dist.sharding<@m3, [{"y"}, {"x"}]>>
  // Reorder the axes of one dim.
  // CHECK: dist.permute %{{.*}} axes = ["x", "y"]
  %q = dist.permute %arg1 axes = ["x", "y"]
      : tensor<16xf32, #dist.sharding<@ids, [{"x", "y"}]>>
     -> tensor<16xf32, #dist.sharding<@ids, [{"y", "x"}]>>
  return
}

// Where only size-1 axes change place no coordinate changes: a permute over
// no axes relabels, and collectives may name size-1 axes alone.
// CHECK-LABEL: func @size_one_axes
func.func @size_one_axes(%arg0: tensor<16x8xf32, #dist.sharding<@m5, [{"b"}, {"d"}]>>) {
  // CHECK: dist.permute %{{.*}} axes = []
  // CHECK-SAME: -> tensor<16x8xf32, #dist.sharding<@m5, [{"a", "b"}, {"d", "c"}]>>
  %p = dist.permute %arg0 axes = []
      : tensor<16x8xf32, #dist.sharding<@m5, [{"b"}, {"d"}]>>
     -> tensor<16x8xf32, #dist.sharding<@m5, [{"a", "b"}, {"d", "c"}]>>
  // CHECK: dist.all_gather %{{.*}} axes = ["c"] dim = 1
  %g = dist.all_gather %p axes = ["c"] dim = 1
      : tensor<16x8xf32, #dist.sharding<@m5, [{"a", "b"}, {"d", "c"}]>>
     -> tensor<16x8xf32, #dist.sharding<@m5, [{"a", "b"}, {"d"}]>>
  // CHECK: dist.all_to_all %{{.*}} axes = ["e"] dim = 1 to_dim = 0
  %s = dist.all_slice %g axes = ["e"] dim = 1
      : tensor<16x8xf32, #dist.sharding<@m5, [{"a", "b"}, {"d"}]>>
     -> tensor<16x8xf32, #dist.sharding<@m5, [{"a", "b"}, {"d", "e"}]>>
  %t = dist.all_to_all %s axes = ["e"] dim = 1 to_dim = 0
      : tensor<16x8xf32, #dist.sharding<@m5, [{"a", "b"}, {"d", "e"}]>>
     -> tensor<16x8xf32, #dist.sharding<@m5, [{"a", "b", "e"}, {"d"}]>>
  return
}

// CHECK-LABEL: func @partial_moves
func.func @partial_moves(%arg0: tensor<16x8xf32, #dist.sharding<@m3, [{"x"}, {}], partial = sum {"y", "z"}>>,
                         %arg1: tensor<16x8xi32, #dist.sharding<@m3, [{}, {}], partial = max {"x"}>>) {
  // CHECK: dist.reduce_scatter %{{.*}} axes = ["y"] dim = 1 reduction = sum
  %rs = dist.reduce_scatter %arg0 axes = ["y"] dim = 1 reduction = sum
      : tensor<16x8xf32, #dist.sharding<@m3, [{"x"}, {}], partial = sum {"y", "z"}>>
     -> tensor<16x8xf32, #dist.sharding<@m3, [{"x"}, {"y"}], partial = sum {"z"}>>
  // CHECK: dist.all_reduce %{{.*}} axes = ["z"] reduction = sum
  %ar = dist.all_reduce %rs axes = ["z"] reduction = sum
      : tensor<16x8xf32, #dist.sharding<@m3, [{"x"}, {"y"}], partial = sum {"z"}>>
     -> tensor<16x8xf32, #dist.sharding<@m3, [{"x"}, {"y"}]>>
  // CHECK: dist.replicate_to_partial %{{.*}} axes = ["z"] reduction = sum
  %rp = dist.replicate_to_partial %ar axes = ["z"] reduction = sum
      : tensor<16x8xf32, #dist.sharding<@m3, [{"x"}, {"y"}]>>
     -> tensor<16x8xf32, #dist.sharding<@m3, [{"x"}, {"y"}], partial = sum {"z"}>>
  // CHECK: dist.all_reduce %{{.*}} axes = ["x"] reduction = max
  %mx = dist.all_reduce %arg1 axes = ["x"] reduction = max
      : tensor<16x8xi32, #dist.sharding<@m3, [{}, {}], partial = max {"x"}>>
     -> tensor<16x8xi32, #dist.sharding<@m3, [{}, {}]>>
  // Several partial axes reduced by one collective.
  // CHECK: dist.all_reduce %{{.*}} axes = ["y", "z"] reduction = sum
  %both = dist.all_reduce %arg0 axes = ["y", "z"] reduction = sum
      : tensor<16x8xf32, #dist.sharding<@m3, [{"x"}, {}], partial = sum {"y", "z"}>>
     -> tensor<16x8xf32, #dist.sharding<@m3, [{"x"}, {}]>>
  return
}

// Uneven shapes: 15 rows on 4 shards (blocks of 4, the last one padded).
// CHECK-LABEL: func @uneven
func.func @uneven(%arg0: tensor<15x16xf32, #dist.sharding<@m2, [{"y"}, {}]>>) {
  // CHECK: dist.all_to_all %{{.*}} axes = ["y"] dim = 0 to_dim = 1
  %0 = dist.all_to_all %arg0 axes = ["y"] dim = 0 to_dim = 1
      : tensor<15x16xf32, #dist.sharding<@m2, [{"y"}, {}]>>
     -> tensor<15x16xf32, #dist.sharding<@m2, [{}, {"y"}]>>
  // CHECK: dist.all_gather %{{.*}} axes = ["y"] dim = 1
  %1 = dist.all_gather %0 axes = ["y"] dim = 1
      : tensor<15x16xf32, #dist.sharding<@m2, [{}, {"y"}]>>
     -> tensor<15x16xf32, #dist.sharding<@m2, [{}, {}]>>
  return
}

// Device ids and a 6-D mesh.
// CHECK-LABEL: func @device_ids_and_6d
func.func @device_ids_and_6d(%arg0: tensor<4x4xf32, #dist.sharding<@ids, [{"x"}, {"y"}]>>,
                             %arg1: tensor<8x8x8xf32, #dist.sharding<@m6, [{"a", "b"}, {"c"}, {"d", "e", "f"}]>>) {
  // CHECK: dist.all_to_all %{{.*}} axes = ["y"] dim = 1 to_dim = 0
  %0 = dist.all_to_all %arg0 axes = ["y"] dim = 1 to_dim = 0
      : tensor<4x4xf32, #dist.sharding<@ids, [{"x"}, {"y"}]>>
     -> tensor<4x4xf32, #dist.sharding<@ids, [{"x", "y"}, {}]>>
  // CHECK: dist.all_gather %{{.*}} axes = ["e", "f"] dim = 2
  %1 = dist.all_gather %arg1 axes = ["e", "f"] dim = 2
      : tensor<8x8x8xf32, #dist.sharding<@m6, [{"a", "b"}, {"c"}, {"d", "e", "f"}]>>
     -> tensor<8x8x8xf32, #dist.sharding<@m6, [{"a", "b"}, {"c"}, {"d"}]>>
  return
}

// The per-device forms produced by dist-localize.
// CHECK-LABEL: func @local_collectives
func.func @local_collectives(%arg0: tensor<8x4xf32>, %arg1: tensor<16x16xbf16>) {
  // CHECK: dist.local.all_gather %{{.*}} on @m2 axes = ["y"] dim = 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  %0 = dist.local.all_gather %arg0 on @m2 axes = ["y"] dim = 1 : tensor<8x4xf32> -> tensor<8x16xf32>
  // CHECK: dist.local.all_slice %{{.*}} on @m2 axes = ["x"] dim = 0 : tensor<8x16xf32> -> tensor<4x16xf32>
  %1 = dist.local.all_slice %0 on @m2 axes = ["x"] dim = 0 : tensor<8x16xf32> -> tensor<4x16xf32>
  // CHECK: dist.local.all_to_all %{{.*}} on @m2 axes = ["y"] dim = 0 to_dim = 1 : tensor<4x16xf32> -> tensor<16x4xf32>
  %2 = dist.local.all_to_all %1 on @m2 axes = ["y"] dim = 0 to_dim = 1 : tensor<4x16xf32> -> tensor<16x4xf32>
  // CHECK: dist.local.reduce_scatter %{{.*}} on @m3 axes = ["x", "y"] dim = 0 reduction = avg : tensor<16x16xbf16> -> tensor<4x16xbf16>
  %3 = dist.local.reduce_scatter %arg1 on @m3 axes = ["x", "y"] dim = 0 reduction = avg : tensor<16x16xbf16> -> tensor<4x16xbf16>
  // CHECK: dist.local.all_reduce %{{.*}} on @m3 axes = ["z"] reduction = min : tensor<16x16xbf16> -> tensor<16x16xbf16>
  %4 = dist.local.all_reduce %arg1 on @m3 axes = ["z"] reduction = min : tensor<16x16xbf16> -> tensor<16x16xbf16>
  // CHECK: dist.local.replicate_to_partial %{{.*}} on @m3 axes = ["z"] reduction = prod : tensor<16x16xbf16> -> tensor<16x16xbf16>
  %5 = dist.local.replicate_to_partial %4 on @m3 axes = ["z"] reduction = prod : tensor<16x16xbf16> -> tensor<16x16xbf16>
  // CHECK: dist.local.permute %{{.*}} on @ids sources = [0, 2, 1, 3] : tensor<8x4xf32> -> tensor<8x4xf32>
  %6 = dist.local.permute %arg0 on @ids sources = [0, 2, 1, 3] : tensor<8x4xf32> -> tensor<8x4xf32>
  // CHECK: dist.local.shard_index on @m3 axes = ["x", "z"] : index
  %7 = dist.local.shard_index on @m3 axes = ["x", "z"] : index
  return
}

// A mesh with its own cost parameters.
// CHECK: dist.mesh @cluster = <["node"=4, "gpu"=8]> {cost = {gpu = {alpha = 1.000000e-05 : f64, beta = 2.700000e-12 : f64}, node = {alpha = 2.000000e-05 : f64, beta = 4.000000e-11 : f64}}}
dist.mesh @cluster = <["node"=4, "gpu"=8]> {cost = {node = {alpha = 2.0e-05 : f64, beta = 4.0e-11 : f64}, gpu = {alpha = 1.0e-05 : f64, beta = 2.7e-12 : f64}}}

// The buffer forms produced by bufferization.
// CHECK-LABEL: func @buffer_collectives
func.func @buffer_collectives(%a: memref<8x4xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>, %d: memref<16x4xf32>) {
  // CHECK: dist.buffer.all_gather %{{.*}}, %{{.*}} on @m2 axes = ["y"] dim = 1 : memref<8x4xf32>, memref<8x16xf32>
  dist.buffer.all_gather %a, %b on @m2 axes = ["y"] dim = 1 : memref<8x4xf32>, memref<8x16xf32>
  // CHECK: dist.buffer.all_slice %{{.*}}, %{{.*}} on @m2 axes = ["x"] dim = 0 : memref<8x16xf32>, memref<4x16xf32>
  dist.buffer.all_slice %b, %c on @m2 axes = ["x"] dim = 0 : memref<8x16xf32>, memref<4x16xf32>
  // CHECK: dist.buffer.all_to_all %{{.*}}, %{{.*}} on @m2 axes = ["y"] dim = 0 to_dim = 1 : memref<4x16xf32>, memref<16x4xf32>
  dist.buffer.all_to_all %c, %d on @m2 axes = ["y"] dim = 0 to_dim = 1 : memref<4x16xf32>, memref<16x4xf32>
  // CHECK: dist.buffer.reduce_scatter %{{.*}}, %{{.*}} on @m2 axes = ["x"] dim = 0 reduction = sum : memref<8x16xf32>, memref<4x16xf32>
  dist.buffer.reduce_scatter %b, %c on @m2 axes = ["x"] dim = 0 reduction = sum : memref<8x16xf32>, memref<4x16xf32>
  // CHECK: dist.buffer.all_reduce %{{.*}}, %{{.*}} on @m2 axes = ["x"] reduction = max : memref<8x4xf32>, memref<8x4xf32>
  dist.buffer.all_reduce %a, %a on @m2 axes = ["x"] reduction = max : memref<8x4xf32>, memref<8x4xf32>
  // CHECK: dist.buffer.replicate_to_partial %{{.*}}, %{{.*}} on @m2 axes = ["y"] reduction = sum : memref<8x4xf32>, memref<8x4xf32>
  dist.buffer.replicate_to_partial %a, %a on @m2 axes = ["y"] reduction = sum : memref<8x4xf32>, memref<8x4xf32>
  // CHECK: dist.buffer.permute %{{.*}}, %{{.*}} on @ids sources = [1, 0, 3, 2] : memref<8x4xf32>, memref<8x4xf32>
  dist.buffer.permute %a, %a on @ids sources = [1, 0, 3, 2] : memref<8x4xf32>, memref<8x4xf32>
  // CHECK: dist.buffer.redistribute %{{.*}}, %{{.*}} from @stage0 to @stage1 table = [0, 4, 0, 0, 0, 0, 8, 4] : memref<8x4xf32>, memref<8x4xf32>
  dist.buffer.redistribute %a, %a from @stage0 to @stage1 table = [0, 4, 0, 0, 0, 0, 8, 4] : memref<8x4xf32>, memref<8x4xf32>
  return
}

// Pipeline stages: meshes on disjoint world ranks (semantics §1), a reshard from
// one to the other, and point-to-point redistribute steps (semantics §3, §3a).
// CHECK: dist.mesh @stage0 = <["tp"=4], devices = [0, 1, 2, 3]>
dist.mesh @stage0 = <["tp"=4], devices = [0, 1, 2, 3]>
// CHECK: dist.mesh @stage1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>
dist.mesh @stage1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>

// CHECK-LABEL: func @point_to_point
func.func @point_to_point(%a: tensor<16x8xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>, %b: tensor<16x8xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>>) {
  // CHECK: dist.reshard %{{.*}} : tensor<16x8xf32, #dist.sharding<@stage0, [{"tp"}, {}]>> -> tensor<16x8xf32, #dist.sharding<@stage1, [{}, {"tp"}]>>
  %0 = dist.reshard %a : tensor<16x8xf32, #dist.sharding<@stage0, [{"tp"}, {}]>> -> tensor<16x8xf32, #dist.sharding<@stage1, [{}, {"tp"}]>>
  // CHECK: dist.redistribute %{{.*}} : tensor<16x8xf32, #dist.sharding<@stage0, [{"tp"}, {}]>> -> tensor<16x8xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>>
  %1 = dist.redistribute %a : tensor<16x8xf32, #dist.sharding<@stage0, [{"tp"}, {}]>> -> tensor<16x8xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>>
  // CHECK: dist.redistribute %{{.*}} : tensor<16x8xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>> -> tensor<16x8xf32, #dist.sharding<@m2, [{"y"}, {"x"}]>>
  %2 = dist.redistribute %b : tensor<16x8xf32, #dist.sharding<@m2, [{"x"}, {"y"}]>> -> tensor<16x8xf32, #dist.sharding<@m2, [{"y"}, {"x"}]>>
  return
}

// CHECK-LABEL: func @local_point_to_point
func.func @local_point_to_point(%a: tensor<4x8xf32>) -> tensor<16x4xf32> {
  // CHECK: dist.local.redistribute %{{.*}} from @stage0 to @stage1 table = [0, 4, 0, 0, 0, 0, 4, 4, 1, 4, 0, 0, 4, 0, 4, 4] : tensor<4x8xf32> -> tensor<16x4xf32>
  %0 = dist.local.redistribute %a from @stage0 to @stage1 table = [0, 4, 0, 0, 0, 0, 4, 4, 1, 4, 0, 0, 4, 0, 4, 4] : tensor<4x8xf32> -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}

// Interleaved dims (semantics §2 segments): a fused QKV weight, rank r holding
// [Q_r; K_r; V_r]. Segments on a dim without axes, or a single segment, are
// dropped (canonical form).
// CHECK-LABEL: func @segments
// CHECK-SAME: tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>>
// CHECK: dist.redistribute %{{.*}} : tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>> -> tensor<24x8xf32, #dist.sharding<@m2, [{"y"}, {}]>>
func.func @segments(%a: tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {} segments [4, 4]]>>) {
  %0 = dist.redistribute %a : tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>> -> tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [24], {}]>>
  return
}

// Collectives on interleaved dims work per segment and keep the segments; a
// split onto a dim without axes may give it segments.
// CHECK-LABEL: func @segmented_collectives
// CHECK: dist.all_gather %{{.*}} axes = ["y"] dim = 0 : tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>> -> tensor<24x8xf32, #dist.sharding<@m2, [{}, {}]>>
// CHECK: dist.all_slice %{{.*}} axes = ["y"] dim = 0 : tensor<24x8xf32, #dist.sharding<@m2, [{}, {}]>> -> tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>>
// CHECK: dist.reduce_scatter %{{.*}} axes = ["y"] dim = 0 reduction = sum : tensor<24x8xf32, #dist.sharding<@m2, [{}, {}], partial = sum {"y"}>> -> tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>>
// CHECK: dist.all_to_all %{{.*}} axes = ["y"] dim = 1 to_dim = 0 : tensor<24x8xf32, #dist.sharding<@m2, [{}, {"y"}]>> -> tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>>
func.func @segmented_collectives(%a: tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>>,
                                 %p: tensor<24x8xf32, #dist.sharding<@m2, [{}, {}], partial = sum {"y"}>>,
                                 %c: tensor<24x8xf32, #dist.sharding<@m2, [{}, {"y"}]>>) {
  %0 = dist.all_gather %a axes = ["y"] dim = 0 : tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>> -> tensor<24x8xf32, #dist.sharding<@m2, [{}, {}]>>
  %1 = dist.all_slice %0 axes = ["y"] dim = 0 : tensor<24x8xf32, #dist.sharding<@m2, [{}, {}]>> -> tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>>
  %2 = dist.reduce_scatter %p axes = ["y"] dim = 0 reduction = sum : tensor<24x8xf32, #dist.sharding<@m2, [{}, {}], partial = sum {"y"}>> -> tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>>
  %3 = dist.all_to_all %c axes = ["y"] dim = 1 to_dim = 0 : tensor<24x8xf32, #dist.sharding<@m2, [{}, {"y"}]>> -> tensor<24x8xf32, #dist.sharding<@m2, [{"y"} segments [16, 4, 4], {}]>>
  return
}

// CHECK-LABEL: func @segment_packing
// CHECK: dist.local.pack_segments %{{.*}} dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : tensor<12x3xf32> -> tensor<12x3xf32>
// CHECK: dist.local.unpack_segments %{{.*}} dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : tensor<12x3xf32> -> tensor<12x3xf32>
// CHECK: dist.buffer.pack_segments %{{.*}}, %{{.*}} dim = 1 blocks = [3, 3] pieces = [2, 2] parts = 2 : memref<2x6xi32>, memref<2x8xi32>
func.func @segment_packing(%a: tensor<12x3xf32>, %m: memref<2x6xi32>, %n: memref<2x8xi32>) {
  %0 = dist.local.pack_segments %a dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : tensor<12x3xf32> -> tensor<12x3xf32>
  %1 = dist.local.unpack_segments %0 dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : tensor<12x3xf32> -> tensor<12x3xf32>
  dist.buffer.pack_segments %m, %n dim = 1 blocks = [3, 3] pieces = [2, 2] parts = 2 : memref<2x6xi32>, memref<2x8xi32>
  return
}

// A permute that names the layouts instead of a table (large meshes).
// CHECK-LABEL: func @permute_by_layouts
// CHECK: dist.local.permute %{{.*}} on @m2 dim_axes = [1, 0, 1, 0, 1, 1, 1, 1] : tensor<4x4xf32> -> tensor<4x4xf32>
// CHECK: dist.buffer.permute %{{.*}}, %{{.*}} on @m2 dim_axes = [1, 0, 1, 0, 1, 1, 1, 1] : memref<4x4xf32>, memref<4x4xf32>
func.func @permute_by_layouts(%a: tensor<4x4xf32>, %m: memref<4x4xf32>, %n: memref<4x4xf32>) {
  %0 = dist.local.permute %a on @m2 dim_axes = [1, 0, 1, 0, 1, 1, 1, 1] : tensor<4x4xf32> -> tensor<4x4xf32>
  dist.buffer.permute %m, %n on @m2 dim_axes = [1, 0, 1, 0, 1, 1, 1, 1] : memref<4x4xf32>, memref<4x4xf32>
  return
}
