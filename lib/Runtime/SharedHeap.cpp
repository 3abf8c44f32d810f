//===- SharedHeap.cpp - host memory that ranks on one node can read -------===//

#include "SharedHeap.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define DIST_RT_HAVE_SHARED_HEAP 1
#endif

namespace dist::rt {
namespace {

constexpr uint64_t kPage = 4096;
constexpr uint64_t kPageAlignFrom = 64 << 10;

uint64_t roundUp(uint64_t n, uint64_t to) { return (n + to - 1) / to * to; }

std::string errnoText(const char *what) {
  return std::string(what) + ": " + std::strerror(errno);
}

} // namespace

#if defined(DIST_RT_HAVE_SHARED_HEAP)

std::unique_ptr<SharedHeap> SharedHeap::create(uint64_t bytes,
                                               std::string &why) {
  bytes = roundUp(bytes, kPage);
  if (bytes == 0 || bytes > uint64_t(INT64_MAX)) {
    why = "heap size " + std::to_string(bytes) + " is out of range";
    return nullptr;
  }
  // Close-on-exec: a program the application spawns must not inherit it.
  int fd = memfd_create("dist-runtime-heap", MFD_CLOEXEC);
  if (fd < 0) {
    why = errnoText("memfd_create");
    return nullptr;
  }
  // Sparse: pages exist only once written. MAP_NORESERVE keeps the
  // reservation out of the overcommit accounting.
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    why = errnoText("ftruncate");
    close(fd);
    return nullptr;
  }
  void *base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                    MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (base == MAP_FAILED) {
    why = errnoText("mmap");
    close(fd);
    return nullptr;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    why = errnoText("fstat");
    munmap(base, bytes);
    close(fd);
    return nullptr;
  }
  SharedHeapIdentity id;
  id.pid = getpid();
  id.fd = fd;
  id.bytes = static_cast<int64_t>(bytes);
  id.device = static_cast<int64_t>(st.st_dev);
  id.inode = static_cast<int64_t>(st.st_ino);
  return std::unique_ptr<SharedHeap>(
      new SharedHeap(fd, static_cast<char *>(base), bytes, id));
}

SharedHeap::SharedHeap(int fd, char *base, uint64_t bytes,
                       const SharedHeapIdentity &id)
    : fd_(fd), base_(base), bytes_(bytes), identity_(id), ranges_(bytes) {}

SharedHeap::~SharedHeap() {
  munmap(base_, bytes_);
  close(fd_);
}

void *SharedHeap::allocate(size_t bytes) {
  if (bytes == 0)
    return nullptr;
  // Large blocks are whole pages, so that freeing them can return every
  // page; small ones share pages at cache-line granularity.
  const bool large = bytes >= kPageAlignFrom;
  const uint64_t alignment = large ? kPage : 64;
  std::optional<uint64_t> offset =
      ranges_.allocate(roundUp(bytes, alignment), alignment);
  return offset ? base_ + *offset : nullptr;
}

bool SharedHeap::deallocate(void *ptr) {
  const char *p = static_cast<const char *>(ptr);
  if (p < base_ || p >= base_ + bytes_)
    return false;
  RangeAllocator::Range coalesced;
  std::optional<RangeAllocator::Range> freed =
      ranges_.release(static_cast<uint64_t>(p - base_), &coalesced);
  if (!freed)
    return false;
  punch(*freed, coalesced);
  return true;
}

void SharedHeap::punch(const RangeAllocator::Range &freed,
                       const RangeAllocator::Range &coalesced) {
  // The freed block's pages, widened to the pages its free neighbours now
  // complete, but no further: the rest of the free range was punched when
  // it was freed.
  uint64_t first = roundUp(coalesced.offset, kPage);
  uint64_t last = coalesced.end() / kPage * kPage;
  first = std::max(first, freed.offset / kPage * kPage);
  last = std::min(last, roundUp(freed.end(), kPage));
  if (first >= last)
    return;
  // Failure only means the pages stay resident until reused: no effect on
  // data, so it is not an error.
  (void)fallocate(fd_, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                  static_cast<off_t>(first), static_cast<off_t>(last - first));
}

int64_t SharedHeap::offsetOf(const void *ptr, size_t bytes) const {
  const char *p = static_cast<const char *>(ptr);
  if (p < base_ || p > base_ + bytes_ ||
      bytes > static_cast<uint64_t>(base_ + bytes_ - p))
    return -1;
  return p - base_;
}

std::unique_ptr<PeerHeapView> PeerHeapView::map(const SharedHeapIdentity &id,
                                                std::string &why) {
  if (id.bytes <= 0 || id.fd < 0) {
    why = "the peer has no shared heap";
    return nullptr;
  }
  const std::string path =
      "/proc/" + std::to_string(id.pid) + "/fd/" + std::to_string(id.fd);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    why = errnoText(("open " + path).c_str());
    return nullptr;
  }
  // The same pid may name another process here (pid namespaces): only the
  // owner's memfd itself is acceptable.
  struct stat st;
  if (fstat(fd, &st) != 0 || static_cast<int64_t>(st.st_dev) != id.device ||
      static_cast<int64_t>(st.st_ino) != id.inode ||
      static_cast<int64_t>(st.st_size) < id.bytes) {
    why = path + " is not the heap that process published";
    close(fd);
    return nullptr;
  }
  void *base = mmap(nullptr, static_cast<size_t>(id.bytes),
                    PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  // The mapping keeps the file alive; the descriptor is not needed.
  close(fd);
  if (base == MAP_FAILED) {
    why = errnoText(("mmap " + path).c_str());
    return nullptr;
  }
  return std::unique_ptr<PeerHeapView>(new PeerHeapView(
      static_cast<char *>(base), static_cast<uint64_t>(id.bytes)));
}

PeerHeapView::~PeerHeapView() { munmap(base_, bytes_); }

#else // !DIST_RT_HAVE_SHARED_HEAP

std::unique_ptr<SharedHeap> SharedHeap::create(uint64_t, std::string &why) {
  why = "shared heaps need Linux (memfd)";
  return nullptr;
}
SharedHeap::~SharedHeap() = default;
void *SharedHeap::allocate(size_t) { return nullptr; }
bool SharedHeap::deallocate(void *) { return false; }
int64_t SharedHeap::offsetOf(const void *, size_t) const { return -1; }
void SharedHeap::punch(const RangeAllocator::Range &,
                       const RangeAllocator::Range &) {}
std::unique_ptr<PeerHeapView> PeerHeapView::map(const SharedHeapIdentity &,
                                                std::string &why) {
  why = "shared heaps need Linux (memfd)";
  return nullptr;
}
PeerHeapView::~PeerHeapView() = default;

#endif

} // namespace dist::rt
