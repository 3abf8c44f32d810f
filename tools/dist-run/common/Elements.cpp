//===- Elements.cpp - the element types dist-run feeds and reads ----------===//

#include "Elements.h"

#include "dist/Runtime/DistRuntime.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <cstring>

namespace dist::run {

int64_t elementBytes(ElementKind kind) {
  switch (kind) {
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code)                    \
  case ElementKind::Enum:                                                      \
    return Bytes;
#include "dist/Support/ElementTypes.def"
  }
  llvm_unreachable("unknown element kind");
}

int32_t runtimeDType(ElementKind kind) {
  switch (kind) {
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code)                    \
  case ElementKind::Enum:                                                      \
    return Code;
#include "dist/Support/ElementTypes.def"
  }
  llvm_unreachable("unknown element kind");
}

llvm::StringRef elementName(ElementKind kind) {
  switch (kind) {
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code)                    \
  case ElementKind::Enum:                                                      \
    return Name;
#include "dist/Support/ElementTypes.def"
  }
  llvm_unreachable("unknown element kind");
}

std::optional<ElementKind> parseElementName(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<ElementKind>>(name)
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code)                    \
  .Case(Name, ElementKind::Enum)
#include "dist/Support/ElementTypes.def"
      .Default(std::nullopt);
}

bool isFloat(ElementKind kind) {
  switch (kind) {
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code)                    \
  case ElementKind::Enum:                                                      \
    return IsFloat;
#include "dist/Support/ElementTypes.def"
  }
  llvm_unreachable("unknown element kind");
}

/// float -> bfloat16, round to nearest even (NaN stays NaN).
static uint16_t floatToBf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return static_cast<uint16_t>((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1);
  return static_cast<uint16_t>(u >> 16);
}

/// float -> IEEE half, round to nearest even, by APFloat (exact in float:
/// one rounding).
static uint16_t floatToHalf(float f) {
  llvm::APFloat h(f);
  bool losesInfo = false;
  h.convert(llvm::APFloat::IEEEhalf(), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return static_cast<uint16_t>(h.bitcastToAPInt().getZExtValue());
}

void storeFloat(ElementKind kind, double value, void *dst) {
  switch (kind) {
  case ElementKind::F64:
    std::memcpy(dst, &value, 8);
    return;
  case ElementKind::F32: {
    // The C++ conversion rounds to nearest, ties to even (the default mode).
    float f = static_cast<float>(value);
    std::memcpy(dst, &f, 4);
    return;
  }
  case ElementKind::F16:
  case ElementKind::BF16: {
    // A value exact in float (every iota and random input, every float and
    // half from a .npy file) rounds once from float, here by its bits; any
    // other goes through APFloat, which rounds from double in one step
    // (going through float first could round twice). The fast path keeps
    // large random inputs cheap to build.
    float narrow = static_cast<float>(value);
    if (static_cast<double>(narrow) == value || std::isnan(value)) {
      uint16_t bits =
          kind == ElementKind::BF16 ? floatToBf16(narrow) : floatToHalf(narrow);
      std::memcpy(dst, &bits, 2);
      return;
    }
    llvm::APFloat f(value);
    bool losesInfo = false;
    f.convert(kind == ElementKind::F16 ? llvm::APFloat::IEEEhalf()
                                       : llvm::APFloat::BFloat(),
              llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    uint16_t bits = static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
    std::memcpy(dst, &bits, 2);
    return;
  }
  default:
    llvm_unreachable("storeFloat is only called for floating-point kinds");
  }
}

void storeInt(ElementKind kind, int64_t value, void *dst) {
  switch (kind) {
  case ElementKind::I1: {
    uint8_t bit = static_cast<uint8_t>(value & 1);
    std::memcpy(dst, &bit, 1);
    return;
  }
  case ElementKind::I8:
  case ElementKind::I16:
  case ElementKind::I32:
  case ElementKind::I64: {
    // Little endian: the low bytes of the 64-bit value are the truncation.
    uint64_t bits = static_cast<uint64_t>(value);
    std::memcpy(dst, &bits, elementBytes(kind));
    return;
  }
  default:
    llvm_unreachable("storeInt is only called for integer kinds");
  }
}

void storeNumber(ElementKind kind, int64_t value, void *dst) {
  if (isFloat(kind))
    storeFloat(kind, static_cast<double>(value), dst);
  else
    storeInt(kind, value, dst);
}

} // namespace dist::run
