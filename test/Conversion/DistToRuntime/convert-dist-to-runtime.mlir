// RUN: dist-opt %s --convert-dist-to-runtime --split-input-file | FileCheck %s

dist.mesh @m = <["x"=2, "y"=4]>

// The mesh and group tables are private constants; the mesh symbol is gone.
// CHECK-NOT: dist.mesh
// CHECK-DAG: memref.global "private" constant @[[SIZES:__dist_table_[0-9]+]] : memref<2xi64> = dense<[2, 4]>
// CHECK-DAG: func.func private @distRtMeshCreate(i64, !llvm.ptr, !llvm.ptr) -> i64
// CHECK-DAG: func.func private @distRtGroup(i64, i64, !llvm.ptr) -> i64
// CHECK-DAG: func.func private @distRtAllGather(i64, !llvm.ptr, !llvm.ptr, i64, i32, !llvm.ptr) -> i32
// The group of all_reduce_two_axes, both axes.
// CHECK-DAG: memref.global "private" constant @{{.*}} : memref<2xi64> = dense<[0, 1]>
// The stride tables of all_to_all_strided_send; its chunk shape [2, 4]
// shares the mesh's table.
// CHECK-DAG: memref.global "private" constant @[[WIDE:__dist_table_[0-9]+]] : memref<2xi64> = dense<[16, 1]>
// CHECK-DAG: memref.global "private" constant @[[NARROW:__dist_table_[0-9]+]] : memref<2xi64> = dense<[4, 1]>

// Gathering along the leading dim into a buffer the chunks fill exactly:
// the runtime writes the output directly, no temporary.
// CHECK-LABEL: func @gather_direct
// CHECK: %[[SIZES_PTR:.*]] = memref.get_global @[[SIZES]]
// CHECK: %[[MESH:.*]] = call @distRtMeshCreate(%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[GROUP:.*]] = call @distRtGroup(%[[MESH]], %{{.*}}, %{{.*}})
// CHECK-NOT: memref.alloc
// CHECK: call @distRtAllGather(%[[GROUP]], %{{.*}}, %{{.*}}, %c32_i64, %c2_i32, %{{.*}})
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @gather_direct(%in: memref<4x8xf32>, %out: memref<16x8xf32>) {
  dist.buffer.all_gather %in, %out on @m axes = ["y"] dim = 0 : memref<4x8xf32>, memref<16x8xf32>
  return
}

// Along a non-leading dim, blocks that fill the output evenly are written
// straight into their column ranges: a strided all-to-all whose send chunks
// are all the whole input (chunk stride 0), received at column offsets
// 4 apart (chunk stride 4) with the output's row stride; no temporary, no
// unpack.
// CHECK-LABEL: func @gather_strided
// CHECK-NOT: memref.alloc
// CHECK: call @distRtAllToAllStrided(%{{.*}}, %c2_i64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i64, %{{.*}}, %{{.*}}, %c4_i64{{.*}}, %c2_i32, %{{.*}})
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @gather_strided(%in: memref<8x4xf32>, %out: memref<8x16xf32>) {
  dist.buffer.all_gather %in, %out on @m axes = ["y"] dim = 1 : memref<8x4xf32>, memref<8x16xf32>
  return
}

// Uneven along a non-leading dim (4 blocks of 6 columns hold 22): the
// blocks arrive chunk-major in a [q, block] temporary, and every chunk is
// unpacked to its column range, the last one cut short.
// CHECK-LABEL: func @gather_unpack
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<4x3x6xf32>
// CHECK: call @distRtAllGather(%{{.*}}, %{{.*}}, %{{.*}}, %c18_i64, %c2_i32, %{{.*}})
// CHECK: scf.for %[[J:.*]] = %c0 to %c3 step %c1
// CHECK:   memref.subview %[[TMP]][%[[J]], 0, 0] [1, 3, 6] [1, 1, 1]
// CHECK:   linalg.copy
// CHECK: %[[LAST:.*]] = memref.subview %[[TMP]][3, 0, 0] [1, 3, 6] [1, 1, 1]
// CHECK: memref.subview %[[LAST]][0, 0] [3, 4] [1, 1]
// CHECK: memref.subview %{{.*}}[0, 18] [3, 4] [1, 1]
// CHECK: linalg.copy
// CHECK: memref.dealloc %[[TMP]]
func.func @gather_unpack(%in: memref<3x6xf32>, %out: memref<3x22xf32>) {
  dist.buffer.all_gather %in, %out on @m axes = ["y"] dim = 1 : memref<3x6xf32>, memref<3x22xf32>
  return
}

