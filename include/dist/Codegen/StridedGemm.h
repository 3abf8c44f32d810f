//===- StridedGemm.h - GEMM calls computing a contraction -------*- C++ -*-===//
//
// Which `linalg` contractions on buffers a row-major batched GEMM (the
// runtime's distRtGemm: BLAS on the host, cuBLAS on a GPU) computes exactly,
// and with which arguments. One analysis for every target, so that the CPU
// and GPU paths cannot disagree on what a product means (docs/compiler.md,
// "Contractions").
//
// The match is exact by construction. Every operand's address is an affine
// function of the loop indices: each operand dim is indexed by a sum of
// `c * d`, `c * (d floordiv G)` and `c * (d mod G)` terms and a constant. A
// loop whose index is divided or taken modulo is written as the digits of a
// mixed radix (d = d1 * G + d0), so every operand's address becomes
// `offset + sum_v stride_v * v` over *virtual loops* v. Each virtual loop
// then takes exactly one place:
//
//   - in the GEMM: batch (A, B and C move along it), m (A and C), n (B and
//     C) or k (A and B), when every operand that moves along that role's
//     loops lays them out as one strided run;
//   - else in a loop nest around the call, which moves each operand's
//     pointer by its stride: broadcast output dims (only C moves), reduction
//     dims only one input or no operand moves along, and whatever did not
//     fit a run.
//
// The call nest so enumerates every point of the iteration space once, and
// reads and accumulates the same elements as the op's loops do (C += A * B
// at every point). What cannot be written so is left to loops: other body
// than `out + a * b` (inputs maybe widened by arith.extf), other index
// expressions, dynamic sizes or strides, loops that run backwards through an
// operand, an output whose addresses overlap or alias an input, element
// types BLAS has no routine for, and products without a reduction.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_CODEGEN_STRIDEDGEMM_H
#define DIST_CODEGEN_STRIDEDGEMM_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace dist::codegen {

/// One loop of the nest around the GEMM call: `extent` iterations, each
/// moving A, B and C by their stride (elements).
struct GemmOuterLoop {
  int64_t extent = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
};

/// A contraction as calls of a row-major batched GEMM: at every point of
/// the outer loops, C[i] += op(A[i]) op(B[i]) for i < batch, the matrices
/// `stride*` elements apart, each operand starting at its memref's first
/// element plus `offset*` plus the outer loops' moves. `a` and `b` are the
/// op's inputs, swapped when C is computed as its transpose
/// (C^T = B^T A^T).
struct StridedGemm {
  mlir::Value a, b, c;
  int64_t offsetA = 0, offsetB = 0, offsetC = 0;
  bool transA = false, transB = false;
  int64_t m = 1, n = 1, k = 1;
  int64_t lda = 1, ldb = 1, ldc = 1;
  int64_t batch = 1;
  int64_t strideA = 0, strideB = 0, strideC = 0;
  llvm::SmallVector<GemmOuterLoop> outer;
  mlir::Type inputType, outputType;

  /// How many GEMM calls the nest makes.
  int64_t calls() const;
};

/// Whether `op` has two inputs and an output and its body is `out + a * b`
/// (either order of each), a and b the two input elements, each maybe
/// widened by arith.extf, and nothing else.
bool isMultiplyAdd(mlir::linalg::LinalgOp op);

/// Whether `op`, on tensors or buffers, is a product the GEMM lowering may
/// take: a multiply-add body over element types BLAS computes. The codegen
/// passes leave such ops whole for it.
bool isGemmCandidate(mlir::linalg::LinalgOp op);

/// The GEMM calls that compute exactly `op`, or failure with `whyNot` set to
/// a sentence saying what does not fit.
mlir::FailureOr<StridedGemm> matchStridedGemm(mlir::linalg::LinalgOp op,
                                              std::string &whyNot);

} // namespace dist::codegen

#endif // DIST_CODEGEN_STRIDEDGEMM_H
