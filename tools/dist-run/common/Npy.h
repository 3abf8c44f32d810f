//===- Npy.h - NumPy .npy files in and out ----------------------*- C++ -*-===//
//
// dist-run's npy:DIR inputs (the global value of an argument) and --dump
// outputs (a rank's local padded shard of a result).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_NPY_H
#define DIST_TOOLS_DIST_RUN_COMMON_NPY_H

#include "Elements.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <memory>
#include <string>

namespace dist::run {

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
  /// Opens and checks `path` as the global value of argument `argument` (its
  /// index, for messages) of global shape `globalShape` and element type
  /// `element`, whose type is spelled `typeText` (for messages). Every error
  /// names the file.
  static llvm::Expected<NpyInput> open(llvm::StringRef path, size_t argument,
                                       llvm::ArrayRef<int64_t> globalShape,
                                       ElementKind element,
                                       llvm::StringRef typeText);

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

/// Writes a local padded buffer as a NumPy .npy file (format 1.0, C order,
/// little endian) of `shape`. bf16 is widened exactly to '<f4' (NumPy has
/// no bfloat16); the other types keep their width ('<f2' for f16, '|b1' for
/// i1).
llvm::Error writeNpy(llvm::StringRef path, llvm::ArrayRef<int64_t> shape,
                     ElementKind element, const void *buffer);

/// The NumPy dtype string `writeNpy` uses for an element type.
llvm::StringRef npyDescr(ElementKind kind);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_NPY_H