// Uneven: 4 blocks of 3 rows hold 10 rows; the last chunk contributes one.
// CHECK-LABEL: func @gather_uneven
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<4x3x6xf32>
// CHECK: scf.for %{{.*}} = %c0 to %c3 step %c1
// CHECK: memref.subview %[[TMP]][3, 0, 0] [1, 3, 6] [1, 1, 1]
// CHECK: memref.subview %{{.*}}[0, 0] [1, 6] [1, 1]
// CHECK: linalg.copy
func.func @gather_uneven(%in: memref<3x6xf32>, %out: memref<10x6xf32>) {
  dist.buffer.all_gather %in, %out on @m axes = ["y"] dim = 0 : memref<3x6xf32>, memref<10x6xf32>
  return
}

// Rows in, column blocks out, both sides splitting evenly: the runtime reads
// column block j of the input in place (row stride 16, chunk stride 4) and
// writes row block i of the output in place (chunk stride 8): no pack, no
// unpack, no temporary.
// CHECK-LABEL: func @all_to_all_strided_send
// CHECK-SAME: (%[[IN:.*]]: memref<2x16xf32>, %[[OUT:.*]]: memref<8x4xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.copy
// CHECK: %[[GROUP:.*]] = call @distRtGroup
// CHECK: memref.get_global @[[SIZES]]
// CHECK: memref.extract_aligned_pointer_as_index %[[IN]]
// CHECK: memref.get_global @[[WIDE]]
// CHECK: memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: memref.get_global @[[NARROW]]
// CHECK: call @distRtAllToAllStrided(%[[GROUP]], %c2_i64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c4_i64, %{{.*}}, %{{.*}}, %c8_i64, %c2_i32, %{{.*}})
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @all_to_all_strided_send(%in: memref<2x16xf32>, %out: memref<8x4xf32>) {
  dist.buffer.all_to_all %in, %out on @m axes = ["y"] dim = 0 to_dim = 1 : memref<2x16xf32>, memref<8x4xf32>
  return
}

// The inverse: row blocks go out as they are (chunk stride 8) and land as
// column blocks (row stride 16, chunk stride 4).
// CHECK-LABEL: func @all_to_all_strided_recv
// CHECK-NOT: memref.alloc
// CHECK: call @distRtAllToAllStrided(%{{.*}}, %c2_i64{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c8_i64, %{{.*}}, %{{.*}}, %c4_i64, %c2_i32, %{{.*}})
// CHECK-NOT: linalg.copy
// CHECK: return
func.func @all_to_all_strided_recv(%in: memref<8x4xf32>, %out: memref<2x16xf32>) {
  dist.buffer.all_to_all %in, %out on @m axes = ["y"] dim = 1 to_dim = 0 : memref<8x4xf32>, memref<2x16xf32>
  return
}

// 10 columns in 4 blocks of 3: the last block is padded, so the columns are
// packed into a zero-filled temporary and sent with the plain all-to-all.
// CHECK-LABEL: func @all_to_all_uneven_packs
// CHECK-SAME: (%[[IN:.*]]: memref<2x10xf32>, %[[OUT:.*]]: memref<8x3xf32>)
// CHECK: %[[SEND:.*]] = memref.alloc() : memref<4x2x3xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[SEND]]
// CHECK: scf.for
// CHECK:   linalg.copy
// CHECK: memref.subview %[[IN]][0, 9] [2, 1] [1, 1]
// CHECK: linalg.copy
// CHECK: memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: call @distRtAllToAll(%{{.*}}, %{{.*}}, %{{.*}}, %c6_i64, %c2_i32, %{{.*}})
// CHECK-NOT: linalg.copy
// CHECK: memref.dealloc %[[SEND]]
func.func @all_to_all_uneven_packs(%in: memref<2x10xf32>, %out: memref<8x3xf32>) {
  dist.buffer.all_to_all %in, %out on @m axes = ["y"] dim = 0 to_dim = 1 : memref<2x10xf32>, memref<8x3xf32>
  return
}

// Chunks of the leading dim are already in order: sent as they are.
// CHECK-LABEL: func @reduce_scatter_direct
// CHECK-NOT: memref.alloc
// CHECK: call @distRtReduceScatter(%{{.*}}, %{{.*}}, %{{.*}}, %c16_i64, %c2_i32, %c1_i32, %{{.*}})
func.func @reduce_scatter_direct(%in: memref<8x4xf32>, %out: memref<4x4xf32>) {
  dist.buffer.reduce_scatter %in, %out on @m axes = ["x"] dim = 0 reduction = max : memref<8x4xf32>, memref<4x4xf32>
  return
}

