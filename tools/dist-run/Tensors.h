//===- Tensors.h - dist-run's inputs, padding and .npy output ---*- C++ -*-===//
//
// The inputs SPEC §5 defines: every argument's *global* tensor is iota or a
// seeded pseudo-random tensor, and each rank receives its local padded shard
// (SPEC §2) with the padding zero. A partial argument is held by the device
// with coordinate 0 on every partial axis; the others hold the reduction's
// identity (0 for sum, 1 for prod, the value itself for max, min and avg).
//
// Global values, for the element at row-major linear index i:
//   iota         i, converted to the element type: the nearest representable
//                value for floats (ties to even), two's complement wrap-around
//                for integers (i1 keeps the lowest bit).
//   random:SEED  z = the (i+1)-th output of SplitMix64 seeded with SEED;
//                floats: k/16 with k = (z >> 40) mod 2048 - 1024, i.e. a
//                multiple of 1/16 in [-64, 64), then converted as above;
//                i1: z >> 63; other integers: (z >> 40) mod 201 - 100.
// The values do not depend on the rank, the layout or the mesh, so an
// independent checker can recompute every global tensor.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_TENSORS_H
#define DIST_TOOLS_DIST_RUN_TENSORS_H

#include "Program.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace dist::run {

struct InputSpec {
  enum Kind { Iota, Random } kind = Iota;
  uint64_t seed = 0;

  /// Parses "iota" or "random:SEED" (SEED a decimal 64-bit unsigned integer).
  static llvm::Expected<InputSpec> parse(llvm::StringRef text);
  std::string str() const;
};

/// SplitMix64's output number `n` (n >= 1) for `seed`.
uint64_t splitMix64(uint64_t seed, uint64_t n);

/// Writes the element of the global input with linear index `index` into
/// `dst` (elementBytes(kind) bytes).
void storeGlobalElement(const InputSpec &input, ElementKind kind,
                        int64_t index, void *dst);

/// Fills `buffer` (sig.localBytes() bytes) with the local padded shard the
/// device at world rank `rank` holds of the argument's global input.
void materializeArgument(const TensorSignature &sig, const InputSpec &input,
                         int64_t rank, void *buffer);

/// Zeroes every padding position (past the device's block on some dim) of a
/// local padded buffer of `sig` on world rank `rank`.
void zeroPadding(const TensorSignature &sig, int64_t rank, void *buffer);

/// Writes a local padded buffer as a NumPy .npy file (format 1.0, C order,
/// little endian) of the local shape. bf16 is widened exactly to '<f4'
/// (NumPy has no bfloat16); the other types keep their width ('<f2' for f16,
/// '|b1' for i1).
llvm::Error writeNpy(llvm::StringRef path, const TensorSignature &sig,
                     const void *buffer);

/// The NumPy dtype string `writeNpy` uses for an element type.
llvm::StringRef npyDescr(ElementKind kind);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_TENSORS_H
