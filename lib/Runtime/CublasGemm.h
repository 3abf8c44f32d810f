//===- CublasGemm.h - distRtGemm on the GPU ---------------------*- C++ -*-===//
//
// The NCCL backend's matrix products: one cublasGemmStridedBatchedEx per
// call on the caller's stream, with f32 accumulation (f64 for f64). The
// row-major product is cuBLAS's column-major one transposed:
// C^T += op(B)^T op(A)^T, so A and B swap places.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_RUNTIME_CUBLASGEMM_H
#define DIST_LIB_RUNTIME_CUBLASGEMM_H

#include "Gemm.h"

#include <cuda_runtime.h>

namespace dist::rt {

class CublasGemm {
public:
  CublasGemm() = default;
  CublasGemm(const CublasGemm &) = delete;
  CublasGemm &operator=(const CublasGemm &) = delete;
  ~CublasGemm() { release(); }

  /// Enqueues `call` on `stream` (the handle is made on first use).
  void run(const GemmCall &call, cudaStream_t stream);
  /// Destroys the handle; must not throw.
  void release() noexcept;

private:
  void *handle = nullptr; // cublasHandle_t
};

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_CUBLASGEMM_H
