//===- RangeAllocator.cpp - best-fit ranges inside a fixed region ---------===//

#include "RangeAllocator.h"

#include <iterator>

namespace dist::rt {

RangeAllocator::RangeAllocator(uint64_t capacity) : capacity_(capacity) {
  if (capacity > 0)
    insertFree(0, capacity);
}

void RangeAllocator::insertFree(uint64_t offset, uint64_t size) {
  freeByOffset_.emplace(offset, size);
  freeBySize_.emplace(size, offset);
}

void RangeAllocator::eraseFree(std::map<uint64_t, uint64_t>::iterator it) {
  freeBySize_.erase({it->second, it->first});
  freeByOffset_.erase(it);
}

std::optional<uint64_t> RangeAllocator::allocate(uint64_t bytes,
                                                 uint64_t alignment) {
  if (bytes == 0 || alignment == 0 || (alignment & (alignment - 1)) != 0)
    return std::nullopt;
  // Smallest free range that holds the block once its start is aligned.
  // Ranges of the same size are tried in offset order, and a range that
  // fails only for alignment is skipped, so the search stays short: every
  // range is at least 64-byte aligned and alignments are at most a page.
  for (auto it = freeBySize_.lower_bound({bytes, 0}); it != freeBySize_.end();
       ++it) {
    const uint64_t size = it->first, offset = it->second;
    const uint64_t start = (offset + alignment - 1) & ~(alignment - 1);
    const uint64_t head = start - offset;
    if (head > size || size - head < bytes)
      continue;
    const uint64_t tail = size - head - bytes;
    eraseFree(freeByOffset_.find(offset));
    if (head > 0)
      insertFree(offset, head);
    if (tail > 0)
      insertFree(start + bytes, tail);
    live_.emplace(start, bytes);
    liveBytes_ += bytes;
    return start;
  }
  return std::nullopt;
}

std::optional<RangeAllocator::Range> RangeAllocator::release(uint64_t offset,
                                                             Range *coalesced) {
  auto found = live_.find(offset);
  if (found == live_.end())
    return std::nullopt;
  const Range freed{offset, found->second};
  live_.erase(found);
  liveBytes_ -= freed.size;

  Range merged = freed;
  // The free neighbour after, then the one before.
  auto next = freeByOffset_.lower_bound(freed.end());
  if (next != freeByOffset_.end() && next->first == freed.end()) {
    merged.size += next->second;
    eraseFree(next);
  }
  auto after = freeByOffset_.lower_bound(merged.offset);
  if (after != freeByOffset_.begin()) {
    auto prev = std::prev(after);
    if (prev->first + prev->second == merged.offset) {
      merged.offset = prev->first;
      merged.size += prev->second;
      eraseFree(prev);
    }
  }
  insertFree(merged.offset, merged.size);
  if (coalesced)
    *coalesced = merged;
  return freed;
}

} // namespace dist::rt
