//===- RangeAllocator.h - best-fit ranges inside a fixed region -*- C++ -*-===//
//
// The bookkeeping of the shared heap (SharedHeap.h): which byte ranges of a
// fixed-size region are in use. Pure arithmetic on offsets, so that it is
// unit-tested without any memory behind it.
//
// Best fit with immediate coalescing: the heap sits below the BlockCache,
// which already recycles the hot sizes, so what reaches it is the odd large
// block, and keeping the free space in few large ranges matters more than
// the speed of a size-class allocator.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_RANGEALLOCATOR_H
#define DIST_LIB_RUNTIME_RANGEALLOCATOR_H

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

namespace dist::rt {

class RangeAllocator {
public:
  struct Range {
    uint64_t offset = 0;
    uint64_t size = 0;
    uint64_t end() const { return offset + size; }
  };

  explicit RangeAllocator(uint64_t capacity);

  /// Offset of `bytes` (> 0) starting at a multiple of `alignment` (a power
  /// of two), or nullopt when no free range has room.
  std::optional<uint64_t> allocate(uint64_t bytes, uint64_t alignment);

  /// Frees the allocation starting at `offset`. Returns the freed range and
  /// sets `*coalesced` to the free range that now contains it; nullopt (and
  /// nothing changes) when no allocation starts there.
  std::optional<Range> release(uint64_t offset, Range *coalesced = nullptr);

  uint64_t capacity() const { return capacity_; }
  uint64_t liveBytes() const { return liveBytes_; }
  size_t liveCount() const { return live_.size(); }
  size_t freeRangeCount() const { return freeByOffset_.size(); }

private:
  void insertFree(uint64_t offset, uint64_t size);
  void eraseFree(std::map<uint64_t, uint64_t>::iterator it);

  uint64_t capacity_;
  uint64_t liveBytes_ = 0;
  std::map<uint64_t, uint64_t> freeByOffset_;          // offset -> size
  std::set<std::pair<uint64_t, uint64_t>> freeBySize_; // (size, offset)
  std::unordered_map<uint64_t, uint64_t> live_;        // offset -> size
};

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_RANGEALLOCATOR_H
