//===- Inputs.cpp - dist-run's global inputs and local shards -------------===//

#include "Inputs.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/Path.h"

#include <cstring>
#include <functional>

namespace dist::run {

llvm::Expected<InputSpec> InputSpec::parse(llvm::StringRef text) {
  InputSpec spec;
  if (text == "iota")
    return spec;
  if (text.consume_front("random:")) {
    spec.kind = Random;
    if (!text.empty() && !text.getAsInteger(10, spec.seed))
      return spec;
  } else if (text.consume_front("npy:") && !text.empty()) {
    spec.kind = Npy;
    spec.dir = text.str();
    return spec;
  }
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "expected 'iota', 'random:SEED' (SEED a non-negative integer) or "
      "'npy:DIR' (DIR a folder holding arg<k>.npy for argument k)");
}

std::string InputSpec::str() const {
  switch (kind) {
  case Iota:
    return "iota";
  case Random:
    return "random:" + std::to_string(seed);
  case Npy:
    return "npy:" + dir;
  }
  llvm_unreachable("unknown input kind");
}

std::string InputSpec::npyPath(size_t argument) const {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, "arg" + llvm::Twine(argument) + ".npy");
  return std::string(path);
}

uint64_t splitMix64(uint64_t seed, uint64_t n) {
  uint64_t z = seed + n * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void storeGlobalElement(const InputSpec &input, ElementKind kind, int64_t index,
                        void *dst) {
  assert(input.kind != InputSpec::Npy &&
         "npy inputs come element by element from an NpyInput");
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

void materializeShard(
    const ShardPlacement &placement, llvm::ArrayRef<int64_t> globalShape,
    ElementKind element,
    llvm::function_ref<void(int64_t index, void *dst)> globalElement,
    void *buffer) {
  const int64_t bytes = elementBytes(element);
  const int64_t total = placement.localElements() * bytes;
  // A tensor with a zero extent has an empty buffer (maybe a null pointer,
  // which memset must not get): nothing to fill.
  if (total == 0)
    return;
  auto *out = static_cast<uint8_t *>(buffer);
  std::memset(out, 0, total);
  if (!placement.holds)
    return;
  std::vector<int64_t> localStrides = rowMajorStrides(placement.localShape);
  std::vector<int64_t> globalStrides = rowMajorStrides(globalShape);
  const size_t rank = placement.localShape.size();
  std::function<void(size_t, int64_t, int64_t)> fill =
      [&](size_t d, int64_t localIndex, int64_t globalIndex) {
        if (d == rank) {
          uint8_t *dst = out + localIndex * bytes;
          if (placement.identity)
            storeNumber(element, *placement.identity, dst);
          else
            globalElement(globalIndex, dst);
          return;
        }
        for (const ShardPlacement::Run &run : placement.runs[d])
          for (int64_t i = 0; i < run.count; ++i)
            fill(d + 1, localIndex + (run.local + i) * localStrides[d],
                 globalIndex + (run.global + i) * globalStrides[d]);
      };
  fill(0, 0, 0);
}

void zeroPadding(const ShardPlacement &placement, ElementKind element,
                 void *buffer) {
  const int64_t bytes = elementBytes(element);
  if (placement.localElements() == 0)
    return; // an empty buffer has no padding (and maybe no address)
  auto *out = static_cast<uint8_t *>(buffer);
  if (!placement.holds) {
    std::memset(out, 0, placement.localElements() * bytes);
    return;
  }
  const std::vector<int64_t> &local = placement.localShape;
  std::vector<int64_t> localStrides = rowMajorStrides(local);
  // Along each dim, a slice at a padding position is padding as a whole
  // (one contiguous run); the slices holding data recurse. (Interleaved
  // dims have padding after each segment's block, not only at the end.)
  std::vector<std::vector<bool>> data(local.size());
  for (size_t d = 0; d < local.size(); ++d) {
    data[d].assign(local[d], false);
    for (const ShardPlacement::Run &run : placement.runs[d])
      for (int64_t i = 0; i < run.count; ++i)
        data[d][run.local + i] = true;
  }
  std::function<void(size_t, int64_t)> zero = [&](size_t d, int64_t offset) {
    if (d == local.size())
      return;
    for (int64_t i = 0; i < local[d]; ++i) {
      if (!data[d][i])
        std::memset(out + (offset + i * localStrides[d]) * bytes, 0,
                    localStrides[d] * bytes);
      else
        zero(d + 1, offset + i * localStrides[d]);
    }
  };
  zero(0, 0);
}

} // namespace dist::run
