//===- HostGemm.cpp - distRtGemm on host memory ---------------------------===//
//
// f32 and f64 go to CBLAS (OpenBLAS) when the runtime was built with it
// (DIST_RT_HAVE_CBLAS): its kernels reach the CPU's peak, which the loops a
// compiler emits for a matmul do not (docs/benchmarks.md, "Local compute").
// The half types have no CBLAS routine: their operands are widened to f32
// one batch entry at a time, multiplied by sgemm into an f32 product, and
// the product added to C (rounded once). Without CBLAS the same happens in
// plain loops.
//
//===----------------------------------------------------------------------===//

#include "Gemm.h"

#include <algorithm>
#include <cstdlib>
#include <thread>
#include <type_traits>
#include <vector>

#if defined(DIST_RT_HAVE_CBLAS)
#include <cblas.h>
#endif

namespace dist::rt {

namespace {

/// C += op(A) op(B) for one batch entry in T, accumulating in Acc: the
/// loop order (i, p, j) streams rows of B and C.
template <typename T, typename Acc>
void loopGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              const T *a, int64_t lda, const T *b, int64_t ldb, Acc *c,
              int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      // Element (i, p) of op(A), and (p, j) of op(B), each row-major with
      // its leading dimension.
      Acc aip = static_cast<Acc>(a[transA ? p * lda + i : i * lda + p]);
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] +=
            aip * static_cast<Acc>(b[transB ? j * ldb + p : p * ldb + j]);
    }
}

float widen(DType t, uint16_t bits) {
  return t == DType::F16 ? halfBitsToFloat(bits) : bf16BitsToFloat(bits);
}

uint16_t narrow(DType t, float value) {
  return t == DType::F16 ? floatToHalfBits(value) : floatToBf16Bits(value);
}

/// C (m x n, ld ldc) += op(A) op(B) in T (float or double): BLAS's sgemm
/// or dgemm, or loops without BLAS.
template <typename T>
void blasGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
              const T *a, int64_t lda, const T *b, int64_t ldb, T *c,
              int64_t ldc) {
#if defined(DIST_RT_HAVE_CBLAS)
  const auto opA = transA ? CblasTrans : CblasNoTrans;
  const auto opB = transB ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, opA, opB, m, n, k, 1.0f, a, lda, b, ldb, 1.0f, c,
                ldc);
  else
    cblas_dgemm(CblasRowMajor, opA, opB, m, n, k, 1.0, a, lda, b, ldb, 1.0, c,
                ldc);
#else
  loopGemm(transA, transB, m, n, k, a, lda, b, ldb, c, ldc);
#endif
}

/// One batch entry of a half-type product: the operands widened to dense
/// f32 copies (in their own layout: op() is kept), the product formed in
/// f32, then added to C in C's type.
void halfGemm(const GemmCall &call, const uint16_t *a, const uint16_t *b,
              void *c) {
  const int64_t aRows = call.transA ? call.k : call.m;
  const int64_t aCols = call.transA ? call.m : call.k;
  const int64_t bRows = call.transB ? call.n : call.k;
  const int64_t bCols = call.transB ? call.k : call.n;
  std::vector<float> wa(aRows * aCols), wb(bRows * bCols),
      product(call.m * call.n, 0.0f);
  for (int64_t r = 0; r < aRows; ++r)
    for (int64_t q = 0; q < aCols; ++q)
      wa[r * aCols + q] = widen(call.input, a[r * call.lda + q]);
  for (int64_t r = 0; r < bRows; ++r)
    for (int64_t q = 0; q < bCols; ++q)
      wb[r * bCols + q] = widen(call.input, b[r * call.ldb + q]);
  blasGemm<float>(call.transA, call.transB, call.m, call.n, call.k, wa.data(),
                  std::max<int64_t>(aCols, 1), wb.data(),
                  std::max<int64_t>(bCols, 1), product.data(),
                  std::max<int64_t>(call.n, 1));
  for (int64_t i = 0; i < call.m; ++i)
    for (int64_t j = 0; j < call.n; ++j) {
      float p = product[i * call.n + j];
      if (call.output == DType::F32) {
        static_cast<float *>(c)[i * call.ldc + j] += p;
      } else {
        uint16_t &out = static_cast<uint16_t *>(c)[i * call.ldc + j];
        out = narrow(call.output, widen(call.output, out) + p);
      }
    }
}

} // namespace

bool hostGemmUsesBlas() {
#if defined(DIST_RT_HAVE_CBLAS)
  return true;
#else
  return false;
#endif
}

void setHostGemmThreads(int ranksOnNode) {
#if defined(DIST_RT_HAVE_CBLAS)
  if (std::getenv("OPENBLAS_NUM_THREADS"))
    return;
  int cores = static_cast<int>(std::thread::hardware_concurrency());
  openblas_set_num_threads(std::max(1, cores / std::max(1, ranksOnNode)));
#else
  (void)ranksOnNode;
#endif
}

void hostGemm(const GemmCall &call) {
  if (call.empty())
    return;
  const size_t in = dtypeSize(call.input), out = dtypeSize(call.output);
  for (int64_t batch = 0; batch < call.batch; ++batch) {
    const char *a =
        static_cast<const char *>(call.a) + batch * call.strideA * in;
    const char *b =
        static_cast<const char *>(call.b) + batch * call.strideB * in;
    char *c = static_cast<char *>(call.c) + batch * call.strideC * out;
    switch (call.input) {
    case DType::F32:
      blasGemm<float>(call.transA, call.transB, call.m, call.n, call.k,
                      reinterpret_cast<const float *>(a), call.lda,
                      reinterpret_cast<const float *>(b), call.ldb,
                      reinterpret_cast<float *>(c), call.ldc);
      break;
    case DType::F64:
      blasGemm<double>(call.transA, call.transB, call.m, call.n, call.k,
                       reinterpret_cast<const double *>(a), call.lda,
                       reinterpret_cast<const double *>(b), call.ldb,
                       reinterpret_cast<double *>(c), call.ldc);
      break;
    default:
      halfGemm(call, reinterpret_cast<const uint16_t *>(a),
               reinterpret_cast<const uint16_t *>(b), c);
      break;
    }
  }
}

} // namespace dist::rt