// An uneven chunking is packed with zero padding.
// CHECK-LABEL: func @reduce_scatter_pad
// CHECK: %[[SEND:.*]] = memref.alloc() : memref<4x3xi32>
// CHECK: linalg.fill ins(%c0_i32{{.*}}) outs(%[[SEND]]
// CHECK: call @distRtReduceScatter(%{{.*}}, %{{.*}}, %{{.*}}, %c3_i64, %c4_i32, %c0_i32{{.*}}, %{{.*}})
func.func @reduce_scatter_pad(%in: memref<10xi32>, %out: memref<3xi32>) {
  dist.buffer.reduce_scatter %in, %out on @m axes = ["y"] dim = 0 reduction = sum : memref<10xi32>, memref<3xi32>
  return
}

// CHECK-LABEL: func @all_reduce_two_axes
// CHECK: call @distRtAllReduce(%{{.*}}, %{{.*}}, %{{.*}}, %c32_i64, %c1_i32, %c4_i32, %{{.*}})
func.func @all_reduce_two_axes(%in: memref<32xbf16>, %out: memref<32xbf16>) {
  dist.buffer.all_reduce %in, %out on @m axes = ["x", "y"] reduction = avg : memref<32xbf16>, memref<32xbf16>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>

// A slice needs only this device's coordinates: no communicator.
// CHECK-LABEL: func @slice
// CHECK-NOT: distRtGroup
// CHECK: call @distRtMeshCoord(%{{.*}}, %c1_i64)
// CHECK: arith.minui
// CHECK: memref.subview %{{.*}}[%{{.*}}, 0] [%{{.*}}, 6] [1, 1]
// CHECK: linalg.copy
func.func @slice(%in: memref<10x6xf32>, %out: memref<3x6xf32>) {
  dist.buffer.all_slice %in, %out on @m axes = ["y"] dim = 0 : memref<10x6xf32>, memref<3x6xf32>
  return
}

// CHECK-LABEL: func @replicate_to_partial_prod
// CHECK: scf.if
// CHECK:   linalg.copy
// CHECK: } else {
// CHECK:   linalg.fill ins(%cst{{.*}} : f32)
func.func @replicate_to_partial_prod(%in: memref<8xf32>, %out: memref<8xf32>) {
  dist.buffer.replicate_to_partial %in, %out on @m axes = ["x"] reduction = prod : memref<8xf32>, memref<8xf32>
  return
}

// For max, every member keeps the value.
// CHECK-LABEL: func @replicate_to_partial_max
// CHECK-NOT: scf.if
// CHECK: linalg.copy
func.func @replicate_to_partial_max(%in: memref<8xf32>, %out: memref<8xf32>) {
  dist.buffer.replicate_to_partial %in, %out on @m axes = ["x"] reduction = max : memref<8xf32>, memref<8xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>

// A permute's table: sources, then each rank's destinations.
// CHECK-DAG: memref.global "private" constant @[[SRC:.*]] : memref<4xi64> = dense<[0, 2, 1, 3]>
// CHECK-DAG: memref.global "private" constant @[[OFF:.*]] : memref<5xi64> = dense<[0, 0, 1, 2, 2]>
// CHECK-DAG: memref.global "private" constant @[[DST:.*]] : memref<2xi64> = dense<[2, 1]>
// CHECK-LABEL: func @permute
// CHECK: call @distRtPermute(
func.func @permute(%in: memref<8xf32>, %out: memref<8xf32>) {
  dist.buffer.permute %in, %out on @m sources = [0, 2, 1, 3] : memref<8xf32>, memref<8xf32>
  return
}

// -----

// A permute on a mesh of ranks 2 and 3 (a pipeline stage): the tables are
// indexed by world rank up to 3; ranks 0 and 1 receive nothing (-1) and no
// one sends to them.
dist.mesh @stage = <["x"=2], devices = [3, 2]>

// CHECK-DAG: memref.global "private" constant @{{.*}} : memref<4xi64> = dense<[-1, -1, 3, 2]>
// CHECK-DAG: memref.global "private" constant @{{.*}} : memref<5xi64> = dense<[0, 0, 0, 1, 2]>
// CHECK-DAG: memref.global "private" constant @{{.*}} : memref<2xi64> = dense<[3, 2]>
// CHECK-LABEL: func @permute_stage
// CHECK: call @distRtPermute(
func.func @permute_stage(%in: memref<8xf32>, %out: memref<8xf32>) {
  dist.buffer.permute %in, %out on @stage sources = [-1, -1, 3, 2] : memref<8xf32>, memref<8xf32>
  return
}

// -----

// A redistribute is one distRtExchange over the compile-time table; both
// meshes are registered with the runtime (which checks the job has their
// ranks).
dist.mesh @s0 = <["tp"=2], devices = [0, 1]>
dist.mesh @s1 = <["tp"=2], devices = [3, 2]>

// CHECK-DAG: func.func private @distRtExchange(i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-DAG: memref.global "private" constant @[[TABLE:.*]] : memref<10xi64> = dense<[0, 3, 0, 0, 4, 1, 2, 0, 0, 4]>
// CHECK-LABEL: func @redistribute
// CHECK: call @distRtMeshCreate(
// CHECK: call @distRtMeshCreate(
// CHECK: %[[RANK:.*]] = arith.constant 1 : i64
// CHECK: %[[COUNT:.*]] = arith.constant 2 : i64
// CHECK: memref.get_global @[[TABLE]]
// CHECK: %[[DTYPE:.*]] = arith.constant 1 : i32
// CHECK: call @distRtExchange(%[[RANK]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[COUNT]], %{{.*}}, %[[DTYPE]], %{{.*}}) : (i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i32, !llvm.ptr) -> i32
func.func @redistribute(%in: memref<4xbf16>, %out: memref<4xbf16>) {
  dist.buffer.redistribute %in, %out from @s0 to @s1 table = [0, 3, 0, 0, 4, 1, 2, 0, 0, 4] : memref<4xbf16>, memref<4xbf16>
  return
}

// -----

// A table of local copies only (each rank keeps its part of a replicated
// tensor) calls distRtExchangeLocal: no rank waits for another, so the ranks
// do not agree first.
dist.mesh @m = <["x"=2]>

// CHECK-DAG: func.func private @distRtExchangeLocal(i64, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, !llvm.ptr, i32, !llvm.ptr) -> i32
// CHECK-LABEL: func @redistribute_local
// CHECK: %[[COUNT:.*]] = arith.constant 2 : i64
// CHECK: call @distRtExchangeLocal(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[COUNT]], %{{.*}}, %{{.*}}, %{{.*}})
// CHECK-NOT: call @distRtExchange(
func.func @redistribute_local(%in: memref<4xf32>, %out: memref<2xf32>) {
  dist.buffer.redistribute %in, %out from @m to @m table = [0, 0, 0, 0, 2, 1, 1, 2, 0, 2] : memref<4xf32>, memref<2xf32>
  return
}

// -----

// Segment unpacking on the host: zero, then each member's piece of each
// segment copied into place (Q_0 Q_1 | K_0 K_1 from Q_0 K_0 | Q_1 K_1).
// CHECK-LABEL: func @unpack_segments
// CHECK-SAME: (%[[IN:.*]]: memref<12x3xf32>, %[[OUT:.*]]: memref<12x3xf32>)
// CHECK: linalg.fill
// CHECK: %[[A:.*]] = memref.subview %[[IN]][0, 0] [4, 3] [1, 1]
// CHECK: %[[B:.*]] = memref.subview %[[OUT]][0, 0] [4, 3] [1, 1]
// CHECK: linalg.copy ins(%[[A]] {{.*}} outs(%[[B]]
// CHECK: memref.subview %[[IN]][6, 0] [4, 3] [1, 1]
// CHECK: memref.subview %[[OUT]][4, 0] [4, 3] [1, 1]
// CHECK: memref.subview %[[IN]][4, 0] [2, 3] [1, 1]
// CHECK: memref.subview %[[OUT]][8, 0] [2, 3] [1, 1]
// CHECK: memref.subview %[[IN]][10, 0] [2, 3] [1, 1]
// CHECK: memref.subview %[[OUT]][10, 0] [2, 3] [1, 1]
func.func @unpack_segments(%in: memref<12x3xf32>, %out: memref<12x3xf32>) {
  dist.buffer.unpack_segments %in, %out dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : memref<12x3xf32>, memref<12x3xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>

// A permute by layouts: the runtime builds the tables (one call, the
// description as a constant array of its 8 entries).
// CHECK-LABEL: func @permute_by_layouts
// CHECK: call @distRtPermuteByLayouts(%{{.*}}, %{{.*}}, %{{.*}}, %c16_i64, %c2_i32, %c2_i64{{.*}}, %{{.*}}, %c8_i64, %{{.*}})
func.func @permute_by_layouts(%in: memref<4x4xf32>, %out: memref<4x4xf32>) {
  dist.buffer.permute %in, %out on @m dim_axes = [1, 0, 1, 1, 1, 1, 1, 0] : memref<4x4xf32>, memref<4x4xf32>
  return
}
