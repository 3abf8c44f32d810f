//===- CApiGemm.cpp - C ABI: local matrix products ------------------------===//
//
// distRtGemm: the call is checked (GemmCall::check) and run by the backend
// on its memory (Gemm.h).
//
//===----------------------------------------------------------------------===//

#include "ArgumentChecks.h"
#include "Errors.h"
#include "Gemm.h"
#include "State.h"

#include "dist/Runtime/DistRuntime.h"

#include <string>

using namespace dist::rt;

void GemmCall::check() const {
  auto nonNegative = [](int64_t value, const char *name) {
    if (value < 0)
      invalid(std::string(name) + " is negative (" + std::to_string(value) +
              ")");
  };
  nonNegative(m, "m");
  nonNegative(n, "n");
  nonNegative(k, "k");
  nonNegative(batch, "batch");
  nonNegative(strideA, "strideA");
  nonNegative(strideB, "strideB");
  nonNegative(strideC, "strideC");
  auto leading = [](int64_t ld, int64_t rowLength, const char *name) {
    if (ld < std::max<int64_t>(1, rowLength))
      invalid(std::string(name) + " = " + std::to_string(ld) +
              " is below the row length " + std::to_string(rowLength));
  };
  leading(lda, transA ? m : k, "lda");
  leading(ldb, transB ? k : n, "ldb");
  leading(ldc, n, "ldc");
  bool half = input == DType::F16 || input == DType::BF16;
  bool pair = (input == DType::F32 && output == DType::F32) ||
              (input == DType::F64 && output == DType::F64) ||
              (half && (output == input || output == DType::F32));
  if (!pair)
    throw Error(DIST_RT_ERR_UNSUPPORTED,
                std::string("no matrix product of ") + dtypeName(input) +
                    " inputs into " + dtypeName(output) +
                    " (f32, f64, or f16/bf16 into themselves or f32)");
  if (empty())
    return;
  checkBuffer(a, 1, "A");
  checkBuffer(b, 1, "B");
  checkBuffer(c, 1, "C");
}

extern "C" {

int32_t distRtGemm(int32_t transA, int32_t transB, int64_t m, int64_t n,
                   int64_t k, const void *a, int64_t lda, int64_t strideA,
                   const void *b, int64_t ldb, int64_t strideB, void *c,
                   int64_t ldc, int64_t strideC, int64_t batch,
                   int32_t inputDType, int32_t outputDType, void *stream) {
  return guard("gemm", [&] {
    requireInit();
    GemmCall call;
    if ((transA != 0 && transA != 1) || (transB != 0 && transB != 1))
      invalid("transA and transB must be 0 or 1");
    call.transA = transA;
    call.transB = transB;
    call.m = m;
    call.n = n;
    call.k = k;
    call.a = a;
    call.lda = lda;
    call.strideA = strideA;
    call.b = b;
    call.ldb = ldb;
    call.strideB = strideB;
    call.c = c;
    call.ldc = ldc;
    call.strideC = strideC;
    call.batch = batch;
    call.input = toDType(inputDType);
    call.output = toDType(outputDType);
    Stream s = S.backend->resolveStream(stream);
    call.check();
    if (call.empty())
      return;
    S.backend->gemm(call, s);
  });
}

} // extern "C"
