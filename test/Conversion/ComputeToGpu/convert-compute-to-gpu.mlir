// RUN: dist-opt %s --convert-compute-to-gpu | FileCheck %s

// target=gpu's compute prepared for MLIR's GPU path: parallel loops, one
// collapsed dim, tiles of 256 mapped to blocks and threads.

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// A 2-D elementwise op: one 1-D launch over its 320 elements, tiles of 256
// to blocks, the tile to threads, a guard for the tail; the indices come
// back by division.
// CHECK-LABEL: func.func @elementwise
// CHECK: scf.parallel (%[[BLOCK:.*]]) =
// CHECK: scf.parallel (%[[THREAD:.*]]) =
// CHECK: %[[FLAT:.*]] = arith.addi %[[THREAD]], %[[BLOCK]] : index
// CHECK: scf.if
// CHECK-DAG: arith.remsi %[[FLAT]], %{{.*}} : index
// CHECK-DAG: arith.divsi %[[FLAT]], %{{.*}} : index
// CHECK: math.exp
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = thread_x
// CHECK: } {mapping = [#gpu.loop_dim_map<processor = block_x
func.func @elementwise(%a: memref<8x40xf32>, %b: memref<8x40xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<8x40xf32>) outs(%b : memref<8x40xf32>) {
  ^bb0(%x: f32, %y: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  return
}

// Rows in parallel, each thread summing its row; the mask on the padded
// columns (linalg.index) stays in the body.
// CHECK-LABEL: func.func @masked_rows
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.for %[[COL:.*]] =
// CHECK: arith.cmpi ult, %[[COL]], %{{.*}} : index
// CHECK: arith.select
func.func @masked_rows(%a: memref<8x40xf32>, %s: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<8x40xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %j = linalg.index 1 : index
    %c37 = arith.constant 37 : index
    %in = arith.cmpi ult, %j, %c37 : index
    %z = arith.constant 0.0 : f32
    %v = arith.select %in, %x, %z : f32
    %r = arith.addf %acc, %v : f32
    linalg.yield %r : f32
  }
  return
}

// No parallel dim: the whole reduction in one thread of one block.
// CHECK-LABEL: func.func @total
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: memref.load %{{.*}}[] : memref<f32>
func.func @total(%a: memref<40xf32>, %s: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%a : memref<40xf32>) outs(%s : memref<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  }
  return
}
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// A dense constant is host memory: a device copy is made where it is taken
// (16 bytes, host to device = 1) and freed at the end of the block.
// CHECK-LABEL: func.func @constant
// CHECK: %[[HOST:.*]] = memref.get_global @table
// CHECK: %[[DEVICE:.*]] = memref.alloc() : memref<4xf32>
// CHECK: memref.extract_aligned_pointer_as_index %[[HOST]]
// CHECK: call @distRtMemcpy(%{{.*}}, %{{.*}}, %c16_i64, %c1_i32
// CHECK: memref.load %[[DEVICE]]
// CHECK: memref.dealloc %[[DEVICE]]
func.func @constant(%b: memref<4xf32>) {
  %t = memref.get_global @table : memref<4xf32>
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%t : memref<4xf32>) outs(%b : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32):
    linalg.yield %x : f32
  }
  return
}

// Stack buffers (the runtime calls' argument tables) are host memory: the
// host writes them.
// CHECK-LABEL: func.func @host_tables
// CHECK: memref.store
// CHECK-NOT: scf.parallel
func.func @host_tables(%b: memref<4xf32>) {
  %t = memref.alloca() : memref<2xi64>
  %c0 = arith.constant 0 : index
  %v = arith.constant 7 : i64
  memref.store %v, %t[%c0] : memref<2xi64>
  return
}

// A constant only the host reads (a runtime call's table) stays where it is.
// CHECK-LABEL: func.func @host_table
// CHECK: memref.get_global @sizes
// CHECK-NOT: memref.alloc
// CHECK-NOT: distRtMemcpy
// CHECK: return
memref.global "private" constant @sizes : memref<2xi64> = dense<[4, 8]>
func.func @host_table(%b: memref<4xf32>) -> index {
  %t = memref.get_global @sizes : memref<2xi64>
  %p = memref.extract_aligned_pointer_as_index %t : memref<2xi64> -> index
  return %p : index
}
