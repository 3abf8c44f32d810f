//===- BlockCacheTests.cpp - reuse of freed backend buffers ---------------===//

#include "../../lib/Runtime/BlockCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <set>

using dist::rt::BlockCache;

namespace {

/// Counts what reaches the "system" allocator. Tests return every block
/// they take, so once their cache is gone nothing may be left (which
/// LeakSanitizer would also report).
struct System {
  int allocations = 0, releases = 0;
  std::set<void *> live;
  ~System() { EXPECT_TRUE(live.empty()) << live.size() << " blocks leaked"; }
  BlockCache cache(size_t limit) {
    return BlockCache(
        [this](size_t bytes) {
          ++allocations;
          void *p = std::malloc(bytes);
          live.insert(p);
          return p;
        },
        [this](void *p) {
          ++releases;
          live.erase(p);
          std::free(p);
        },
        limit);
  }
};

TEST(BlockCacheTest, ReusesAFreedBlockOfTheSameSize) {
  System system;
  BlockCache cache = system.cache(1 << 20);
  void *a = cache.get(1000);
  ASSERT_TRUE(cache.put(a));
  void *b = cache.get(1000);
  EXPECT_EQ(a, b);
  EXPECT_EQ(system.allocations, 1);
  // 1000 and 1010 round to the same 64-byte size class.
  ASSERT_TRUE(cache.put(b));
  EXPECT_EQ(cache.get(1010), a);
  EXPECT_EQ(system.allocations, 1);
  EXPECT_TRUE(cache.put(a)); // every block goes back (LeakSanitizer)
}

TEST(BlockCacheTest, OtherSizesGetTheirOwnBlocks) {
  System system;
  BlockCache cache = system.cache(1 << 20);
  void *a = cache.get(64);
  ASSERT_TRUE(cache.put(a));
  void *b = cache.get(128);
  EXPECT_NE(a, b);
  EXPECT_EQ(system.allocations, 2);
  EXPECT_EQ(cache.cachedBytes(), 64u);
  EXPECT_TRUE(cache.put(b));
}

TEST(BlockCacheTest, LiveBlocksAreNeverHandedOutTwice) {
  System system;
  BlockCache cache = system.cache(1 << 20);
  void *a = cache.get(256), *b = cache.get(256);
  EXPECT_NE(a, b);
  EXPECT_EQ(cache.liveBlocks(), 2u);
  EXPECT_TRUE(cache.put(a));
  EXPECT_TRUE(cache.put(b));
  EXPECT_EQ(cache.liveBlocks(), 0u);
}

TEST(BlockCacheTest, RespectsTheLimit) {
  System system;
  BlockCache cache = system.cache(128);
  void *a = cache.get(128), *b = cache.get(128);
  ASSERT_TRUE(cache.put(a));
  ASSERT_TRUE(cache.put(b)); // over the limit: released at once
  EXPECT_EQ(system.releases, 1);
  EXPECT_EQ(cache.cachedBytes(), 128u);
}

TEST(BlockCacheTest, RejectsForeignPointersAndReleasesEverything) {
  System system;
  {
    BlockCache cache = system.cache(1 << 20);
    int local = 0;
    EXPECT_FALSE(cache.put(&local));
    void *a = cache.get(100);
    ASSERT_TRUE(cache.put(a));
    EXPECT_FALSE(cache.put(a)); // a double free is caught, not cached twice
  }
  EXPECT_TRUE(system.live.empty());
}

TEST(BlockCacheTest, ZeroLimitMeansNoCaching) {
  System system;
  BlockCache cache = system.cache(0);
  ASSERT_TRUE(cache.put(cache.get(64)));
  ASSERT_TRUE(cache.put(cache.get(64)));
  EXPECT_EQ(system.allocations, 2);
  EXPECT_EQ(system.releases, 2);
}

} // namespace
