//===- Tensors.h - dist-run's inputs, padding and .npy output ---*- C++ -*-===//
//
// The inputs semantics §5 defines: every argument's *global* tensor is iota, a
// seeded pseudo-random tensor or an array read from a NumPy .npy file, and
// each rank receives its local padded shard
// (semantics §2) with the padding zero. A partial argument is held by the device
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
//   npy:DIR      element i of DIR/arg<k>.npy (argument k), converted to the
//                element type (see NpyInput).
// The values do not depend on the rank, the layout or the mesh, so an
// independent checker can recompute every global tensor.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_TENSORS_H
#define DIST_TOOLS_DIST_RUN_TENSORS_H

#include "Program.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
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

/// The global value of one argument read from a NumPy .npy file (format 1.0,
/// 2.0 or 3.0, C order). open() checks everything before any data is used:
/// the magic string, the version, the header (a Python dict literal with
/// 'descr', 'fortran_order' and 'shape'), the dtype (little endian: '<f2',
/// '<f4', '<f8', '|i1', '<i2', '<i4', '<i8', '|u1', '<u2', '<u4', '<u8',
/// '|b1'; '<' and '|' are interchangeable for one-byte types), C order, the
/// shape (equal to the argument's global shape) and the file size (exactly
/// header plus data). The file is mapped, never copied, so a bad header
/// cannot cause a large allocation.
///
/// Conversion to the argument's element type, element by element:
///   floats -> float types: nearest value, ties to even, in one rounding step
///                          (bf16 from float32 included);
///   integers and bools -> float types: the same, from the exact integer;
///   integers and bools -> integer types: two's complement wrap-around to
///                          the width (i1 keeps the lowest bit; a bool is 0
///                          or 1);
///   floats -> integer types: refused by open() (whatever the values).
class NpyInput {
public:
  /// Opens and checks `path` as the global value of argument `argument`
  /// (its index, for messages) of signature `sig`. Every error names the
  /// file.
  static llvm::Expected<NpyInput> open(llvm::StringRef path, size_t argument,
                                       const TensorSignature &sig);

  /// Writes the global element with row-major linear index `index`,
  /// converted to the argument's element type, into `dst`.
  void storeElement(int64_t index, void *dst) const;

  /// The dtype as the header spells it ('<f4').
  llvm::StringRef descr() const { return descrText; }

private:
  enum class Source { Float, Signed, Unsigned, Bool };
  std::unique_ptr<llvm::MemoryBuffer> file;
  const uint8_t *data = nullptr;
  Source source = Source::Float;
  int64_t itemBytes = 0;
  std::string descrText;
  ElementKind element = ElementKind::F32;
};

/// SplitMix64's output number `n` (n >= 1) for `seed`.
uint64_t splitMix64(uint64_t seed, uint64_t n);

/// Writes the element of the global input with linear index `index` into
/// `dst` (elementBytes(kind) bytes).
void storeGlobalElement(const InputSpec &input, ElementKind kind,
                        int64_t index, void *dst);

/// Fills `buffer` (sig.localBytes() bytes) with the local padded shard the
/// device at world rank `rank` holds of the argument's global input: padding
/// zero, and on a device that does not hold a partial value the reduction's
/// identity. `globalElement(i, dst)` writes the global element of row-major
/// linear index i, in the element type, to dst.
void materializeArgument(
    const TensorSignature &sig,
    llvm::function_ref<void(int64_t index, void *dst)> globalElement,
    int64_t rank, void *buffer);

/// The same for an iota or random:SEED input (not npy:DIR, whose elements
/// come from an NpyInput).
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
