//===- BlockCache.cpp - reuse of freed backend buffers --------------------===//

#include "BlockCache.h"

using namespace dist::rt;

void *BlockCache::get(size_t bytes) {
  size_t size = roundUp(bytes);
  auto it = free.find(size);
  void *block = nullptr;
  if (it != free.end() && !it->second.empty()) {
    block = it->second.back();
    it->second.pop_back();
    cached -= size;
  } else {
    block = allocate(size);
  }
  if (block)
    live.emplace(block, size);
  return block;
}

bool BlockCache::put(void *ptr) {
  auto it = live.find(ptr);
  if (it == live.end())
    return false;
  size_t size = it->second;
  live.erase(it);
  if (cached + size > limit) {
    release(ptr);
    return true;
  }
  free[size].push_back(ptr);
  cached += size;
  return true;
}

void BlockCache::trim() {
  for (auto &[size, blocks] : free)
    for (void *block : blocks)
      release(block);
  free.clear();
  cached = 0;
}
