//===- SharedHeapTests.cpp - the shareable host heap and its bookkeeping --===//

#include "../../lib/Runtime/RangeAllocator.h"
#include "../../lib/Runtime/SharedHeap.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <random>
#include <vector>

#if defined(__linux__)
#include <sys/stat.h>
#endif

using dist::rt::PeerHeapView;
using dist::rt::RangeAllocator;
using dist::rt::SharedHeap;
using dist::rt::SharedHeapIdentity;

namespace {

TEST(RangeAllocator, BestFitSplitsAndCoalesces) {
  RangeAllocator a(1024);
  auto x = a.allocate(100, 64);
  auto y = a.allocate(200, 64);
  auto z = a.allocate(300, 64);
  ASSERT_TRUE(x && y && z);
  EXPECT_EQ(*x, 0u);
  EXPECT_EQ(*y, 128u); // 100 ends at 100; the next start aligned to 64
  EXPECT_EQ(*z, 384u);
  EXPECT_EQ(a.liveBytes(), 600u);

  // Freeing the middle block leaves the hole [100, 384), which a 200-byte
  // block fits best, ahead of the large tail.
  RangeAllocator::Range merged;
  auto freed = a.release(*y, &merged);
  ASSERT_TRUE(freed);
  EXPECT_EQ(freed->offset, 128u);
  EXPECT_EQ(freed->size, 200u);
  EXPECT_EQ(merged.offset, 100u); // joined with the alignment gap before it
  EXPECT_EQ(merged.end(), 384u);
  auto w = a.allocate(200, 64);
  ASSERT_TRUE(w);
  EXPECT_EQ(*w, 128u);

  // Freeing everything gives back one range covering the whole region.
  a.release(*x);
  a.release(*w);
  a.release(*z, &merged);
  EXPECT_EQ(a.liveBytes(), 0u);
  EXPECT_EQ(a.liveCount(), 0u);
  EXPECT_EQ(a.freeRangeCount(), 1u);
  EXPECT_EQ(merged.offset, 0u);
  EXPECT_EQ(merged.size, 1024u);
}

TEST(RangeAllocator, RefusesWhatDoesNotFit) {
  RangeAllocator a(4096);
  EXPECT_FALSE(a.allocate(0, 64));    // nothing to allocate
  EXPECT_FALSE(a.allocate(64, 48));   // alignment not a power of two
  EXPECT_FALSE(a.allocate(4097, 64)); // larger than the region
  auto x = a.allocate(4000, 64);
  ASSERT_TRUE(x);
  EXPECT_FALSE(a.allocate(128, 64)); // 96 bytes left
  EXPECT_TRUE(a.allocate(96, 32));
  EXPECT_FALSE(a.release(*x + 64)); // not the start of a block
  EXPECT_FALSE(a.release(123456));
  EXPECT_TRUE(a.release(*x));
  EXPECT_FALSE(a.release(*x)); // twice
}

TEST(RangeAllocator, AlignmentIsHonouredInsideALargerRange) {
  RangeAllocator a(3 * 4096);
  auto small = a.allocate(64, 64);
  auto page = a.allocate(4096, 4096);
  ASSERT_TRUE(small && page);
  EXPECT_EQ(*page % 4096, 0u);
  EXPECT_EQ(*page, 4096u);
  // The gap before the page stays usable.
  auto gap = a.allocate(4096 - 64, 64);
  ASSERT_TRUE(gap);
  EXPECT_EQ(*gap, 64u);
}

// Random allocations and frees against a reference: blocks never overlap,
// stay inside the region, honour their alignment, and freeing everything
// restores one free range.
TEST(RangeAllocator, RandomWorkloadNeverOverlaps) {
  std::mt19937_64 rng(7);
  const uint64_t capacity = 1 << 20;
  RangeAllocator a(capacity);
  std::map<uint64_t, uint64_t> live; // offset -> size
  for (int step = 0; step < 20000; ++step) {
    const bool allocate = live.empty() || rng() % 3 != 0;
    if (allocate) {
      const uint64_t size = 1 + rng() % (rng() % 8 == 0 ? 100000 : 3000);
      const uint64_t alignment = uint64_t(64) << (rng() % 7);
      auto offset = a.allocate(size, alignment);
      if (!offset)
        continue;
      ASSERT_EQ(*offset % alignment, 0u);
      ASSERT_LE(*offset + size, capacity);
      auto next = live.lower_bound(*offset);
      if (next != live.end()) {
        ASSERT_LE(*offset + size, next->first) << "overlaps the next block";
      }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second, *offset)
            << "overlaps the previous block";
      }
      live.emplace(*offset, size);
    } else {
      auto it = std::next(live.begin(), rng() % live.size());
      auto freed = a.release(it->first);
      ASSERT_TRUE(freed);
      ASSERT_EQ(freed->size, it->second);
      live.erase(it);
    }
    uint64_t bytes = 0;
    for (auto &[offset, size] : live)
      bytes += size;
    ASSERT_EQ(a.liveBytes(), bytes);
  }
  for (auto &[offset, size] : live)
    ASSERT_TRUE(a.release(offset));
  EXPECT_EQ(a.freeRangeCount(), 1u);
  EXPECT_EQ(a.allocate(capacity, 64), std::optional<uint64_t>(0));
}

