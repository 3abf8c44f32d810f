// RUN: dist-opt %s --allow-unregistered-dialect --dist-distinct-result-buffers --split-input-file | FileCheck %s

// An allocation returned twice was hoisted into two out-params by
// buffer-results-to-out-params, which erased it twice and crashed. Each
// repeat now gets a buffer of its own, a copy of the first.

// CHECK-LABEL: func @twice
// CHECK: %[[A:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK: "test.fill"(%[[A]])
// CHECK: %[[C:.*]] = memref.alloc() : memref<8x4xf32>
// CHECK: memref.copy %[[A]], %[[C]] : memref<8x4xf32> to memref<8x4xf32>
// CHECK: return %[[A]], %[[C]]
func.func @twice() -> (memref<8x4xf32>, memref<8x4xf32>) {
  %a = memref.alloc() : memref<8x4xf32>
  "test.fill"(%a) : (memref<8x4xf32>) -> ()
  return %a, %a : memref<8x4xf32>, memref<8x4xf32>
}

// -----

// Three times, around another result and an argument returned twice; the
// first occurrence of each stays.
// CHECK-LABEL: func @mixed
// CHECK-SAME: (%[[ARG:.*]]: memref<2xi32>)
// CHECK-DAG: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-DAG: %[[B:.*]] = memref.alloc() : memref<3xf32>
// CHECK: %[[A2:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[A2]]
// CHECK: %[[ARG2:.*]] = memref.alloc() : memref<2xi32>
// CHECK: memref.copy %[[ARG]], %[[ARG2]]
// CHECK: %[[A3:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.copy %[[A]], %[[A3]]
// CHECK: return %[[A]], %[[B]], %[[ARG]], %[[A2]], %[[ARG2]], %[[A3]]
func.func @mixed(%arg: memref<2xi32>) -> (memref<4xf32>, memref<3xf32>, memref<2xi32>, memref<4xf32>, memref<2xi32>, memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<3xf32>
  return %a, %b, %arg, %a, %arg, %a : memref<4xf32>, memref<3xf32>, memref<2xi32>, memref<4xf32>, memref<2xi32>, memref<4xf32>
}

// -----

// Dynamic extents are read from the buffer.
// CHECK-LABEL: func @dynamic
// CHECK-SAME: (%[[N:.*]]: index)
// CHECK: %[[A:.*]] = memref.alloc(%[[N]]) : memref<?x4xf32>
// CHECK: %[[D:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x4xf32>
// CHECK: %[[C:.*]] = memref.alloc(%[[D]]) : memref<?x4xf32>
// CHECK: memref.copy %[[A]], %[[C]]
// CHECK: return %[[A]], %[[C]]
func.func @dynamic(%n: index) -> (memref<?x4xf32>, memref<?x4xf32>) {
  %a = memref.alloc(%n) : memref<?x4xf32>
  return %a, %a : memref<?x4xf32>, memref<?x4xf32>
}

// -----

// Distinct buffers, scalars, and buffers with a layout (never hoisted: the
// out-param promotion copies them) stay as they are.
// CHECK-LABEL: func @unchanged
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: return %arg0, %arg1, %arg2, %arg2, %arg3, %arg3
func.func @unchanged(%a: memref<4xf32>, %b: memref<4xf32>, %s: f32,
                     %v: memref<4xf32, strided<[2]>>)
    -> (memref<4xf32>, memref<4xf32>, f32, f32, memref<4xf32, strided<[2]>>, memref<4xf32, strided<[2]>>) {
  return %a, %b, %s, %s, %v, %v : memref<4xf32>, memref<4xf32>, f32, f32, memref<4xf32, strided<[2]>>, memref<4xf32, strided<[2]>>
}
