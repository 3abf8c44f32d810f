//===- NodeHeaps.h - the shared heaps of the ranks on this node -*- C++ -*-===//
//
// The MPI backend's host memory (SharedHeap.h), and views of the heaps of
// the other ranks on this node. With them a strided all-to-all is one copy
// per element (directAllToAll): each member either writes its chunks
// straight into the peers' receive buffers or reads them straight out of
// the peers' send buffers, instead of MPI packing into shared-memory
// fragments and unpacking out of them.
//
// Every decision about whether that path applies is made from data all
// members hold (a world-wide agreement at init, an allgather per call), so
// members never disagree on the path and never deadlock.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_NODEHEAPS_H
#define DIST_LIB_RUNTIME_NODEHEAPS_H

#include "Backend.h"
#include "SharedHeap.h"

#include <memory>
#include <string>
#include <vector>

namespace dist::rt {

/// Where each member of a group keeps its heap, as this process sees it.
struct GroupHeaps {
  /// Empty when some member is not on this node or heaps are off.
  std::vector<char *> bases;
  std::vector<uint64_t> bytes;
  std::vector<int> worldRanks; // of the members, by group rank
  std::string unavailable;     // why `bases` is empty
};

class NodeHeaps {
public:
  /// Creates this process's heap of `heapBytes` (0: none) and maps the
  /// heaps of the other ranks on the node. Collective over `world`; every
  /// rank ends with the same verdict on whether heaps are shared.
  void init(MPI_Comm world, uint64_t heapBytes);
  void finalize() noexcept;

  /// Host memory: from the heap while it has room, else aligned_alloc.
  void *allocate(size_t bytes);
  void deallocate(void *ptr);

  /// The heaps of the members of `group` (a communicator over a subset of
  /// the world given to init).
  GroupHeaps groupHeaps(MPI_Comm group) const;

  /// The strided all-to-all by direct copies between the members' heaps.
  /// Returns false, having moved nothing and with `why` set, when neither
  /// all send buffers nor all receive buffers are in their owners' heaps,
  /// or when the members' chunk shapes differ; the same on every member.
  /// Collective over `group`.
  bool directAllToAll(MPI_Comm group, const GroupHeaps &heaps, const void *send,
                      const ChunkBoxes &sendBoxes, void *recv,
                      const ChunkBoxes &recvBoxes, size_t elemBytes,
                      std::string &why) const;

  bool shared() const { return shared_; }

  /// Offset of [ptr, ptr + bytes) in this rank's heap, or -1 when it is not
  /// entirely inside it or heaps are not shared.
  int64_t ownOffset(const void *ptr, size_t bytes) const;

  /// The heap of world rank `rank` as mapped here (this rank's own heap for
  /// itself): false when heaps are not shared or the rank is on another
  /// node. Symmetric: a and b see each other's heaps or neither does.
  bool peerHeap(int rank, char *&base, uint64_t &bytes) const;

  /// The number of ranks on this node (known after init).
  int nodeSize() const { return nodeSize_; }

private:
  int nodeSize_ = 1;
  MPI_Comm world_ = MPI_COMM_NULL;
  int worldRank_ = 0;
  std::unique_ptr<SharedHeap> heap_;
  std::vector<std::unique_ptr<PeerHeapView>> peers_; // by world rank
  bool shared_ = false;
  std::string unavailable_; // why !shared_
};

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_NODEHEAPS_H