#if defined(__linux__)

TEST(SharedHeap, AllocatesAlignedBlocksAndFallsShortWhenFull) {
  std::string why;
  auto heap = SharedHeap::create(1 << 20, why);
  ASSERT_TRUE(heap) << why;
  void *small = heap->allocate(10);
  void *large = heap->allocate(100 << 10);
  ASSERT_TRUE(small && large);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % 4096, 0u);
  std::memset(large, 0x5a, 100 << 10);
  EXPECT_EQ(heap->offsetOf(large, 100 << 10),
            static_cast<const char *>(large) - heap->base());
  EXPECT_EQ(heap->offsetOf(large, 2 << 20), -1); // runs past the end
  int onStack = 0;
  EXPECT_EQ(heap->offsetOf(&onStack, sizeof onStack), -1);
  EXPECT_EQ(heap->allocate(2 << 20), nullptr); // more than the heap holds
  EXPECT_FALSE(heap->deallocate(&onStack));
  EXPECT_FALSE(heap->deallocate(static_cast<char *>(large) + 64));
  EXPECT_TRUE(heap->deallocate(small));
  EXPECT_TRUE(heap->deallocate(large));
  EXPECT_EQ(heap->liveBytes(), 0u);
}

TEST(SharedHeap, FreeingReturnsThePagesToTheSystem) {
  std::string why;
  auto heap = SharedHeap::create(64 << 20, why);
  ASSERT_TRUE(heap) << why;
  const SharedHeapIdentity &id = heap->identity();
  auto residentBytes = [&] {
    struct stat st;
    EXPECT_EQ(fstat(static_cast<int>(id.fd), &st), 0);
    return static_cast<int64_t>(st.st_blocks) * 512;
  };
  const int64_t before = residentBytes();
  void *block = heap->allocate(16 << 20);
  ASSERT_TRUE(block);
  std::memset(block, 1, 16 << 20);
  EXPECT_GE(residentBytes() - before, int64_t(16) << 20);
  ASSERT_TRUE(heap->deallocate(block));
  EXPECT_LT(residentBytes() - before, int64_t(1) << 20);
}

TEST(SharedHeap, APeerViewSeesTheOwnersBytes) {
  std::string why;
  auto heap = SharedHeap::create(8 << 20, why);
  ASSERT_TRUE(heap) << why;
  char *block = static_cast<char *>(heap->allocate(1 << 20));
  ASSERT_TRUE(block);
  std::strcpy(block + 12345, "written by the owner");

  // This process stands in for a peer: it maps the heap by its identity.
  auto view = PeerHeapView::map(heap->identity(), why);
  ASSERT_TRUE(view) << why;
  ASSERT_EQ(view->bytes(), heap->bytes());
  const int64_t offset = heap->offsetOf(block, 1 << 20);
  EXPECT_STREQ(view->base() + offset + 12345, "written by the owner");
  // Writes through the view land in the owner's block (a push).
  std::strcpy(view->base() + offset + 100, "pushed by a peer");
  EXPECT_STREQ(block + 100, "pushed by a peer");
}

TEST(SharedHeap, APeerViewRefusesAnotherFile) {
  std::string why;
  auto heap = SharedHeap::create(1 << 20, why);
  ASSERT_TRUE(heap) << why;
  SharedHeapIdentity wrong = heap->identity();
  wrong.inode += 1; // e.g. a pid that names another process
  EXPECT_EQ(PeerHeapView::map(wrong, why), nullptr);
  EXPECT_NE(why.find("is not the heap that process published"),
            std::string::npos)
      << why;
  SharedHeapIdentity missing = heap->identity();
  missing.fd = 1 << 20; // no such descriptor
  EXPECT_EQ(PeerHeapView::map(missing, why), nullptr);
  EXPECT_NE(why.find("open /proc/"), std::string::npos) << why;
  EXPECT_EQ(PeerHeapView::map(SharedHeapIdentity(), why), nullptr);
  EXPECT_EQ(why, "the peer has no shared heap");
}

#endif // __linux__

} // namespace
