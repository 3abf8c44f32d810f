//===- SharedHeap.h - memory ranks on a node share --------------*- C++ -*-===//
//
// Why: an all-to-all that reorders data (S(0) -> S(1) moves column blocks
// of row-major shards) costs MPI two strided copies on one node, a pack
// into its shared-memory fragments and an unpack out of them. If a rank can
// read its peers' buffers directly, each element is copied once, strided
// source to strided destination, with plain loads and stores: the single
// copy that xpmem or CMA give MPI for contiguous messages, without kernel
// page pinning on every strided row.
//
// How: the MPI backend allocates every host buffer of a program (distRtAlloc
// and the compiled code's own allocations both land there) from one large
// memfd mapping per process, reserved up front and backed lazily by the
// kernel. Peers on the node open that memfd through /proc/<pid>/fd/<fd> and
// map it once, at init, so a pointer into a peer's heap is simply its
// offset. The identity check (device and inode of the memfd) makes sure
// a peer maps the file its owner published, even across pid namespaces.
//
// Freed blocks give their whole pages back to the kernel (hole punching),
// as munmap would for a large malloc block.
//
// Linux only; elsewhere create() fails and the runtime keeps malloc memory.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_SHAREDHEAP_H
#define DIST_LIB_RUNTIME_SHAREDHEAP_H

#include "RangeAllocator.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace dist::rt {

/// What a peer needs to map a heap: published by the owner, checked by the
/// peer. Plain integers so that it travels in an MPI_Allgather of int64s.
struct SharedHeapIdentity {
  int64_t pid = 0;
  int64_t fd = -1;
  int64_t bytes = 0; // 0: this process has no heap
  int64_t device = 0;
  int64_t inode = 0;
  static constexpr int kFields = 5;
};

class SharedHeap {
public:
  /// Reserves `bytes` (rounded up to pages) of shareable address space.
  /// Returns null and sets `why` when the system refuses.
  static std::unique_ptr<SharedHeap> create(uint64_t bytes, std::string &why);
  ~SharedHeap();
  SharedHeap(const SharedHeap &) = delete;
  SharedHeap &operator=(const SharedHeap &) = delete;

  /// A block of `bytes` (> 0): 64-byte aligned, page aligned from 64 KiB
  /// up. Null when the heap is full (the caller then uses other memory).
  void *allocate(size_t bytes);
  /// Frees a block from allocate(); false when `ptr` is not one.
  bool deallocate(void *ptr);

  /// Offset of [ptr, ptr + bytes) in the heap, or -1 when the range is not
  /// entirely inside it.
  int64_t offsetOf(const void *ptr, size_t bytes) const;

  const SharedHeapIdentity &identity() const { return identity_; }
  char *base() const { return base_; }
  uint64_t bytes() const { return bytes_; }
  uint64_t liveBytes() const { return ranges_.liveBytes(); }

private:
  SharedHeap(int fd, char *base, uint64_t bytes, const SharedHeapIdentity &id);
  void punch(const RangeAllocator::Range &freed,
             const RangeAllocator::Range &coalesced);

  int fd_;
  char *base_;
  uint64_t bytes_;
  SharedHeapIdentity identity_;
  RangeAllocator ranges_;
};

/// Another process's heap mapped into this one (read and write: a strided
/// all-to-all may push into a peer's receive buffer).
class PeerHeapView {
public:
  /// Maps the heap `id` describes. Returns null and sets `why` when the
  /// memfd cannot be opened or is not the one published.
  static std::unique_ptr<PeerHeapView> map(const SharedHeapIdentity &id,
                                           std::string &why);
  ~PeerHeapView();
  PeerHeapView(const PeerHeapView &) = delete;
  PeerHeapView &operator=(const PeerHeapView &) = delete;

  char *base() const { return base_; }
  uint64_t bytes() const { return bytes_; }

private:
  PeerHeapView(char *base, uint64_t bytes) : base_(base), bytes_(bytes) {}
  char *base_;
  uint64_t bytes_;
};

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_SHAREDHEAP_H
