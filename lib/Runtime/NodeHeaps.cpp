//===- NodeHeaps.cpp - the shared heaps of the ranks on this node ---------===//

#include "NodeHeaps.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <numeric>

namespace dist::rt {

void NodeHeaps::init(MPI_Comm world, uint64_t heapBytes) {
  world_ = world;
  MPI_Comm_rank(world, &worldRank_);
  int worldSize = 1;
  MPI_Comm_size(world, &worldSize);

  std::string why = "DIST_RT_SHARED_HEAP_MIB is 0";
  if (heapBytes > 0)
    heap_ = SharedHeap::create(heapBytes, why);
  bool ok = heap_ != nullptr;

  // Publish this heap to the ranks that share the node, and map theirs.
  MPI_Comm node = MPI_COMM_NULL;
  checkMpi(MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, worldRank_,
                               MPI_INFO_NULL, &node),
           "MPI_Comm_split_type");
  int nodeSize = 1;
  MPI_Comm_size(node, &nodeSize);
  nodeSize_ = nodeSize;
  constexpr int kRecord = 1 + SharedHeapIdentity::kFields;
  SharedHeapIdentity mine = heap_ ? heap_->identity() : SharedHeapIdentity();
  const int64_t record[kRecord] = {worldRank_, mine.pid,    mine.fd,
                                   mine.bytes, mine.device, mine.inode};
  std::vector<int64_t> records(static_cast<size_t>(kRecord) * nodeSize);
  int rc = MPI_Allgather(record, kRecord, MPI_INT64_T, records.data(), kRecord,
                         MPI_INT64_T, node);
  MPI_Comm_free(&node);
  checkMpi(rc, "MPI_Allgather (shared heaps)");

  peers_.resize(static_cast<size_t>(worldSize));
  for (int i = 0; i < nodeSize && ok; ++i) {
    const int64_t *r = &records[static_cast<size_t>(i) * kRecord];
    const int64_t peer = r[0];
    if (peer == worldRank_)
      continue;
    SharedHeapIdentity id{r[1], r[2], r[3], r[4], r[5]};
    peers_[peer] = PeerHeapView::map(id, why);
    if (!peers_[peer]) {
      why = "cannot map the heap of world rank " + std::to_string(peer) + ": " +
            why;
      ok = false;
    }
  }

  // One verdict for the whole world, so that every group decides alike.
  int failed = ok ? INT_MAX : worldRank_, firstFailed = INT_MAX;
  checkMpi(MPI_Allreduce(&failed, &firstFailed, 1, MPI_INT, MPI_MIN, world),
           "MPI_Allreduce (shared heaps)");
  shared_ = firstFailed == INT_MAX;
  if (!shared_) {
    unavailable_ =
        firstFailed == worldRank_
            ? "this rank's memory is not shared with its node (" + why + ")"
            : "world rank " + std::to_string(firstFailed) +
                  " could not share memory with its node";
    peers_.clear();
  }
}

void NodeHeaps::finalize() noexcept {
  peers_.clear();
  // Blocks the application still holds must stay readable until exit, as
  // malloc memory would: then the mapping is deliberately left in place.
  if (heap_ && heap_->liveBytes() > 0)
    (void)heap_.release();
  heap_.reset();
  shared_ = false;
}

void *NodeHeaps::allocate(size_t bytes) {
  if (heap_)
    if (void *p = heap_->allocate(bytes))
      return p;
  // 64-byte alignment: cache lines, and every vector width of the copies.
  void *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  if (!p)
    throw Error(DIST_RT_ERR_BACKEND, "out of host memory allocating " +
                                         std::to_string(bytes) + " bytes");
  return p;
}

void NodeHeaps::deallocate(void *ptr) {
  if (!heap_ || !heap_->deallocate(ptr))
    std::free(ptr);
}

int64_t NodeHeaps::ownOffset(const void *ptr, size_t bytes) const {
  if (!shared_ || !heap_ || !ptr)
    return -1;
  return heap_->offsetOf(ptr, bytes);
}

bool NodeHeaps::peerHeap(int rank, char *&base, uint64_t &bytes) const {
  if (!shared_)
    return false;
  if (rank == worldRank_) {
    base = heap_->base();
    bytes = heap_->bytes();
    return true;
  }
  if (rank < 0 || static_cast<size_t>(rank) >= peers_.size() || !peers_[rank])
    return false;
  base = peers_[rank]->base();
  bytes = peers_[rank]->bytes();
  return true;
}

