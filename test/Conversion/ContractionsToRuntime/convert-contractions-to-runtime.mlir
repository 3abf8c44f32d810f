// RUN: dist-opt %s --convert-contractions-to-runtime --canonicalize --cse | FileCheck %s
// RUN: dist-opt %s --convert-contractions-to-runtime=remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

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
// way in both, so b becomes a loop around the call, each iteration moving
// A by 128 elements (512 bytes) and C by 4 (16 bytes); m = s = 8 with
// ldc 8.
// CHECK-LABEL: func.func @not_collapsible_loops
// CHECK: scf.for %[[B:.*]] = %c0 to %c2 step %c1 {
// CHECK:   %[[AOFF:.*]] = arith.muli %[[B]], %c512 : index
// CHECK:   %[[COFF:.*]] = arith.muli %[[B]], %c16 : index
// CHECK:   call @distRtGemm(%c0_i32, %c0_i32, %c8_i64, %c4_i64, %c16_i64, %{{.*}}, %c16_i64, %c0_i64, %{{.*}}, %c4_i64, %c0_i64, %{{.*}}, %c8_i64, %c0_i64, %c1_i64, %c2_i32, %c2_i32, %{{.*}})
// CHECK: }
// CHECK-NOT: linalg.generic
func.func @not_collapsible_loops(%x: memref<2x8x16xf32>, %w: memref<16x4xf32>, %y: memref<8x2x4xf32>) {
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

// An output dim no input reads (d0, a broadcast): a loop of 5 around the
// call, moving only C (by a row of 6 elements, 24 bytes). A and B read
// (d1, d2) and (d2, d1): a batch of 6 dot products of length 24, A's k
// running down its columns (lda 6, transposed).
// CHECK-LABEL: func.func @broadcast_output_dim
// CHECK: scf.for %[[R:.*]] = %c0 to %c5 step %c1 {
// CHECK:   arith.muli %[[R]], %c24 : index
// CHECK:   call @distRtGemm(%c1_i32, %c0_i32, %c1_i64, %c1_i64, %c24_i64, %{{.*}}, %c6_i64, %c1_i64, %{{.*}}, %c1_i64, %c24_i64, %{{.*}}, %c1_i64, %c1_i64, %c6_i64, %c2_i32, %c2_i32, %{{.*}})
func.func @broadcast_output_dim(%a: memref<24x6xf32>, %b: memref<6x24xf32>, %c: memref<5x6xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                  iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a, %b : memref<24x6xf32>, memref<6x24xf32>) outs(%c : memref<5x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// `dcb,abc->b`: d (only in A) and a (only in B) are sums over one input
// each: loops around the call (3 x 2 calls), the shared c the GEMM's k.
// CHECK-LABEL: func.func @sums_over_one_input
// CHECK: scf.for
// CHECK:   scf.for
// CHECK:     call @distRtGemm
func.func @sums_over_one_input(%a: memref<3x5x4xf32>, %b: memref<2x4x5xf32>, %c: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d1)>],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%a, %b : memref<3x5x4xf32>, memref<2x4x5xf32>) outs(%c : memref<4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// Grouped-query attention scores with the heads major (Q [h, s, d], K
// [kv, t, d], 8 query heads over 2 kv heads, `h floordiv 4`): h is the
// digits (kv, g), g and s collapse into m = 4 * 16 in Q and in the scores,
// so the product is one batched GEMM over the 2 kv heads, K transposed.
// REMARK: remark: contraction: 1 GEMM call (batch 2, m 64, n 16, k 8, B transposed)
// CHECK-LABEL: func.func @gqa_heads_major
// CHECK-NOT: scf.for
// CHECK: call @distRtGemm(%c0_i32, %c1_i32, %c64_i64, %c16_i64, %c8_i64, %{{.*}}, %c8_i64, %c512_i64, %{{.*}}, %c8_i64, %c128_i64, %{{.*}}, %c16_i64, %c1024_i64, %c2_i64, %c2_i32, %c2_i32, %{{.*}})
func.func @gqa_heads_major(%q: memref<8x16x8xf32>, %k: memref<2x16x8xf32>, %s: memref<8x16x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(h, i, t, d) -> (h, i, d)>, affine_map<(h, i, t, d) -> (h floordiv 4, t, d)>, affine_map<(h, i, t, d) -> (h, i, t)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<8x16x8xf32>, memref<2x16x8xf32>) outs(%s : memref<8x16x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// The same with the tokens major, as a Llama layer has them after its QKV
// projection (Q [s, h, d], K [t, kv, d]): g and s do not flatten alike in Q
// and the scores, so the group index is a loop of 4 around one batched call
// over the kv heads.
// REMARK: remark: contraction: 4 GEMM calls (batch 2, m 16, n 16, k 8, B transposed)
// CHECK-LABEL: func.func @gqa_tokens_major
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 {
// CHECK:   call @distRtGemm(%c0_i32, %c1_i32, %c16_i64, %c16_i64, %c8_i64, %{{.*}}, %c64_i64, %c32_i64, %{{.*}}, %c16_i64, %c8_i64, %{{.*}}, %c16_i64, %c1024_i64, %c2_i64, %c2_i32, %c2_i32, %{{.*}})
// CHECK: }
func.func @gqa_tokens_major(%q: memref<16x8x8xf32>, %k: memref<16x2x8xf32>, %s: memref<8x16x16xf32>) {
  linalg.generic {indexing_maps = [affine_map<(h, i, t, d) -> (i, h, d)>, affine_map<(h, i, t, d) -> (t, h floordiv 4, d)>, affine_map<(h, i, t, d) -> (h, i, t)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<16x8x8xf32>, memref<16x2x8xf32>) outs(%s : memref<8x16x16xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// Groups that are not whole (6 heads `floordiv 4`) have no mixed-radix
// form: loops.
// REMARK: remark: contraction stays loops: loop d0 is divided by 4, which does not divide 6: the groups are not whole
// CHECK-LABEL: func.func @groups_not_whole_stay
// CHECK-NOT: distRtGemm
// CHECK: linalg.generic
func.func @groups_not_whole_stay(%q: memref<6x4x8xf32>, %k: memref<2x4x8xf32>, %s: memref<6x4x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(h, i, t, d) -> (h, i, d)>, affine_map<(h, i, t, d) -> (h floordiv 4, t, d)>, affine_map<(h, i, t, d) -> (h, i, t)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : memref<6x4x8xf32>, memref<2x4x8xf32>) outs(%s : memref<6x4x4xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// An output that is a view of an input's buffer would be overwritten while
// BLAS reads it: loops.
// REMARK: remark: contraction stays loops: the output is a view of an input's buffer
// CHECK-LABEL: func.func @output_aliases_input_stays
// CHECK-NOT: distRtGemm
// CHECK: linalg.matmul
func.func @output_aliases_input_stays(%a: memref<8x16xf32>, %b: memref<16x8xf32>) {
  %c = memref.subview %a[0, 0] [8, 8] [1, 1] : memref<8x16xf32> to memref<8x8xf32, strided<[16, 1]>>
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x8xf32>) outs(%c : memref<8x8xf32, strided<[16, 1]>>)
  return
}
