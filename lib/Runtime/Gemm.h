//===- Gemm.h - the local matrix products of distRtGemm ---------*- C++ -*-===//
//
// distRtGemm (DistRuntime.h): C[b] += op(A[b]) op(B[b]) for a batch of
// row-major matrices, the local contractions of compiled programs. The core
// validates the call (GemmCall::check) and the backend runs it on its
// memory: the host (BLAS when the runtime was built with one, else loops:
// hostGemm) for "mpi", cuBLAS for "nccl".
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_RUNTIME_GEMM_H
#define DIST_LIB_RUNTIME_GEMM_H

#include "Types.h"

#include <cstdint>

namespace dist::rt {

struct GemmCall {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  const void *a = nullptr;
  int64_t lda = 0, strideA = 0;
  const void *b = nullptr;
  int64_t ldb = 0, strideB = 0;
  void *c = nullptr;
  int64_t ldc = 0, strideC = 0;
  int64_t batch = 0;
  DType input = DType::F32, output = DType::F32;

  /// Throws Error(INVALID_ARGUMENT) or Error(UNSUPPORTED) for a call the
  /// documentation does not allow: negative sizes, leading dimensions below
  /// the row lengths, negative strides, null buffers with work to do, or an
  /// input/output type pair other than f32/f32, f64/f64, f16 or bf16 with
  /// itself or f32.
  void check() const;
  /// Whether there is anything to compute.
  bool empty() const { return m == 0 || n == 0 || k == 0 || batch == 0; }
};

/// Whether the host path uses a BLAS library (else loops).
bool hostGemmUsesBlas();

/// Gives each of the `ranksOnNode` ranks of this node an equal share of its
/// cores for BLAS (at least one thread), unless OPENBLAS_NUM_THREADS says
/// otherwise: BLAS's default, a thread per core in every rank, would
/// oversubscribe the node as many times as it has ranks.
void setHostGemmThreads(int ranksOnNode);

/// Runs `call` on host memory: f32 and f64 through BLAS when available, the
/// half types converted to f32 (a panel at a time) and accumulated in f32.
void hostGemm(const GemmCall &call);

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_GEMM_H
