// RUN: dist-opt %s --convert-dist-to-runtime="target=gpu" --split-input-file | FileCheck %s

dist.mesh @m = <["x"=2, "y"=4]>

// One stream per function, fetched at its entry; every call is enqueued on
// it, and local data movement uses the runtime's kernels instead of linalg.
// CHECK-LABEL: func @gather_unpack
// CHECK-NEXT: %[[S:.*]] = call @distRtDefaultStream() : () -> !llvm.ptr
// CHECK: call @distRtAllGather(%{{.*}}, %{{.*}}, %{{.*}}, %c32_i64, %c2_i32, %[[S]])
// CHECK: scf.for
// CHECK:   memref.extract_strided_metadata
// CHECK:   call @distRtCopyStrided(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2_i32{{.*}}, %[[S]])
// CHECK-NOT: linalg.
func.func @gather_unpack(%in: memref<8x4xf32>, %out: memref<8x16xf32>) {
  dist.buffer.all_gather %in, %out on @m axes = ["y"] dim = 1 : memref<8x4xf32>, memref<8x16xf32>
  dist.buffer.all_reduce %out, %out on @m axes = ["x"] reduction = sum : memref<8x16xf32>, memref<8x16xf32>
  return
}

// Zero padding uses the runtime's fill.
// CHECK-LABEL: func @reduce_scatter_pad
// CHECK: %[[S:.*]] = call @distRtDefaultStream()
// CHECK: call @distRtFillZero(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c4_i32{{.*}}, %[[S]])
// CHECK: call @distRtReduceScatter(%{{.*}}, %{{.*}}, %{{.*}}, %c3_i64, %c4_i32{{.*}}, %c0_i32{{.*}}, %[[S]])
func.func @reduce_scatter_pad(%in: memref<10xi32>, %out: memref<3xi32>) {
  dist.buffer.reduce_scatter %in, %out on @m axes = ["y"] dim = 0 reduction = sum : memref<10xi32>, memref<3xi32>
  return
}

// -----

dist.mesh @m = <["x"=2]>

// A fill with 1 (the identity of prod): one element copied to backend
// memory, then broadcast by a stride-0 copy.
// CHECK-DAG: memref.global "private" constant @[[ONE:__dist_scalar_[0-9]+]] : memref<1xbf16> = dense<1.000000e+00>
// CHECK-LABEL: func @replicate_to_partial_prod
// CHECK: scf.if
// CHECK:   call @distRtCopyStrided
// CHECK: } else {
// CHECK:   %[[SCALAR:.*]] = memref.alloc() : memref<1xbf16>
// CHECK:   memref.get_global @[[ONE]]
// CHECK:   call @distRtMemcpy(%{{.*}}, %{{.*}}, %c2_i64, %c1_i32, %{{.*}})
// CHECK:   call @distRtCopyStrided
// CHECK:   memref.dealloc %[[SCALAR]]
func.func @replicate_to_partial_prod(%in: memref<8xbf16>, %out: memref<8xbf16>) {
  dist.buffer.replicate_to_partial %in, %out on @m axes = ["x"] reduction = prod : memref<8xbf16>, memref<8xbf16>
  return
}

// Buffer copies left by bufferization are device copies on the stream.
// CHECK-LABEL: func @copy
// CHECK-NOT: memref.copy
// CHECK: call @distRtCopyStrided
func.func @copy(%a: memref<4x4xf32>, %b: memref<4x4xf32>) {
  memref.copy %a, %b : memref<4x4xf32> to memref<4x4xf32>
  return
}

// -----

// Segment packing on the device: a zero fill, then one strided copy per
// piece (two segments x two members), all on the stream.
// CHECK-LABEL: func @pack_segments
// CHECK: %[[S:.*]] = call @distRtDefaultStream()
// CHECK: call @distRtFillZero(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S]])
// CHECK-COUNT-4: call @distRtCopyStrided(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[S]])
// CHECK-NOT: linalg.
func.func @pack_segments(%in: memref<12x3xf32>, %out: memref<12x3xf32>) {
  dist.buffer.pack_segments %in, %out dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : memref<12x3xf32>, memref<12x3xf32>
  return
}
