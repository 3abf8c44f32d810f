//===- PackedCall.h - the argument list of a packed entry call --*- C++ -*-===//
//
// The compiled entry is called through its packed wrapper, `void(void **)`:
// one pointer per expanded value of the calling convention of
// include/dist/Conversion/Pipelines.h (per memref: allocated and aligned
// pointer, offset 0, sizes, row-major strides).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_PACKEDCALL_H
#define DIST_TOOLS_DIST_RUN_COMMON_PACKEDCALL_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <deque>
#include <vector>

namespace dist::run {

class PackedCall {
public:
  /// Appends the descriptor of a contiguous buffer of `shape`.
  void addMemRef(void *data, llvm::ArrayRef<int64_t> shape) {
    auto push = [&](int64_t value) {
      values.push_back(value);
      pointers.push_back(&values.back());
    };
    static_assert(sizeof(void *) == sizeof(int64_t),
                  "descriptor slots assume 64-bit pointers");
    push(reinterpret_cast<int64_t>(data)); // allocated pointer
    push(reinterpret_cast<int64_t>(data)); // aligned pointer
    push(0);                               // offset
    for (int64_t extent : shape)
      push(extent);
    std::vector<int64_t> strides(shape.size());
    int64_t stride = 1;
    for (size_t d = shape.size(); d-- > 0;) {
      strides[d] = stride;
      stride *= shape[d];
    }
    for (int64_t s : strides)
      push(s);
  }
  /// The pointers the packed wrapper takes; valid until the next addMemRef.
  llvm::MutableArrayRef<void *> arguments() { return pointers; }
  size_t numExpandedValues() const { return values.size(); }

private:
  // Every expanded value is stored as one 64-bit slot: pointers and index
  // values both occupy 8 bytes on the 64-bit hosts dist targets. A deque
  // keeps the slots in place as it grows.
  std::deque<int64_t> values;
  std::vector<void *> pointers;
};

/// Number of expanded values a memref of rank `rank` takes: 3 + 2 * rank.
inline size_t expandedDescriptorSize(size_t rank) { return 3 + 2 * rank; }

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_PACKEDCALL_H