GroupHeaps NodeHeaps::groupHeaps(MPI_Comm group) const {
  GroupHeaps heaps;
  MPI_Group members, world;
  checkMpi(MPI_Comm_group(group, &members), "MPI_Comm_group");
  checkMpi(MPI_Comm_group(world_, &world), "MPI_Comm_group");
  int n = 0;
  MPI_Group_size(members, &n);
  std::vector<int> ranks(static_cast<size_t>(n));
  std::iota(ranks.begin(), ranks.end(), 0);
  heaps.worldRanks.resize(static_cast<size_t>(n));
  int rc = MPI_Group_translate_ranks(members, n, ranks.data(), world,
                                     heaps.worldRanks.data());
  MPI_Group_free(&members);
  MPI_Group_free(&world);
  checkMpi(rc, "MPI_Group_translate_ranks");

  if (!shared_) {
    heaps.unavailable = unavailable_;
    return heaps;
  }
  // "On this node" is symmetric, so all members reach the same answer.
  for (int r : heaps.worldRanks) {
    if (r == worldRank_) {
      heaps.bases.push_back(heap_->base());
      heaps.bytes.push_back(heap_->bytes());
    } else if (r >= 0 && static_cast<size_t>(r) < peers_.size() && peers_[r]) {
      heaps.bases.push_back(peers_[r]->base());
      heaps.bytes.push_back(peers_[r]->bytes());
    } else {
      heaps.bases.clear();
      heaps.bytes.clear();
      heaps.unavailable = "the group spans more than one node";
      break;
    }
  }
  return heaps;
}

namespace {

constexpr int kMaxDims = DIST_RT_MAX_COPY_DIMS;

/// What the other members need to know of one member's call, as int64s for
/// an MPI_Allgather: where each side lies in the member's heap (-1: not in
/// it) and the geometry of both sides.
enum Field : int {
  kSendOffset,
  kRecvOffset,
  kDims,
  kSendChunkStride,
  kRecvChunkStride,
  kSizes,
  kSendStrides = kSizes + kMaxDims,
  kRecvStrides = kSendStrides + kMaxDims,
  kRecordSize = kRecvStrides + kMaxDims
};

/// Byte extent of one side of a record, chunk index included.
ByteExtent sideExtent(const int64_t *rec, bool sendSide, int64_t p,
                      size_t elemBytes) {
  int64_t sizes[kMaxDims + 1], strides[kMaxDims + 1];
  sizes[0] = p;
  strides[0] = rec[sendSide ? kSendChunkStride : kRecvChunkStride];
  const int64_t *boxStrides = &rec[sendSide ? kSendStrides : kRecvStrides];
  for (int64_t d = 0; d < rec[kDims]; ++d) {
    sizes[d + 1] = rec[kSizes + d];
    strides[d + 1] = boxStrides[d];
  }
  return stridedExtent(rec[kDims] + 1, sizes, strides, elemBytes);
}

/// Whether a side's chunks interleave in memory (chunk j's rows alternate
/// with the other chunks' rows, as the column blocks of row-major rows do):
/// the chunk stride is below the stride of the outermost dim that has more
/// than one row.
bool interleaved(const int64_t *rec, bool sendSide) {
  const int64_t chunkStride =
      rec[sendSide ? kSendChunkStride : kRecvChunkStride];
  const int64_t *strides = &rec[sendSide ? kSendStrides : kRecvStrides];
  for (int64_t d = 0; d < rec[kDims]; ++d)
    if (rec[kSizes + d] > 1)
      return chunkStride < strides[d];
  return false;
}

} // namespace

