//===- Allocation.cpp - Buffers the runtime hands out and borrows ---------===//

#include "Allocation.h"

#include "State.h"

#include <cstdlib>

namespace dist::rt {

std::unique_ptr<BlockCache> createBlockCache(Backend &backend) {
  size_t cacheBytes = size_t(1024) << 20;
  if (const char *v = std::getenv("DIST_RT_CACHE_MIB"))
    cacheBytes = static_cast<size_t>(std::strtoull(v, nullptr, 10)) << 20;
  Backend *owner = &backend;
  return std::make_unique<BlockCache>(
      [owner](size_t bytes) { return owner->allocate(bytes); },
      [owner](void *ptr) { owner->deallocate(ptr); }, cacheBytes);
}

StagingBlock::~StagingBlock() {
  if (block)
    S.blocks->put(block);
}

void *StagingBlock::get(size_t bytes) {
  block = S.blocks->get(bytes);
  return block;
}

} // namespace dist::rt
