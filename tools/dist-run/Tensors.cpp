//===- Tensors.cpp - dist-run's inputs, padding and .npy output -----------===//

#include "Tensors.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SwapByteOrder.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <functional>

namespace dist::run {

static_assert(llvm::sys::IsLittleEndianHost,
              "dist-run writes little-endian .npy files by copying memory");

llvm::Expected<InputSpec> InputSpec::parse(llvm::StringRef text) {
  InputSpec spec;
  if (text == "iota")
    return spec;
  if (text.consume_front("random:")) {
    spec.kind = Random;
    if (!text.empty() && !text.getAsInteger(10, spec.seed))
      return spec;
  }
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "expected 'iota' or 'random:SEED' (SEED a non-negative integer)");
}

std::string InputSpec::str() const {
  return kind == Iota ? std::string("iota")
                      : "random:" + std::to_string(seed);
}

uint64_t splitMix64(uint64_t seed, uint64_t n) {
  uint64_t z = seed + n * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Rounds `value` to the nearest value of a float type, ties to even.
static void storeFloat(ElementKind kind, double value, void *dst) {
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
    // APFloat converts from double in one rounding step; going through float
    // first could round twice.
    llvm::APFloat f(value);
    bool losesInfo = false;
    f.convert(kind == ElementKind::F16 ? llvm::APFloat::IEEEhalf()
                                       : llvm::APFloat::BFloat(),
              llvm::APFloat::rmNearestTiesToEven, &losesInfo);
    uint16_t bits =
        static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
    std::memcpy(dst, &bits, 2);
    return;
  }
  default:
    llvm_unreachable("storeFloat is only called for floating-point kinds");
  }
}

/// Two's complement wrap-around to the integer type's width.
static void storeInt(ElementKind kind, int64_t value, void *dst) {
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

static void storeNumber(ElementKind kind, int64_t value, void *dst) {
  if (isFloat(kind))
    storeFloat(kind, static_cast<double>(value), dst);
  else
    storeInt(kind, value, dst);
}

void storeGlobalElement(const InputSpec &input, ElementKind kind,
                        int64_t index, void *dst) {
  if (input.kind == InputSpec::Iota) {
    storeNumber(kind, index, dst);
    return;
  }
  uint64_t z = splitMix64(input.seed, static_cast<uint64_t>(index) + 1);
  if (isFloat(kind)) {
    // Multiples of 1/16 in [-64, 64): exact in every float type but bf16
    // (whose 8-bit significand rounds some of them), and small enough that
    // sums of a few of them stay exact in f32.
    int64_t k = static_cast<int64_t>((z >> 40) % 2048) - 1024;
    storeFloat(kind, static_cast<double>(k) / 16.0, dst);
  } else if (kind == ElementKind::I1) {
    storeInt(kind, static_cast<int64_t>(z >> 63), dst);
  } else {
    storeInt(kind, static_cast<int64_t>((z >> 40) % 201) - 100, dst);
  }
}

static std::vector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= shape[d];
  }
  return strides;
}

static std::vector<int64_t> coordinateOf(const TensorSignature &sig,
                                         int64_t rank) {
  std::vector<int64_t> coord = sig.mesh.coordinateOfRank(rank);
  assert(!coord.empty() && "rank outside the mesh; checked before launch");
  return coord;
}

void materializeArgument(const TensorSignature &sig, const InputSpec &input,
                         int64_t rank, void *buffer) {
  std::vector<int64_t> coord = coordinateOf(sig, rank);
  std::vector<int64_t> local = sig.localShape();
  std::vector<planner::DimRange> block =
      planner::deviceBlock(sig.mesh, sig.layout, sig.globalShape, coord);
  std::vector<int64_t> localStrides = rowMajorStrides(local);
  std::vector<int64_t> globalStrides = rowMajorStrides(sig.globalShape);
  const int64_t bytes = elementBytes(sig.element);
  auto *out = static_cast<uint8_t *>(buffer);
  std::memset(out, 0, sig.localBytes());

  // A partial value lives on the device with coordinate 0 on every partial
  // axis; the others hold the identity of the reduction, which for max, min
  // and avg is the value itself.
  bool holder = llvm::all_of(sig.layout.partialAxes,
                             [&](unsigned axis) { return coord[axis] == 0; });
  std::optional<int64_t> identity;
  if (!holder && sig.layout.partialKind == planner::ReductionKind::Sum)
    identity = 0;
  if (!holder && sig.layout.partialKind == planner::ReductionKind::Prod)
    identity = 1;

  const size_t rankOfTensor = local.size();
  std::function<void(size_t, int64_t, int64_t)> fill =
      [&](size_t d, int64_t localIndex, int64_t globalIndex) {
        if (d == rankOfTensor) {
          uint8_t *dst = out + localIndex * bytes;
          if (identity)
            storeNumber(sig.element, *identity, dst);
          else
            storeGlobalElement(input, sig.element, globalIndex, dst);
          return;
        }
        for (int64_t i = 0; i < block[d].size(); ++i)
          fill(d + 1, localIndex + i * localStrides[d],
               globalIndex + (block[d].begin + i) * globalStrides[d]);
      };
  fill(0, 0, 0);
}

