//===- ElementCodec.h - Element values of every runtime dtype ---*- C++ -*-===//
//
// The runtime checks write test values into buffers of each DIST_RT_* dtype
// and read them back, independently of the runtime's own converters. Only
// exactly representable values are used (integers and halves of them).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TEST_RUNTIME_ELEMENTCODEC_H
#define DIST_TEST_RUNTIME_ELEMENTCODEC_H

#include "dist/Runtime/DistRuntime.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace dist::rt_test {

inline size_t elemSize(int dt) {
  static const size_t sizes[] = {2, 2, 4, 8, 4, 8, 1, 2, 1};
  return sizes[dt];
}

// Encodes an exactly representable value (the test only uses integers and
// halves of them) in a dtype. Independent of the runtime's converters:
// _Float16 from the compiler for f16, truncation of the float for bf16
// (exact when the low 16 bits are zero, which holds for these values).
inline void encode(int dt, double v, void *out) {
  switch (dt) {
  case DIST_RT_F16: {
    _Float16 h = static_cast<_Float16>(v);
    std::memcpy(out, &h, 2);
    return;
  }
  case DIST_RT_BF16: {
    float f = static_cast<float>(v);
    uint32_t b;
    std::memcpy(&b, &f, 4);
    uint16_t h = static_cast<uint16_t>(b >> 16);
    std::memcpy(out, &h, 2);
    return;
  }
  case DIST_RT_F32: {
    float f = static_cast<float>(v);
    std::memcpy(out, &f, 4);
    return;
  }
  case DIST_RT_F64:
    std::memcpy(out, &v, 8);
    return;
  case DIST_RT_I32: {
    int32_t i = static_cast<int32_t>(v);
    std::memcpy(out, &i, 4);
    return;
  }
  case DIST_RT_I64: {
    int64_t i = static_cast<int64_t>(v);
    std::memcpy(out, &i, 8);
    return;
  }
  case DIST_RT_I8: {
    int8_t i = static_cast<int8_t>(v);
    std::memcpy(out, &i, 1);
    return;
  }
  case DIST_RT_I16: {
    int16_t i = static_cast<int16_t>(v);
    std::memcpy(out, &i, 2);
    return;
  }
  case DIST_RT_I1: {
    uint8_t i = v != 0 ? 1 : 0;
    std::memcpy(out, &i, 1);
    return;
  }
  }
}

inline double decode(int dt, const void *in) {
  switch (dt) {
  case DIST_RT_F16: {
    _Float16 h;
    std::memcpy(&h, in, 2);
    return static_cast<double>(h);
  }
  case DIST_RT_BF16: {
    uint16_t h;
    std::memcpy(&h, in, 2);
    uint32_t b = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &b, 4);
    return f;
  }
  case DIST_RT_F32: {
    float f;
    std::memcpy(&f, in, 4);
    return f;
  }
  case DIST_RT_F64: {
    double d;
    std::memcpy(&d, in, 8);
    return d;
  }
  case DIST_RT_I32: {
    int32_t i;
    std::memcpy(&i, in, 4);
    return i;
  }
  case DIST_RT_I64: {
    int64_t i;
    std::memcpy(&i, in, 8);
    return static_cast<double>(i);
  }
  case DIST_RT_I8: {
    int8_t i;
    std::memcpy(&i, in, 1);
    return i;
  }
  case DIST_RT_I16: {
    int16_t i;
    std::memcpy(&i, in, 2);
    return i;
  }
  case DIST_RT_I1: {
    uint8_t i;
    std::memcpy(&i, in, 1);
    return i;
  }
  }
  return NAN;
}

} // namespace dist::rt_test

#endif // DIST_TEST_RUNTIME_ELEMENTCODEC_H
