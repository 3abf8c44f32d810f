//===- BlockCache.h - reuse of freed backend buffers ------------*- C++ -*-===//
//
// Compiled programs allocate and free the same temporaries (all-to-all pack
// buffers, gathered blocks) on every call. Going to the system each time is
// slow: large host blocks are fresh mmaps that fault and zero every page,
// and cudaFree synchronizes the device. Freed blocks are therefore kept by
// exact size (rounded to 64 bytes) and handed out again.
//
// Reuse is safe because all work of compiled code is ordered on one stream
// (the runtime's default stream): a block freed after enqueuing its last use
// is only reused by work enqueued later on that stream.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_BLOCKCACHE_H
#define DIST_LIB_RUNTIME_BLOCKCACHE_H

#include <cstddef>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

namespace dist::rt {

class BlockCache {
public:
  using Allocate = std::function<void *(size_t)>;
  using Release = std::function<void(void *)>;

  /// `limit` bounds the bytes kept while unused.
  BlockCache(Allocate allocate, Release release, size_t limit)
      : allocate(std::move(allocate)), release(std::move(release)),
        limit(limit) {}
  BlockCache(const BlockCache &) = delete;
  BlockCache &operator=(const BlockCache &) = delete;
  ~BlockCache() { trim(); }

  /// A block of at least `bytes`, reused when one of that size is free.
  void *get(size_t bytes);
  /// Returns a block from get(); false if the cache does not own it.
  bool put(void *ptr);
  /// Releases every unused block to the system.
  void trim();

  size_t cachedBytes() const { return cached; }
  size_t liveBlocks() const { return live.size(); }

  static size_t roundUp(size_t bytes) { return (bytes + 63) / 64 * 64; }

private:
  Allocate allocate;
  Release release;
  size_t limit;
  size_t cached = 0;
  std::map<size_t, std::vector<void *>> free; // by rounded size
  std::unordered_map<void *, size_t> live;    // block -> rounded size
};

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_BLOCKCACHE_H