void zeroPadding(const TensorSignature &sig, int64_t rank, void *buffer) {
  std::vector<int64_t> local = sig.localShape();
  std::vector<planner::DimRange> block = planner::deviceBlock(
      sig.mesh, sig.layout, sig.globalShape, coordinateOf(sig, rank));
  std::vector<int64_t> localStrides = rowMajorStrides(local);
  const int64_t bytes = elementBytes(sig.element);
  auto *out = static_cast<uint8_t *>(buffer);
  // Along each dim, the slices past the block are padding as a whole (one
  // contiguous run each); the slices inside it recurse.
  std::function<void(size_t, int64_t)> zero = [&](size_t d, int64_t offset) {
    if (d == local.size())
      return;
    for (int64_t i = block[d].size(); i < local[d]; ++i)
      std::memset(out + (offset + i * localStrides[d]) * bytes, 0,
                  localStrides[d] * bytes);
    for (int64_t i = 0; i < block[d].size(); ++i)
      zero(d + 1, offset + i * localStrides[d]);
  };
  zero(0, 0);
}

llvm::StringRef npyDescr(ElementKind kind) {
  switch (kind) {
  case ElementKind::F16:
    return "<f2";
  case ElementKind::BF16:
  case ElementKind::F32:
    return "<f4";
  case ElementKind::F64:
    return "<f8";
  case ElementKind::I1:
    return "|b1";
  case ElementKind::I8:
    return "|i1";
  case ElementKind::I16:
    return "<i2";
  case ElementKind::I32:
    return "<i4";
  case ElementKind::I64:
    return "<i8";
  }
  llvm_unreachable("unknown element kind");
}

llvm::Error writeNpy(llvm::StringRef path, const TensorSignature &sig,
                     const void *buffer) {
  std::vector<int64_t> shape = sig.localShape();
  // A Python tuple: (), (4,), (2, 3).
  std::string dims;
  for (auto [i, extent] : llvm::enumerate(shape))
    dims += (i ? ", " : "") + std::to_string(extent);
  if (shape.size() == 1)
    dims += ",";
  std::string header = "{'descr': '" + npyDescr(sig.element).str() +
                       "', 'fortran_order': False, 'shape': (" + dims +
                       "), }";
  // Magic (6) + version (2) + length (2) + header, padded with spaces and a
  // final newline to a multiple of 64 bytes so that the data is aligned.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 0xFFFF)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the .npy header of '" + path +
                                       "' is too long for format 1.0");

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return llvm::createStringError(ec, "cannot write '" + path +
                                           "': " + ec.message());
  os << "\x93NUMPY" << '\x01' << '\x00';
  uint16_t length = static_cast<uint16_t>(header.size());
  os << static_cast<char>(length & 0xFF) << static_cast<char>(length >> 8);
  os << header;
  const int64_t count = sig.localElements();
  if (sig.element == ElementKind::BF16) {
    // bf16 is the upper half of an f32: shifting the bits up is exact.
    const auto *in = static_cast<const uint16_t *>(buffer);
    std::vector<uint32_t> widened(count);
    for (int64_t i = 0; i < count; ++i)
      widened[i] = static_cast<uint32_t>(in[i]) << 16;
    os.write(reinterpret_cast<const char *>(widened.data()), count * 4);
  } else {
    os.write(static_cast<const char *>(buffer),
             count * elementBytes(sig.element));
  }
  os.close();
  if (os.has_error())
    return llvm::createStringError(os.error(), "cannot write '" + path +
                                                   "': " +
                                                   os.error().message());
  return llvm::Error::success();
}

} // namespace dist::run
