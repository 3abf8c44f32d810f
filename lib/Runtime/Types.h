//===- Types.h - Element types, reductions, errors --------------*- C++ -*-===//
//
// Internal C++ side of the runtime: the enums behind the C ABI's int32_t
// dtype/redop arguments, their validation, the exception that carries a
// failure to the C ABI boundary, and f16/bf16 <-> float conversions (MPI has
// no half types, so the MPI backend reduces them in float itself).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_RUNTIME_TYPES_H
#define DIST_LIB_RUNTIME_TYPES_H

#include "dist/Runtime/DistRuntime.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dist::rt {

// One enumerator per row of dist/Support/ElementTypes.def, with its code.
enum class DType : int32_t {
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code) Enum = Code,
#include "dist/Support/ElementTypes.def"
};
inline constexpr int kNumDTypes = 0
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code) +1
#include "dist/Support/ElementTypes.def"
    ;

enum class RedOp : int32_t {
  Sum = DIST_RT_SUM,
  Max = DIST_RT_MAX,
  Min = DIST_RT_MIN,
  Prod = DIST_RT_PROD,
  Avg = DIST_RT_AVG,
};
inline constexpr int kNumRedOps = 5;

/// A failure inside the runtime. Thrown internally and turned into the C
/// ABI's status + message at the boundary; never escapes an extern "C" call.
class Error : public std::runtime_error {
public:
  Error(int32_t code, const std::string &reason)
      : std::runtime_error(reason), code_(code) {}
  int32_t code() const { return code_; }

private:
  int32_t code_;
};

/// Checks a C ABI dtype argument and converts it; throws Error otherwise.
DType toDType(int32_t dtype);
/// Checks a C ABI redop argument and converts it; throws Error otherwise.
RedOp toRedOp(int32_t redop);

size_t dtypeSize(DType t);
const char *dtypeName(DType t);
const char *redOpName(RedOp op);
bool isFloat(DType t);

/// Whether `op` is defined on `t` (I1 has no arithmetic sum or average).
bool supportsReduction(DType t, RedOp op);
/// Throws Error(UNSUPPORTED) naming the op when !supportsReduction.
void checkReduction(DType t, RedOp op);

//===--------------------------------------------------------------------===//
// Half-precision conversions (round to nearest even, NaN stays NaN).
//===--------------------------------------------------------------------===//

inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp != 0) {
    bits = sign | ((exp + (127 - 15)) << 23) | (mant << 13);
  } else {
    // Zero or subnormal: mant * 2^-24 is exact in float.
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    uint32_t vb;
    std::memcpy(&vb, &v, 4);
    bits = sign | vb;
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToHalfBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u;
  x &= 0x7fffffffu;
  if (x >= 0x47800000u) // |f| >= 65536, inf or NaN.
    return static_cast<uint16_t>(sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (x < 0x38800000u) {
    // The result is subnormal or zero. Adding 0.5 aligns the 10 result bits
    // at the bottom of the float's mantissa, and the float adder rounds them
    // to nearest even for us.
    float a;
    std::memcpy(&a, &x, 4);
    a += 0.5f;
    uint32_t ab;
    std::memcpy(&ab, &a, 4);
    return static_cast<uint16_t>(sign | (ab - 0x3f000000u));
  }
  // Normal: rebias the exponent and round the 13 dropped bits to nearest
  // even; a carry out of the mantissa correctly bumps the exponent (up to
  // infinity for values in [65520, 65536)).
  uint32_t odd = (x >> 13) & 1u;
  x += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;
  return static_cast<uint16_t>(sign | (x >> 13));
}

inline float bf16BitsToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint16_t floatToBf16Bits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) // NaN: keep it NaN (quiet bit set).
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

/// Divides each of `n` elements by `divisor` in place (the second half of an
/// average): floats in their own precision (f16/bf16 via float), integers
/// truncating toward zero.
void divideInPlace(void *data, size_t n, DType t, int64_t divisor);

/// Whether the MPI backend reduces `t` with `op` in 64-bit integers:
///  - avg of i8, i16 and i32, whose sum over a group would wrap in the
///    element type (the mean of 100 and 100 in i8 is 100, not (200 wrapped)
///    / 2); the sum of i64 values is exact up to 2^63 in magnitude;
///  - sum and prod of i8 and i16, which must wrap and which Open MPI 4.1's
///    vectorized op/avx component saturates instead (open-mpi/ompi#8045):
///    modulo 2^64 and then the element type's width, the result is the
///    wrapped one.
bool reducesInInt64(DType t, RedOp op);

/// `n` integers of type `t` (i8, i16, i32) as int64.
void widenInts(const void *src, int64_t *dst, size_t n, DType t);

/// `n` 64-bit results of `op` over a group of `groupSize` into type `t`:
/// avg divides (truncating toward zero), sum and prod wrap to the width.
void narrowReduced(const int64_t *values, void *dst, size_t n, DType t,
                   RedOp op, int64_t groupSize);

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_TYPES_H
