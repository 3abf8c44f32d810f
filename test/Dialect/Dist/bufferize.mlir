// RUN: dist-opt %s --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" | FileCheck %s

dist.mesh @m = <["x"=2, "y"=2]>

// Each local op gets a fresh contiguous output buffer and its buffer form.
// CHECK-LABEL: func @chain
// CHECK-SAME: (%[[IN:.*]]: memref<3x6xf32>) -> memref<5x3xf32>
// CHECK: %[[G:.*]] = memref.alloc() : memref<10x6xf32>
// CHECK: dist.buffer.all_gather %[[IN]], %[[G]] on @m axes = ["x", "y"] dim = 0 : memref<3x6xf32>, memref<10x6xf32>
// CHECK: %[[S:.*]] = memref.alloc() : memref<5x6xf32>
// CHECK: dist.buffer.all_slice %[[G]], %[[S]] on @m axes = ["x"] dim = 0
// CHECK: %[[T:.*]] = memref.alloc() : memref<5x3xf32>
// CHECK: dist.buffer.all_slice %[[S]], %[[T]] on @m axes = ["y"] dim = 1
// CHECK: return %[[T]]
func.func @chain(%a: tensor<3x6xf32>) -> tensor<5x3xf32> {
  %0 = dist.local.all_gather %a on @m axes = ["x", "y"] dim = 0 : tensor<3x6xf32> -> tensor<10x6xf32>
  %1 = dist.local.all_slice %0 on @m axes = ["x"] dim = 0 : tensor<10x6xf32> -> tensor<5x6xf32>
  %2 = dist.local.all_slice %1 on @m axes = ["y"] dim = 1 : tensor<5x6xf32> -> tensor<5x3xf32>
  return %2 : tensor<5x3xf32>
}

// The runtime needs contiguous buffers: a strided view is copied first.
// CHECK-LABEL: func @strided_input
// CHECK: %[[VIEW:.*]] = memref.subview
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<4x2xf32>
// CHECK: memref.copy %[[VIEW]], %[[COPY]]
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x2xf32>
// CHECK: dist.buffer.all_reduce %[[COPY]], %[[OUT]] on @m axes = ["x"] reduction = sum
func.func @strided_input(%a: tensor<4x4xf32>) -> tensor<4x2xf32> {
  %s = tensor.extract_slice %a[0, 1] [4, 2] [1, 1] : tensor<4x4xf32> to tensor<4x2xf32>
  %r = dist.local.all_reduce %s on @m axes = ["x"] reduction = sum : tensor<4x2xf32> -> tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}

// CHECK-LABEL: func @every_op
func.func @every_op(%a: tensor<4x4xbf16>) {
  // CHECK: dist.buffer.all_to_all %{{.*}}, %{{.*}} on @m axes = ["y"] dim = 0 to_dim = 1 : memref<4x4xbf16>, memref<8x2xbf16>
  %0 = dist.local.all_to_all %a on @m axes = ["y"] dim = 0 to_dim = 1 : tensor<4x4xbf16> -> tensor<8x2xbf16>
  // CHECK: dist.buffer.reduce_scatter %{{.*}}, %{{.*}} on @m axes = ["x"] dim = 0 reduction = avg : memref<4x4xbf16>, memref<2x4xbf16>
  %1 = dist.local.reduce_scatter %a on @m axes = ["x"] dim = 0 reduction = avg : tensor<4x4xbf16> -> tensor<2x4xbf16>
  // CHECK: dist.buffer.replicate_to_partial %{{.*}}, %{{.*}} on @m axes = ["y"] reduction = prod
  %2 = dist.local.replicate_to_partial %a on @m axes = ["y"] reduction = prod : tensor<4x4xbf16> -> tensor<4x4xbf16>
  // CHECK: dist.buffer.permute %{{.*}}, %{{.*}} on @m sources = [0, 2, 1, 3]
  %3 = dist.local.permute %a on @m sources = [0, 2, 1, 3] : tensor<4x4xbf16> -> tensor<4x4xbf16>
  // CHECK: dist.buffer.pack_segments %{{.*}}, %{{.*}} dim = 0 blocks = [3, 1] pieces = [2, 1] parts = 2 : memref<4x4xbf16>, memref<6x4xbf16>
  %4 = dist.local.pack_segments %a dim = 0 blocks = [3, 1] pieces = [2, 1] parts = 2 : tensor<4x4xbf16> -> tensor<6x4xbf16>
  // CHECK: dist.buffer.unpack_segments %{{.*}}, %{{.*}} dim = 0 blocks = [3, 1] pieces = [2, 1] parts = 2 : memref<6x4xbf16>, memref<4x4xbf16>
  %5 = dist.local.unpack_segments %4 dim = 0 blocks = [3, 1] pieces = [2, 1] parts = 2 : tensor<6x4xbf16> -> tensor<4x4xbf16>
  return
}
