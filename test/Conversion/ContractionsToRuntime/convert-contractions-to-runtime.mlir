// RUN: dist-opt %s --convert-contractions-to-runtime --canonicalize --cse | FileCheck %s

// Matrix products become one distRtGemm call each, row-major: (transA,
// transB, m, n, k, A, lda, strideA, B, ldb, strideB, C, ldc, strideC, batch,
// input dtype, output dtype, stream), dtypes as DistRuntime.h numbers them
// (bf16 = 1, f32 = 2, f64 = 3). What BLAS cannot compute stays linalg.

// A plain product: row-major A (lda 16), B (ldb 4), C (ldc 4), f32 (2).
// CHECK-LABEL: func.func @plain
// CHECK: call @distRtGemm(%c0_i32, %c0_i32, %c8_i64, %c4_i64, %c16_i64, %{{.*}}, %c16_i64, %c0_i64, %{{.*}}, %c4_i64, %c0_i64, %{{.*}}, %c4_i64, %c0_i64, %c1_i64, %c2_i32, %c2_i32, %{{.*}})
// CHECK-NOT: linalg.matmul
func.func @plain(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// B indexed (n, k): transB, ldb 16.
// CHECK-LABEL: func.func @transposed_b
// CHECK: call @distRtGemm(%c0_i32, %c1_i32, %c8_i64, %c4_i64, %c16_i64, %{{.*}}, %c16_i64, %c0_i64, %{{.*}}, %c16_i64, %c0_i64, %{{.*}}, %c4_i64, %c0_i64, %c1_i64, %c2_i32, %c2_i32, %{{.*}})
func.func @transposed_b(%a: memref<8x16xf32>, %b: memref<4x16xf32>, %c: memref<8x4xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%a, %b : memref<8x16xf32>, memref<4x16xf32>) outs(%c : memref<8x4xf32>)
  return
}

// A batch of 2 with its strides (128, 64, 32 elements), f64 (3).
// CHECK-LABEL: func.func @batch
// CHECK: call @distRtGemm(%c0_i32, %c0_i32, %c8_i64, %c4_i64, %c16_i64, %{{.*}}, %c16_i64, %c128_i64, %{{.*}}, %c4_i64, %c64_i64, %{{.*}}, %c4_i64, %c32_i64, %c2_i64, %c3_i32, %c3_i32, %{{.*}})
func.func @batch(%a: memref<2x8x16xf64>, %b: memref<2x16x4xf64>, %c: memref<2x8x4xf64>) {
  linalg.batch_matmul ins(%a, %b : memref<2x8x16xf64>, memref<2x16x4xf64>) outs(%c : memref<2x8x4xf64>)
  return
}

// (b, s, d) x (d, f): b and s collapse into m = 16; bf16 (1) widened into
// f32 (2).
// CHECK-LABEL: func.func @rows_collapsed
// CHECK: call @distRtGemm(%c0_i32, %c0_i32, %c16_i64, %c4_i64, %c16_i64, %{{.*}}, %c16_i64, %c0_i64, %{{.*}}, %c4_i64, %c0_i64, %{{.*}}, %c4_i64, %c0_i64, %c1_i64, %c1_i32, %c2_i32, %{{.*}})
// CHECK-NOT: linalg.generic
func.func @rows_collapsed(%x: memref<2x8x16xbf16>, %w: memref<16x4xbf16>, %y: memref<2x8x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, s, f, d) -> (b, s, d)>, affine_map<(b, s, f, d) -> (d, f)>, affine_map<(b, s, f, d) -> (b, s, f)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x8x16xbf16>, memref<16x4xbf16>) outs(%y : memref<2x8x4xf32>) {
  ^bb0(%xi: bf16, %wi: bf16, %acc: f32):
    %xe = arith.extf %xi : bf16 to f32
    %we = arith.extf %wi : bf16 to f32
    %p = arith.mulf %xe, %we : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// C stored (n, m): computed as C^T = B^T A^T, m = 4, n = 8, both
// transposed, ldc 8.
// CHECK-LABEL: func.func @column_major_c
// CHECK: call @distRtGemm(%c1_i32, %c1_i32, %c4_i64, %c8_i64, %c16_i64, %{{.*}}, %c4_i64, %c0_i64, %{{.*}}, %c16_i64, %c0_i64, %{{.*}}, %c8_i64, %c0_i64, %c1_i64, %c2_i32, %c2_i32, %{{.*}})
func.func @column_major_c(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (n, m)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// A view of every other 16 columns: lda 32, and its first element 16
// floats (64 bytes) past the base.
// CHECK-LABEL: func.func @strided_view
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index
// CHECK: %[[FIRST:.*]] = arith.addi %[[BASE]], %c64 : index
// CHECK: %[[I64:.*]] = arith.index_cast %[[FIRST]] : index to i64
// CHECK: %[[A:.*]] = llvm.inttoptr %[[I64]]
// CHECK: call @distRtGemm(%c0_i32, %c0_i32, %c8_i64, %c4_i64, %c16_i64, %[[A]], %c32_i64,
func.func @strided_view(%a: memref<8x32xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  %v = memref.subview %a[0, 16] [8, 16] [1, 1] : memref<8x32xf32> to memref<8x16xf32, strided<[32, 1], offset: 16>>
  linalg.matmul ins(%v, %b : memref<8x16xf32, strided<[32, 1], offset: 16>>, memref<16x4xf32>) outs(%c : memref<8x4xf32>)
  return
}

// Integers have no BLAS routine: loops.
// CHECK-LABEL: func.func @integers_stay
// CHECK-NOT: distRtGemm
// CHECK: linalg.matmul
func.func @integers_stay(%a: memref<8x16xi32>, %b: memref<16x4xi32>, %c: memref<8x4xi32>) {
  linalg.matmul ins(%a, %b : memref<8x16xi32>, memref<16x4xi32>) outs(%c : memref<8x4xi32>)
  return
}

// A body that is not out + a * b (here: masked) stays.
// CHECK-LABEL: func.func @masked_stays
// CHECK-NOT: distRtGemm
// CHECK: linalg.generic
func.func @masked_stays(%a: memref<8x16xf32>, %b: memref<16x4xf32>, %c: memref<8x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : memref<8x16xf32>, memref<16x4xf32>) outs(%c : memref<8x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %k = linalg.index 2 : index
    %c10 = arith.constant 10 : index
    %in = arith.cmpi ult, %k, %c10 : index
    %p = arith.mulf %x, %y : f32
    %z = arith.constant 0.0 : f32
    %q = arith.select %in, %p, %z : f32
    %s = arith.addf %acc, %q : f32
    linalg.yield %s : f32
  }
  return
}

// C holds b and s in the other order than A: m does not flatten the same
// way in both, so no single GEMM.
// CHECK-LABEL: func.func @not_collapsible_stays
// CHECK-NOT: distRtGemm
// CHECK: linalg.generic
func.func @not_collapsible_stays(%x: memref<2x8x16xf32>, %w: memref<16x4xf32>, %y: memref<8x2x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(b, s, f, d) -> (b, s, d)>, affine_map<(b, s, f, d) -> (d, f)>, affine_map<(b, s, f, d) -> (s, b, f)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x8x16xf32>, memref<16x4xf32>) outs(%y : memref<8x2x4xf32>) {
  ^bb0(%xi: f32, %wi: f32, %acc: f32):
    %p = arith.mulf %xi, %wi : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