bool NodeHeaps::directAllToAll(MPI_Comm group, const GroupHeaps &heaps,
                               const void *send, const ChunkBoxes &sendBoxes,
                               void *recv, const ChunkBoxes &recvBoxes,
                               size_t elemBytes, std::string &why) const {
  if (heaps.bases.empty()) {
    why = heaps.unavailable;
    return false;
  }
  int p = 1, me = 0;
  MPI_Comm_size(group, &p);
  MPI_Comm_rank(group, &me);
  const int nd = sendBoxes.numDims;

  int64_t record[kRecordSize] = {};
  record[kDims] = nd;
  record[kSendChunkStride] = sendBoxes.chunkStride;
  record[kRecvChunkStride] = recvBoxes.chunkStride;
  for (int d = 0; d < nd; ++d) {
    record[kSizes + d] = sendBoxes.sizes[d];
    record[kSendStrides + d] = sendBoxes.strides[d];
    record[kRecvStrides + d] = recvBoxes.strides[d];
  }
  auto offsetInHeap = [&](const void *base, bool sendSide) -> int64_t {
    const ByteExtent extent = sideExtent(record, sendSide, p, elemBytes);
    return heap_ ? heap_->offsetOf(base, static_cast<size_t>(extent.last)) : -1;
  };
  record[kSendOffset] = offsetInHeap(send, true);
  record[kRecvOffset] = offsetInHeap(recv, false);
  std::vector<int64_t> records(static_cast<size_t>(kRecordSize) * p);
  checkMpi(MPI_Allgather(record, kRecordSize, MPI_INT64_T, records.data(),
                         kRecordSize, MPI_INT64_T, group),
           "MPI_Allgather (shared-memory all-to-all)");
  auto recordOf = [&](int j) {
    return &records[static_cast<size_t>(j) * kRecordSize];
  };

  // The verdict depends only on the gathered records: the same everywhere.
  bool sendsShared = true, recvsShared = true, push = true;
  for (int j = 0; j < p; ++j) {
    const int64_t *rec = recordOf(j);
    bool sameShape = rec[kDims] == nd;
    for (int d = 0; sameShape && d < nd; ++d)
      sameShape = rec[kSizes + d] == sendBoxes.sizes[d];
    if (!sameShape) {
      why = "the members' chunk shapes differ";
      return false;
    }
    sendsShared = sendsShared && rec[kSendOffset] >= 0;
    recvsShared = recvsShared && rec[kRecvOffset] >= 0;
    // Pushing writes long contiguous runs into the peers when the send
    // chunks interleave and the receive ones do not (S(0) -> S(1)), and
    // pulling does when it is the other way round (pushing measured a few
    // percent faster than pulling on the S(0) -> S(1) benchmark).
    push = push && interleaved(rec, true) && !interleaved(rec, false);
  }
  if (!sendsShared && !recvsShared) {
    why = "neither every send buffer nor every receive buffer is runtime "
          "memory (distRtAlloc or a compiled program's own buffers)";
    return false;
  }
  push = recvsShared && (push || !sendsShared);

  // Each owner checked that its side lies in its heap; the member that
  // touches it from another process checks again against its mapping, as
  // a miss would fault.
  std::vector<char *> remote(static_cast<size_t>(p));
  for (int j = 0; j < p; ++j) {
    const int64_t *rec = recordOf(j);
    const int64_t offset = rec[push ? kRecvOffset : kSendOffset];
    const ByteExtent extent = sideExtent(rec, !push, p, elemBytes);
    if (static_cast<uint64_t>(offset) > heaps.bytes[j] ||
        static_cast<uint64_t>(extent.last) >
            heaps.bytes[j] - static_cast<uint64_t>(offset))
      throw Error(DIST_RT_ERR_BACKEND,
                  "world rank " + std::to_string(heaps.worldRanks[j]) +
                      " published a buffer outside its shared heap");
    remote[j] = heaps.bases[j] + offset;
  }

  // Whole chunks, one peer after another. (Tiling the rows so that a tile
  // of the walked side stays in cache while its p pieces are copied
  // measured slower: long contiguous runs on the other side matter more.)
  const int64_t e = static_cast<int64_t>(elemBytes);
  for (int k = 0; k < p; ++k) {
    // Start at the next member, so that the members do not all copy to or
    // from the same peer at once.
    const int j = (me + 1 + k) % p;
    const int64_t *rec = recordOf(j);
    const char *src;
    char *dst;
    const int64_t *srcStrides, *dstStrides;
    if (push) {
      // My chunk j goes into member j's receive box of chunk `me`.
      srcStrides = sendBoxes.strides;
      dstStrides = &rec[kRecvStrides];
      src = static_cast<const char *>(send) + j * sendBoxes.chunkStride * e;
      dst = remote[j] + me * rec[kRecvChunkStride] * e;
    } else {
      // Member j's chunk `me` comes into my receive box of chunk j.
      srcStrides = &rec[kSendStrides];
      dstStrides = recvBoxes.strides;
      src = remote[j] + me * rec[kSendChunkStride] * e;
      dst = static_cast<char *>(recv) + j * recvBoxes.chunkStride * e;
    }
    copyCpu(makeCopyPlan(nd, sendBoxes.sizes, srcStrides, dstStrides, elemBytes,
                         src, dst),
            src, dst);
  }
  // No member may return, and so reuse its buffers, while another may still
  // be reading or writing them.
  checkMpi(MPI_Barrier(group), "MPI_Barrier (shared-memory all-to-all)");
  return true;
}

} // namespace dist::rt
