//===- CublasGemm.cpp - distRtGemm on the GPU -----------------------------===//

#include "CublasGemm.h"

#include <cublas_v2.h>

#include <string>

namespace dist::rt {

namespace {

void checkCublas(cublasStatus_t status, const char *call) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw Error(DIST_RT_ERR_BACKEND, std::string(call) + " failed: " +
                                         cublasGetStatusString(status));
}

cudaDataType_t cudaType(DType t) {
  switch (t) {
  case DType::F16:
    return CUDA_R_16F;
  case DType::BF16:
    return CUDA_R_16BF;
  case DType::F64:
    return CUDA_R_64F;
  default:
    return CUDA_R_32F;
  }
}

} // namespace

void CublasGemm::run(const GemmCall &call, cudaStream_t stream) {
  if (!handle) {
    cublasHandle_t created = nullptr;
    checkCublas(cublasCreate(&created), "cublasCreate");
    handle = created;
  }
  auto h = static_cast<cublasHandle_t>(handle);
  checkCublas(cublasSetStream(h, stream), "cublasSetStream");
  // Column-major view of the row-major call: C^T (n x m) += op(B)^T op(A)^T.
  const cublasOperation_t opB = call.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t opA = call.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  const bool f64 = call.input == DType::F64;
  const double oneD = 1.0;
  const float oneF = 1.0f;
  const void *one =
      f64 ? static_cast<const void *>(&oneD) : static_cast<const void *>(&oneF);
  checkCublas(cublasGemmStridedBatchedEx(
                  h, opB, opA, call.n, call.m, call.k, one, call.b,
                  cudaType(call.input), call.ldb, call.strideB, call.a,
                  cudaType(call.input), call.lda, call.strideA, one, call.c,
                  cudaType(call.output), call.ldc, call.strideC, call.batch,
                  f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
                  CUBLAS_GEMM_DEFAULT),
              "cublasGemmStridedBatchedEx");
}

void CublasGemm::release() noexcept {
  if (handle)
    cublasDestroy(static_cast<cublasHandle_t>(handle));
  handle = nullptr;
}

} // namespace dist::rt
