//===- Allocation.h - Buffers the runtime hands out and borrows -*- C++ -*-===//
//
// Every buffer of the backend's memory that the runtime hands out
// (distRtAlloc, and through it every buffer of a compiled program) or
// borrows for staging goes through one BlockCache (BlockCache.h) over the
// backend's allocator, so that freed blocks are reused instead of going
// back to the system on every call.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_ALLOCATION_H
#define DIST_LIB_RUNTIME_ALLOCATION_H

#include "Backend.h"
#include "BlockCache.h"

#include <cstddef>
#include <memory>

namespace dist::rt {

/// The cache over `backend`'s memory. It keeps DIST_RT_CACHE_MIB of unused
/// blocks (default 1024; 0 turns the cache off, which tests of allocation
/// failures may want).
std::unique_ptr<BlockCache> createBlockCache(Backend &backend);

/// A temporary from the process's cache, returned to it on every path out
/// of the scope, errors included. Empty until get().
class StagingBlock {
public:
  StagingBlock() = default;
  StagingBlock(const StagingBlock &) = delete;
  StagingBlock &operator=(const StagingBlock &) = delete;
  ~StagingBlock();

  void *get(size_t bytes);
  void *data() const { return block; }

private:
  void *block = nullptr;
};

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_ALLOCATION_H
