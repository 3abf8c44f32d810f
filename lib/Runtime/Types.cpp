//===- Types.cpp - Element types and reductions ---------------------------===//

#include "Types.h"

#include <cstdint>

namespace dist::rt {

DType toDType(int32_t dtype) {
  if (dtype < 0 || dtype >= kNumDTypes)
    throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
                "unknown dtype " + std::to_string(dtype) +
                    " (expected 0..8: f16, bf16, f32, f64, i32, i64, i8, i16, "
                    "i1)");
  return static_cast<DType>(dtype);
}

RedOp toRedOp(int32_t redop) {
  if (redop < 0 || redop >= kNumRedOps)
    throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
                "unknown reduction " + std::to_string(redop) +
                    " (expected 0..4: sum, max, min, prod, avg)");
  return static_cast<RedOp>(redop);
}

size_t dtypeSize(DType t) {
  switch (t) {
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code)                    \
  case DType::Enum:                                                            \
    return Bytes;
#include "dist/Support/ElementTypes.def"
  }
  return 0;
}

const char *dtypeName(DType t) {
  switch (t) {
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code)                    \
  case DType::Enum:                                                            \
    return Name;
#include "dist/Support/ElementTypes.def"
  }
  return "?";
}

const char *redOpName(RedOp op) {
  switch (op) {
  case RedOp::Sum:
    return "sum";
  case RedOp::Max:
    return "max";
  case RedOp::Min:
    return "min";
  case RedOp::Prod:
    return "prod";
  case RedOp::Avg:
    return "avg";
  }
  return "?";
}

bool isFloat(DType t) {
  return t == DType::F16 || t == DType::BF16 || t == DType::F32 ||
         t == DType::F64;
}

bool supportsReduction(DType t, RedOp op) {
  // On booleans max/min/prod are or/and/and; a sum or mean of booleans has no
  // i1 result that a program could mean, so it is refused rather than guessed.
  if (t == DType::I1)
    return op == RedOp::Max || op == RedOp::Min || op == RedOp::Prod;
  return true;
}

void checkReduction(DType t, RedOp op) {
  if (!supportsReduction(t, op))
    throw Error(DIST_RT_ERR_UNSUPPORTED,
                std::string("reduction ") + redOpName(op) +
                    " is not defined on " + dtypeName(t));
}

namespace {
template <typename T> void divideInts(void *data, size_t n, int64_t divisor) {
  T *p = static_cast<T *>(data);
  // C++ integer division truncates toward zero, as documented for avg.
  for (size_t i = 0; i < n; ++i)
    p[i] = static_cast<T>(static_cast<int64_t>(p[i]) / divisor);
}
} // namespace

void divideInPlace(void *data, size_t n, DType t, int64_t divisor) {
  if (divisor == 1)
    return;
  switch (t) {
  case DType::F16: {
    uint16_t *p = static_cast<uint16_t *>(data);
    float d = static_cast<float>(divisor);
    for (size_t i = 0; i < n; ++i)
      p[i] = floatToHalfBits(halfBitsToFloat(p[i]) / d);
    return;
  }
  case DType::BF16: {
    uint16_t *p = static_cast<uint16_t *>(data);
    float d = static_cast<float>(divisor);
    for (size_t i = 0; i < n; ++i)
      p[i] = floatToBf16Bits(bf16BitsToFloat(p[i]) / d);
    return;
  }
  case DType::F32: {
    float *p = static_cast<float *>(data);
    float d = static_cast<float>(divisor);
    for (size_t i = 0; i < n; ++i)
      p[i] /= d;
    return;
  }
  case DType::F64: {
    double *p = static_cast<double *>(data);
    double d = static_cast<double>(divisor);
    for (size_t i = 0; i < n; ++i)
      p[i] /= d;
    return;
  }
  case DType::I32:
    return divideInts<int32_t>(data, n, divisor);
  case DType::I64:
    return divideInts<int64_t>(data, n, divisor);
  case DType::I8:
    return divideInts<int8_t>(data, n, divisor);
  case DType::I16:
    return divideInts<int16_t>(data, n, divisor);
  case DType::I1:
    break;
  }
  throw Error(DIST_RT_ERR_UNSUPPORTED,
              std::string("avg is not defined on ") + dtypeName(t));
}

bool reducesInInt64(DType t, RedOp op) {
  bool narrow = t == DType::I8 || t == DType::I16;
  return (op == RedOp::Avg && (narrow || t == DType::I32)) ||
         ((op == RedOp::Sum || op == RedOp::Prod) && narrow);
}

namespace {
template <typename T> void widenAs(const void *src, int64_t *dst, size_t n) {
  const T *p = static_cast<const T *>(src);
  for (size_t i = 0; i < n; ++i)
    dst[i] = p[i];
}
template <typename T>
void narrowAs(const int64_t *values, void *dst, size_t n, int64_t divisor) {
  T *p = static_cast<T *>(dst);
  // A mean of values of T is a value of T; a sum or product keeps its low
  // bits (the conversion is modular).
  for (size_t i = 0; i < n; ++i)
    p[i] = static_cast<T>(values[i] / divisor);
}
} // namespace

void widenInts(const void *src, int64_t *dst, size_t n, DType t) {
  switch (t) {
  case DType::I8:
    return widenAs<int8_t>(src, dst, n);
  case DType::I16:
    return widenAs<int16_t>(src, dst, n);
  case DType::I32:
    return widenAs<int32_t>(src, dst, n);
  default:
    throw Error(DIST_RT_ERR_UNSUPPORTED,
                std::string("widenInts: not a narrow integer: ") +
                    dtypeName(t));
  }
}

void narrowReduced(const int64_t *values, void *dst, size_t n, DType t,
                   RedOp op, int64_t groupSize) {
  int64_t divisor = op == RedOp::Avg ? groupSize : 1;
  switch (t) {
  case DType::I8:
    return narrowAs<int8_t>(values, dst, n, divisor);
  case DType::I16:
    return narrowAs<int16_t>(values, dst, n, divisor);
  case DType::I32:
    return narrowAs<int32_t>(values, dst, n, divisor);
  default:
    throw Error(DIST_RT_ERR_UNSUPPORTED,
                std::string("narrowReduced: not a narrow integer: ") +
                    dtypeName(t));
  }
}

} // namespace dist::rt
