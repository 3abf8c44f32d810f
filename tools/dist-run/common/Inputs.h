//===- Inputs.h - dist-run's global inputs and local shards -----*- C++ -*-===//
//
// The inputs semantics §5 defines: every argument's *global* tensor is iota, a
// seeded pseudo-random tensor or an array read from a NumPy .npy file, and
// each rank receives its local padded shard (semantics §2) with the padding
// zero. A partial argument is held by the device with coordinate 0 on every
// partial axis; the others hold the reduction's identity (0 for sum, 1 for
// prod, the value itself for max, min and avg).
//
// Global values, for the element at row-major linear index i:
//   iota         i, converted to the element type: the nearest representable
//                value for floats (ties to even), two's complement wrap-around
//                for integers (i1 keeps the lowest bit).
//   random:SEED  z = the (i+1)-th output of SplitMix64 seeded with SEED;
//                floats: k/16 with k = (z >> 40) mod 2048 - 1024, i.e. a
//                multiple of 1/16 in [-64, 64), then converted as above;
//                i1: z >> 63; other integers: (z >> 40) mod 201 - 100.
//   npy:DIR      element i of DIR/arg<k>.npy (argument k), converted to the
//                element type (Npy.h).
// The values do not depend on the rank, the layout or the mesh, so an
// independent checker can recompute every global tensor.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_INPUTS_H
#define DIST_TOOLS_DIST_RUN_COMMON_INPUTS_H

#include "Elements.h"
#include "Placement.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace dist::run {

struct InputSpec {
  enum Kind { Iota, Random, Npy } kind = Iota;
  uint64_t seed = 0;
  /// The folder of npy:DIR.
  std::string dir;

  /// Parses "iota", "random:SEED" (SEED a decimal 64-bit unsigned integer)
  /// or "npy:DIR" (DIR not empty).
  static llvm::Expected<InputSpec> parse(llvm::StringRef text);
  std::string str() const;
  /// DIR/arg<argument>.npy.
  std::string npyPath(size_t argument) const;
};

/// SplitMix64's output number `n` (n >= 1) for `seed`.
uint64_t splitMix64(uint64_t seed, uint64_t n);

/// Writes the element of an iota or random:SEED global input with linear
/// index `index` into `dst` (elementBytes(kind) bytes).
void storeGlobalElement(const InputSpec &input, ElementKind kind, int64_t index,
                        void *dst);

/// Fills `buffer` (the placement's local elements) with the local padded
/// shard of a global tensor of `globalShape`: padding zero, a rank outside
/// the mesh all zero, and a rank that does not hold a partial value the
/// identity. `globalElement(i, dst)` writes the global element of row-major
/// linear index i, in the element type, to dst.
void materializeShard(
    const ShardPlacement &placement, llvm::ArrayRef<int64_t> globalShape,
    ElementKind element,
    llvm::function_ref<void(int64_t index, void *dst)> globalElement,
    void *buffer);

/// Zeroes every padding position of a local padded buffer (its whole
/// buffer on a rank outside the mesh).
void zeroPadding(const ShardPlacement &placement, ElementKind element,
                 void *buffer);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_INPUTS_H
