//===- MpiBackend.cpp - Collectives over MPI on host memory ---------------===//
//
// The CPU backend: every collective maps onto the matching MPI collective on
// a private duplicate of the group's communicator, and completes before the
// call returns; large reductions are an all-to-all plus local reductions
// instead (reduceScatterDirect says why). MPI has no half-precision types, so
// f16/bf16 reductions use a 2-byte derived datatype with user-defined
// operations that combine in float; avg is a sum followed by a local division,
// as MPI has no mean. Narrow integers reduce in 64 bits (reducesInInt64: exact
// means, and sums that wrap where Open MPI's op/avx saturates).
//
// Host memory comes from a heap the other ranks of the node can read
// (NodeHeaps.h), which gives the strided all-to-all a single-copy path.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "NodeHeaps.h"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <vector>

namespace dist::rt {
namespace {

class MpiComm : public BackendComm {
public:
  MpiComm(MPI_Comm c, GroupHeaps heaps) : comm(c), heaps(std::move(heaps)) {}
  ~MpiComm() override {
    int fin = 0;
    MPI_Finalized(&fin);
    if (!fin && comm != MPI_COMM_NULL)
      MPI_Comm_free(&comm);
  }
  int memberCount() const override {
    int size = 0;
    MPI_Comm_size(comm, &size);
    return size;
  }
  MPI_Comm comm;
  GroupHeaps heaps;
};

/// DIST_RT_SHARED_HEAP_MIB: the address space each rank reserves for its
/// shareable heap. Pages are only backed once written, so the default is
/// generous; 0 turns the heap (and the single-copy all-to-all) off.
uint64_t sharedHeapBytes() {
  uint64_t mib = 64 << 10;
  if (const char *v = std::getenv("DIST_RT_SHARED_HEAP_MIB")) {
    char *end = nullptr;
    errno = 0;
    unsigned long long value = std::strtoull(v, &end, 10);
    if (!*v || *end || errno || v[0] == '-' || value > (uint64_t(1) << 40))
      throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
                  std::string("DIST_RT_SHARED_HEAP_MIB must be a number of "
                              "MiB from 0 to 2^40, not '") +
                      v + "'");
    mib = value;
  }
  return mib << 20;
}

struct SumF {
  static float apply(float a, float b) { return a + b; }
};
struct ProdF {
  static float apply(float a, float b) { return a * b; }
};
struct MaxF {
  static float apply(float a, float b) { return std::fmax(a, b); }
};
struct MinF {
  static float apply(float a, float b) { return std::fmin(a, b); }
};

// MPI_User_function for 16-bit floats: widen both operands to float, combine,
// round back (one rounding per combination step, as NCCL does).
template <float (*Dec)(uint16_t), uint16_t (*Enc)(float), typename Op>
void halfReduce(void *in, void *inout, int *len, MPI_Datatype *) {
  const uint16_t *a = static_cast<const uint16_t *>(in);
  uint16_t *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i)
    b[i] = Enc(Op::apply(Dec(a[i]), Dec(b[i])));
}

template <float (*Dec)(uint16_t), uint16_t (*Enc)(float)>
void createHalfOps(MPI_Op ops[4]) {
  // Indexed by RedOp (sum, max, min, prod); avg reuses sum.
  checkMpi(MPI_Op_create(&halfReduce<Dec, Enc, SumF>, 1, &ops[0]),
           "MPI_Op_create");
  checkMpi(MPI_Op_create(&halfReduce<Dec, Enc, MaxF>, 1, &ops[1]),
           "MPI_Op_create");
  checkMpi(MPI_Op_create(&halfReduce<Dec, Enc, MinF>, 1, &ops[2]),
           "MPI_Op_create");
  checkMpi(MPI_Op_create(&halfReduce<Dec, Enc, ProdF>, 1, &ops[3]),
           "MPI_Op_create");
}

class MpiBackend final : public Backend {
public:
  const char *name() const override { return "mpi"; }

  void init(MPI_Comm world) override {
    // Permute traffic gets its own communicator, apart from the core's.
    checkMpi(MPI_Comm_dup(world, &world_), "MPI_Comm_dup");
    checkMpi(MPI_Comm_set_errhandler(world_, MPI_ERRORS_RETURN),
             "MPI_Comm_set_errhandler");
    MPI_Comm_rank(world_, &rank_);
    checkMpi(MPI_Type_contiguous(2, MPI_BYTE, &halfType_),
             "MPI_Type_contiguous");
    checkMpi(MPI_Type_commit(&halfType_), "MPI_Type_commit");
    checkMpi(MPI_Type_contiguous(2, MPI_BYTE, &bf16Type_),
             "MPI_Type_contiguous");
    checkMpi(MPI_Type_commit(&bf16Type_), "MPI_Type_commit");
    createHalfOps<halfBitsToFloat, floatToHalfBits>(halfOps_);
    createHalfOps<bf16BitsToFloat, floatToBf16Bits>(bf16Ops_);
    heaps_.init(world_, sharedHeapBytes());
    setHostGemmThreads(heaps_.nodeSize());
  }

  void finalize() noexcept override {
    scratch_ = Scratch();
    reductionScratch_.reset();
    reductionScratchBytes_ = 0;
    heaps_.finalize();
    int fin = 0;
    MPI_Finalized(&fin);
    if (fin)
      return;
    freeChunkTypes();
    for (MPI_Op *ops : {halfOps_, bf16Ops_})
      for (int i = 0; i < 4; ++i)
        if (ops[i] != MPI_OP_NULL)
          MPI_Op_free(&ops[i]);
    if (halfType_ != MPI_DATATYPE_NULL)
      MPI_Type_free(&halfType_);
    if (bf16Type_ != MPI_DATATYPE_NULL)
      MPI_Type_free(&bf16Type_);
    if (world_ != MPI_COMM_NULL)
      MPI_Comm_free(&world_);
  }

  std::unique_ptr<BackendComm> createComm(MPI_Comm groupComm, int,
                                          int) override {
    if (groupComm == MPI_COMM_NULL)
      return nullptr; // not a device of the mesh: nothing to set up
    // A duplicate keeps data traffic apart from the core's control traffic
    // on the group communicator.
    MPI_Comm c;
    checkMpi(MPI_Comm_dup(groupComm, &c), "MPI_Comm_dup");
    checkMpi(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN),
             "MPI_Comm_set_errhandler");
    return std::make_unique<MpiComm>(c, heaps_.groupHeaps(c));
  }

  size_t maxCount() const override { return INT_MAX; }

  bool supportsReduction(DType, RedOp) const override { return true; }

  void allGather(BackendComm &c, const void *send, void *recv, size_t n,
                 DType t, bool inPlace, Stream) override {
    MPI_Datatype dt = dataType(t);
    int cnt = static_cast<int>(n);
    checkMpi(MPI_Allgather(inPlace ? MPI_IN_PLACE : send, cnt, dt, recv, cnt,
                           dt, comm(c)),
             "MPI_Allgather");
  }

  void allToAll(BackendComm &c, const void *send, void *recv, size_t n, DType t,
                bool inPlace, Stream) override {
    MPI_Datatype dt = dataType(t);
    int cnt = static_cast<int>(n);
    checkMpi(MPI_Alltoall(inPlace ? MPI_IN_PLACE : send, cnt, dt, recv, cnt, dt,
                          comm(c)),
             "MPI_Alltoall");
  }

  // Fastest first: one copy straight between the members' heaps when the
  // buffers of one side are all in them; otherwise the chunks become derived
  // datatypes, so MPI packs them into its transport fragments (and unpacks
  // from them) without a staging copy of the whole buffer.
  bool allToAllStrided(BackendComm &c, const void *send,
                       const ChunkBoxes &sendBoxes, void *recv,
                       const ChunkBoxes &recvBoxes, DType t,
                       StridedAllToAllMode mode, Stream) override {
    if (mode != StridedAllToAllMode::Datatype) {
      std::string why;
      if (heaps_.directAllToAll(comm(c), static_cast<MpiComm &>(c).heaps, send,
                                sendBoxes, recv, recvBoxes, dtypeSize(t), why))
        return true;
      if (mode == StridedAllToAllMode::SharedMemory)
        throw Error(DIST_RT_ERR_UNSUPPORTED,
                    "DIST_RT_STRIDED_ALLTOALL=shm, but the single-copy path "
                    "does not apply: " +
                        why);
    }
    // Compiled code uses a handful of geometries; bound the cache anyway,
    // before this call takes its two types from it (emptying it between
    // them would free the first while the call still needs it).
    if (chunkTypes_.size() + 2 > kMaxChunkTypes)
      freeChunkTypes();
    MPI_Datatype sendType = chunkType(sendBoxes, t);
    MPI_Datatype recvType = chunkType(recvBoxes, t);
    if (sendType == MPI_DATATYPE_NULL || recvType == MPI_DATATYPE_NULL)
      return false;
    // Send chunks all at one place (chunk stride 0: an all_gather into
    // strided chunks) are one block sent to every member: MPI_Allgather
    // says so, and a zero-extent type would not describe p chunks anyway.
    if (sendBoxes.chunkStride == 0)
      checkMpi(MPI_Allgather(send, 1, sendType, recv, 1, recvType, comm(c)),
               "MPI_Allgather");
    else
      checkMpi(MPI_Alltoall(send, 1, sendType, recv, 1, recvType, comm(c)),
               "MPI_Alltoall");
    return true;
  }

  bool supportsStridedMode(StridedAllToAllMode) const override { return true; }

  void reduceScatter(BackendComm &c, const void *send, void *recv, size_t n,
                     DType t, RedOp op, bool inPlace, Stream) override {
    if (reducesInInt64(t, op)) {
      // Every member's n-element block of the whole buffer, in int64.
      const size_t whole = n * static_cast<size_t>(commSize(c));
      std::vector<int64_t> wide(whole), reduced(n);
      widenInts(inPlace ? recv : send, wide.data(), whole, t);
      checkMpi(MPI_Reduce_scatter_block(wide.data(), reduced.data(),
                                        static_cast<int>(n), wideType(op),
                                        wideOp(op), comm(c)),
               "MPI_Reduce_scatter_block");
      narrowReduced(reduced.data(), recv, n, t, op, commSize(c));
      return;
    }
    const int p = commSize(c);
    if (reducesDirectly(n * static_cast<size_t>(p), t,
                        kDirectReduceScatterBytes))
      reduceScatterDirect(comm(c), p, inPlace ? recv : send, recv, n, t, op);
    else
      checkMpi(MPI_Reduce_scatter_block(inPlace ? MPI_IN_PLACE : send, recv,
                                        static_cast<int>(n), reduceType(t),
                                        mpiOp(t, op), comm(c)),
               "MPI_Reduce_scatter_block");
    if (op == RedOp::Avg)
      divideInPlace(recv, n, t, commSize(c));
  }

  void allReduce(BackendComm &c, const void *send, void *recv, size_t n,
                 DType t, RedOp op, bool inPlace, Stream) override {
    if (reducesInInt64(t, op)) {
      std::vector<int64_t> reduced(n);
      widenInts(inPlace ? recv : send, reduced.data(), n, t);
      checkMpi(MPI_Allreduce(MPI_IN_PLACE, reduced.data(), static_cast<int>(n),
                             wideType(op), wideOp(op), comm(c)),
               "MPI_Allreduce");
      narrowReduced(reduced.data(), recv, n, t, op, commSize(c));
      return;
    }
    const int p = commSize(c);
    if (n % static_cast<size_t>(p) == 0 &&
        reducesDirectly(n, t, kDirectAllReduceBytes)) {
      // A reduce-scatter into scratch, then an all-gather of the reduced
      // blocks (the bandwidth-optimal all-reduce), both without temporaries.
      const size_t block = n / static_cast<size_t>(p);
      void *reduced = reduceScatterDirect(comm(c), p, inPlace ? recv : send,
                                          nullptr, block, t, op);
      checkMpi(MPI_Allgather(reduced, static_cast<int>(block), dataType(t),
                             recv, static_cast<int>(block), dataType(t),
                             comm(c)),
               "MPI_Allgather (all-reduce)");
    } else {
      checkMpi(MPI_Allreduce(inPlace ? MPI_IN_PLACE : send, recv,
                             static_cast<int>(n), reduceType(t), mpiOp(t, op),
                             comm(c)),
               "MPI_Allreduce");
    }
    if (op == RedOp::Avg)
      divideInPlace(recv, n, t, commSize(c));
  }

  void permute(const void *send, void *recv, size_t n, DType t, int source,
               const std::vector<int> &dests, Stream) override {
    const size_t bytes = n * dtypeSize(t);
    MPI_Datatype dt = dataType(t);
    const int cnt = static_cast<int>(n);
    const bool receives = source >= 0 && source != rank_;
    // Receiving into the buffer being sent would overwrite it before the
    // sends have read it: stage the incoming data.
    std::unique_ptr<char[]> staging;
    void *target = recv;
    if (receives && send == recv) {
      staging.reset(new char[bytes]);
      target = staging.get();
    }
    std::vector<MPI_Request> reqs;
    reqs.reserve(dests.size() + 1);
    // Messages between a pair are non-overtaking on one communicator and tag,
    // so consecutive permutes cannot mix even with a fixed tag.
    constexpr int kTag = 7;
    if (receives) {
      reqs.emplace_back();
      checkMpi(MPI_Irecv(target, cnt, dt, source, kTag, world_, &reqs.back()),
               "MPI_Irecv");
    }
    for (int d : dests) {
      if (d == rank_)
        continue;
      reqs.emplace_back();
      checkMpi(MPI_Isend(send, cnt, dt, d, kTag, world_, &reqs.back()),
               "MPI_Isend");
    }
    if (source == rank_ && send != recv)
      std::memcpy(recv, send, bytes);
    std::vector<MPI_Status> statuses(reqs.size());
    int rc = MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(),
                         statuses.data());
    if (rc == MPI_ERR_IN_STATUS) {
      for (const MPI_Status &st : statuses)
        if (st.MPI_ERROR != MPI_SUCCESS && st.MPI_ERROR != MPI_ERR_PENDING)
          checkMpi(st.MPI_ERROR, "MPI_Waitall (permute send/recv)");
    }
    checkMpi(rc, "MPI_Waitall (permute send/recv)");
    if (staging)
      std::memcpy(recv, staging.get(), bytes);
  }

  // Point to point on the backend's world communicator, everything posted
  // non-blocking before anything is waited for, so no order of ranks can
  // deadlock. Per pair of ranks on one node whose sender's buffer is in its
  // shared heap, the receiver copies the boxes straight out of the sender's
  // buffer (one copy per element) and then tells the sender it is done;
  // every other pair sends one message per box, in table order (MPI's
  // non-overtaking rule matches them), each side describing its box to MPI
  // as a subarray datatype, or sending/receiving in place when the box is
  // one contiguous run, or staging it through contiguous scratch.
  void exchange(const ExchangeCall &x, Stream) override {
    const ExchangeRole &role = *x.role;
    const size_t e = dtypeSize(x.dtype);
    const int nd = x.numDims;
    const MPI_Datatype base = dataType(x.dtype);
    const char *send = static_cast<const char *>(x.send);
    char *recv = static_cast<char *>(x.recv);

    // Phase 1 (pairs on this node): each sender offers its send buffer,
    // as an offset in its heap (-1: not there) and its shape.
    struct Offer {
      int64_t offset = -1;
      int64_t shape[DIST_RT_MAX_COPY_DIMS] = {};
    };
    constexpr int kOfferWords = sizeof(Offer) / sizeof(int64_t);
    const bool shm = x.mode == ExchangeMode::Auto && heaps_.shared();
    auto onNode = [&](int64_t peer) {
      char *b;
      uint64_t n;
      return shm && heaps_.peerHeap(static_cast<int>(peer), b, n);
    };
    Offer mine;
    if (shm && !role.sends.empty()) {
      for (int d = 0; d < nd; ++d)
        mine.shape[d] = x.sendShape[d];
      mine.offset = heaps_.ownOffset(x.send, tensorBytes(nd, x.sendShape, e));
    }
    std::vector<Offer> offers(role.recvs.size());
    Requests reqs;
    for (const ExchangePeer &p : role.sends)
      if (onNode(p.rank))
        checkMpi(MPI_Isend(&mine, kOfferWords, MPI_INT64_T,
                           static_cast<int>(p.rank), kOfferTag, world_,
                           reqs.add()),
                 "MPI_Isend (exchange offer)");
    for (size_t i = 0; i < role.recvs.size(); ++i)
      if (onNode(role.recvs[i].rank))
        checkMpi(MPI_Irecv(&offers[i], kOfferWords, MPI_INT64_T,
                           static_cast<int>(role.recvs[i].rank), kOfferTag,
                           world_, reqs.add()),
                 "MPI_Irecv (exchange offer)");
    reqs.waitAll("exchange offers");

    // Phase 2: everything else, posted before anything is waited for.
    std::vector<Staged> unstage; // received into scratch, copied at the end
    std::vector<MPI_Datatype> types;
    struct FreeTypes {
      std::vector<MPI_Datatype> &t;
      ~FreeTypes() {
        for (MPI_Datatype &d : t)
          MPI_Type_free(&d);
      }
    } freeTypes{types};
    // Sizes of the scratch needed, so that it is allocated once.
    size_t scratchBytes = 0;
    auto staged = [&](int64_t k, const int64_t *shape) {
      ExchangeEntry en = x.entry(k);
      return wire(en, e) == Wire::Chunks
                 ? !boxIsContiguous(nd, shape, en.size())
                 : boxMode(en, shape, x.mode) == BoxMode::Stage;
    };
    for (size_t i = 0; i < role.recvs.size(); ++i)
      if (offers[i].offset < 0)
        for (int64_t k : role.recvs[i].entries)
          if (staged(k, x.recvShape))
            scratchBytes += alignUp(x.entry(k).elements() * e);
    auto pulled = [&](int64_t peer) {
      return mine.offset >= 0 && onNode(peer);
    };
    for (const ExchangePeer &p : role.sends)
      if (!pulled(p.rank))
        for (int64_t k : p.entries)
          if (staged(k, x.sendShape))
            scratchBytes += alignUp(x.entry(k).elements() * e);
    scratch_.reserve(scratchBytes);

    int64_t doneFlag = 1;
    std::vector<int64_t> doneIn(role.sends.size());
    for (size_t i = 0; i < role.recvs.size(); ++i) {
      if (offers[i].offset >= 0)
        continue; // pulled below
      const int peer = static_cast<int>(role.recvs[i].rank);
      for (int64_t k : role.recvs[i].entries) {
        ExchangeEntry en = x.entry(k);
        postBox(k, en, x.recvShape, en.dstOffset(), recv, peer, x.mode, base, e,
                /*sending=*/false, reqs, types, unstage, scratch_);
      }
    }
    for (size_t i = 0; i < role.sends.size(); ++i) {
      const ExchangePeer &p = role.sends[i];
      const int peer = static_cast<int>(p.rank);
      if (pulled(p.rank)) {
        checkMpi(MPI_Irecv(&doneIn[i], 1, MPI_INT64_T, peer, kDoneTag, world_,
                           reqs.add()),
                 "MPI_Irecv (exchange done)");
        continue;
      }
      for (int64_t k : p.entries) {
        ExchangeEntry en = x.entry(k);
        postBox(k, en, x.sendShape, en.srcOffset(), const_cast<char *>(send),
                peer, x.mode, base, e, /*sending=*/true, reqs, types, unstage,
                scratch_);
      }
    }
    for (int64_t k : role.local) {
      ExchangeEntry en = x.entry(k);
      BoxCopy c = boxCopy(nd, en.size(), x.sendShape, en.srcOffset(), send,
                          x.recvShape, en.dstOffset(), recv, e);
      copyCpu(c.plan, c.src, c.dst);
    }
    for (size_t i = 0; i < role.recvs.size(); ++i) {
      const Offer &o = offers[i];
      if (o.offset < 0)
        continue;
      const int peer = static_cast<int>(role.recvs[i].rank);
      char *heap = nullptr;
      uint64_t heapBytes = 0;
      heaps_.peerHeap(peer, heap, heapBytes);
      const size_t bytes = tensorBytes(nd, o.shape, e);
      if (static_cast<uint64_t>(o.offset) > heapBytes ||
          bytes > heapBytes - static_cast<uint64_t>(o.offset))
        throw Error(DIST_RT_ERR_BACKEND,
                    "world rank " + std::to_string(peer) +
                        " offered a send buffer outside its shared heap");
      for (int64_t k : role.recvs[i].entries) {
        ExchangeEntry en = x.entry(k);
        for (int d = 0; d < nd; ++d)
          if (en.srcOffset()[d] + en.size()[d] > o.shape[d])
            throw Error(DIST_RT_ERR_BACKEND,
                        "table entry " + std::to_string(k) +
                            " reads past world rank " + std::to_string(peer) +
                            "'s send buffer");
        BoxCopy c =
            boxCopy(nd, en.size(), o.shape, en.srcOffset(), heap + o.offset,
                    x.recvShape, en.dstOffset(), recv, e);
        copyCpu(c.plan, c.src, c.dst);
      }
      checkMpi(MPI_Isend(&doneFlag, 1, MPI_INT64_T, peer, kDoneTag, world_,
                         reqs.add()),
               "MPI_Isend (exchange done)");
    }
    reqs.waitAll("exchange send/recv");
    for (const Staged &st : unstage) {
      ExchangeEntry en = x.entry(st.entry);
      BoxCopy c = boxPackCopy(nd, x.recvShape, en.dstOffset(), en.size(), e,
                              recv, st.data, /*toPacked=*/false);
      copyCpu(c.plan, c.src, c.dst);
    }
  }

  /// distRtExchangeStart on MPI: every box posted with the peer's tag, each
  /// side describing it as the blocking exchange does (datatype, in place or
  /// staged through the exchange's own scratch), the local copies done; no
  /// single copy out of a peer's heap (that needs the peer to answer first).
  std::unique_ptr<PendingExchange>
  exchangeStart(const ExchangeCall &x,
                const std::function<int(int64_t)> &tagOfPeer, Stream) override {
    auto pending = std::make_unique<MpiPendingExchange>();
    const ExchangeRole &role = *x.role;
    const size_t e = dtypeSize(x.dtype);
    const int nd = x.numDims;
    const MPI_Datatype base = dataType(x.dtype);
    const ExchangeMode mode =
        x.mode == ExchangeMode::Auto ? ExchangeMode::Datatype : x.mode;
    auto staged = [&](int64_t k, const int64_t *shape) {
      ExchangeEntry en = x.entry(k);
      return wire(en, e) == Wire::Chunks
                 ? !boxIsContiguous(nd, shape, en.size())
                 : boxMode(en, shape, mode) == BoxMode::Stage;
    };
    size_t scratchBytes = 0;
    for (const ExchangePeer &p : role.recvs)
      for (int64_t k : p.entries)
        if (staged(k, x.recvShape))
          scratchBytes += alignUp(x.entry(k).elements() * e);
    for (const ExchangePeer &p : role.sends)
      for (int64_t k : p.entries)
        if (staged(k, x.sendShape))
          scratchBytes += alignUp(x.entry(k).elements() * e);
    pending->scratch.reserve(scratchBytes);
    std::vector<Staged> unstage;
    char *recv = static_cast<char *>(x.recv);
    for (const ExchangePeer &p : role.recvs)
      for (int64_t k : p.entries) {
        ExchangeEntry en = x.entry(k);
        postBox(k, en, x.recvShape, en.dstOffset(), recv,
                static_cast<int>(p.rank), mode, base, e, /*sending=*/false,
                pending->recvs, pending->types, unstage, pending->scratch,
                tagOfPeer(p.rank));
      }
    for (const ExchangePeer &p : role.sends)
      for (int64_t k : p.entries) {
        ExchangeEntry en = x.entry(k);
        postBox(k, en, x.sendShape, en.srcOffset(),
                const_cast<char *>(static_cast<const char *>(x.send)),
                static_cast<int>(p.rank), mode, base, e, /*sending=*/true,
                pending->sends, pending->types, unstage, pending->scratch,
                tagOfPeer(p.rank));
      }
    for (int64_t k : role.local) {
      ExchangeEntry en = x.entry(k);
      BoxCopy c = boxCopy(nd, en.size(), x.sendShape, en.srcOffset(), x.send,
                          x.recvShape, en.dstOffset(), x.recv, e);
      copyCpu(c.plan, c.src, c.dst);
    }
    // What arrives in scratch is copied into place at the wait; the plans
    // are made now, while the table and shapes are at hand.
    for (const Staged &st : unstage) {
      ExchangeEntry en = x.entry(st.entry);
      pending->unstage.push_back(boxPackCopy(nd, x.recvShape, en.dstOffset(),
                                             en.size(), e, recv, st.data,
                                             /*toPacked=*/false));
    }
    return pending;
  }

  void copy(const CopyPlan &plan, const void *src, void *dst, Stream) override {
    copyCpu(plan, src, dst);
  }

  void fillZero(const CopyPlan &plan, void *dst, Stream) override {
    fillZeroCpu(plan, dst);
  }

  void gemm(const GemmCall &call, Stream) override { hostGemm(call); }

  void *allocate(size_t bytes) override { return heaps_.allocate(bytes); }

  void deallocate(void *ptr) override { heaps_.deallocate(ptr); }

  void memcpy(void *dst, const void *src, size_t bytes, int, Stream) override {
    std::memcpy(dst, src, bytes);
  }

  Stream resolveStream(Stream s) override {
    if (s != nullptr)
      throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
                  "the mpi backend has no streams: pass NULL");
    return nullptr;
  }
  Stream defaultStream() override { return nullptr; }
  void synchronize(Stream) override {}

private:
  // Tags of the exchange on world_ (permute uses 7).
  static constexpr int kOfferTag = 11;
  static constexpr int kBoxTag = 12;
  static constexpr int kDoneTag = 13;
  /// Boxes above this many bytes travel as several messages of this size.
  static constexpr size_t kMaxMessageBytes = size_t(1) << 30;

  /// Requests of one call, waited for together.
  struct Requests {
    std::vector<MPI_Request> reqs;
    MPI_Request *add() {
      reqs.push_back(MPI_REQUEST_NULL);
      return &reqs.back();
    }
    void waitAll(const char *what) {
      if (reqs.empty())
        return;
      std::vector<MPI_Status> statuses(reqs.size());
      int rc = MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(),
                           statuses.data());
      reqs.clear();
      const std::string call = std::string("MPI_Waitall (") + what + ")";
      if (rc == MPI_ERR_IN_STATUS)
        for (const MPI_Status &st : statuses)
          if (st.MPI_ERROR != MPI_SUCCESS && st.MPI_ERROR != MPI_ERR_PENDING)
            checkMpi(st.MPI_ERROR, call.c_str());
      checkMpi(rc, call.c_str());
    }
  };

  /// A received box waiting in scratch to be copied into place.
  struct Staged {
    int64_t entry;
    const char *data;
  };

  /// How a box travels: one message of its elements, or (large boxes)
  /// several byte messages of a staged or contiguous copy. Decided from the
  /// box alone, so both sides agree.
  enum class Wire { Message, Chunks };
  static Wire wire(const ExchangeEntry &en, size_t e) {
    return static_cast<uint64_t>(en.elements()) * e > kMaxMessageBytes
               ? Wire::Chunks
               : Wire::Message;
  }
  /// How one side describes a single-message box to MPI; each side decides
  /// on its own (the type signatures match either way: n elements).
  enum class BoxMode { InPlace, Subarray, Stage };
  static BoxMode boxMode(const ExchangeEntry &en, const int64_t *shape,
                         ExchangeMode mode) {
    const int nd = en.numDims;
    if (boxIsContiguous(nd, shape, en.size()))
      return BoxMode::InPlace;
    if (mode == ExchangeMode::Pack)
      return BoxMode::Stage;
    for (int d = 0; d < nd; ++d)
      if (shape[d] > INT_MAX)
        return BoxMode::Stage;
    return BoxMode::Subarray;
  }

  static size_t tensorBytes(int nd, const int64_t *shape, size_t e) {
    size_t n = e;
    for (int d = 0; d < nd; ++d)
      n *= static_cast<size_t>(shape[d]);
    return n;
  }
  static size_t alignUp(size_t bytes) { return (bytes + 63) / 64 * 64; }

  /// Whether a reduction over `whole` elements (every member's input) runs
  /// through reduceScatterDirect: from `minBytes` (kDirectReduceScatterBytes
  /// or kDirectAllReduceBytes). Open MPI's reduce-scatter and all-reduce
  /// algorithms malloc a temporary as large as the buffer on every call;
  /// past glibc's mmap threshold every call maps it anew and page-faults
  /// it in, which on a busy node costs more than the transfer (8 ranks on
  /// 2 cores, groups of 2, 16 MiB per rank: 25-28 ms, twice an all-gather
  /// of the same size; this way 9 ms). Small reductions keep MPI's
  /// latency-optimised algorithms. On 8 ranks (dist-reshard-bench) a
  /// reduce-scatter was faster this way at every size measured, 512 KiB
  /// and up (1.12x there); an all-reduce, which adds an all-gather, only
  /// from 8 MiB (1.1x; 0.91-1.01x at 0.5-4 MiB).
  static constexpr size_t kDirectReduceScatterBytes = 128 << 10;
  static constexpr size_t kDirectAllReduceBytes = 8 << 20;
  static bool reducesDirectly(size_t whole, DType t, size_t minBytes) {
    return whole * dtypeSize(t) >= minBytes &&
           whole <= static_cast<size_t>(INT_MAX);
  }

  /// Reduces the p blocks of n elements of `in` across the group so that
  /// member r ends with block r reduced, written to `out` (or, when `out`
  /// is null, to the backend's reduction scratch after the gathered blocks;
  /// the result pointer is returned). The blocks travel in one all-to-all
  /// into persistent scratch, and MPI_Reduce_local combines them: the same
  /// bytes on the wire as a ring, no allocation per call. `in` may be
  /// `out`'s buffer (in place): the all-to-all has read all of it before
  /// `out` is written.
  void *reduceScatterDirect(MPI_Comm comm, int p, const void *in, void *out,
                            size_t n, DType t, RedOp op) {
    const size_t blockBytes = n * dtypeSize(t);
    const size_t gathered = alignUp(blockBytes * static_cast<size_t>(p));
    growScratch(reductionScratch_, reductionScratchBytes_,
                gathered + (out ? 0 : blockBytes));
    char *blocks = reductionScratch_.get();
    if (!out)
      out = blocks + gathered;
    checkMpi(MPI_Alltoall(in, static_cast<int>(n), dataType(t), blocks,
                          static_cast<int>(n), dataType(t), comm),
             "MPI_Alltoall (reduce-scatter)");
    std::memcpy(out, blocks, blockBytes);
    for (int k = 1; k < p; ++k)
      checkMpi(MPI_Reduce_local(blocks + static_cast<size_t>(k) * blockBytes,
                                out, static_cast<int>(n), reduceType(t),
                                mpiOp(t, op)),
               "MPI_Reduce_local");
    return out;
  }

  /// Makes `buffer` (of `size` bytes) hold at least `bytes`; its contents
  /// are not kept.
  static void growScratch(std::unique_ptr<char[]> &buffer, size_t &size,
                          size_t bytes) {
    if (bytes <= size)
      return;
    buffer.reset();
    buffer.reset(new char[bytes]);
    size = bytes;
  }
  /// Contiguous staging for the boxes of one exchange, reserved at once
  /// (its size is known before anything is posted) and handed out in
  /// 64-byte aligned pieces.
  struct Scratch {
    std::unique_ptr<char[]> buffer;
    size_t bytes = 0, used = 0;
    void reserve(size_t n) {
      growScratch(buffer, bytes, n);
      used = 0;
    }
    char *take(size_t n) {
      char *p = buffer.get() + used;
      used += alignUp(n);
      return p;
    }
  };

  /// An exchange in flight (exchangeStart): its requests, the datatypes
  /// and scratch they use, and the staged boxes to copy into place.
  struct MpiPendingExchange final : PendingExchange {
    Requests recvs, sends;
    std::vector<MPI_Datatype> types;
    Scratch scratch;
    std::vector<BoxCopy> unstage;

    ~MpiPendingExchange() override {
      for (MPI_Datatype &d : types)
        MPI_Type_free(&d);
    }
    void wait() override {
      recvs.waitAll("exchange receives");
      sends.waitAll("exchange sends");
      for (const BoxCopy &c : unstage)
        copyCpu(c.plan, c.src, c.dst);
    }
    // Receives are cancelled; sends are left to complete on their own (a
    // peer that disagreed may never receive them, and their tag keeps them
    // away from any later exchange's receive).
    void cancel() override {
      for (MPI_Request &r : recvs.reqs) {
        MPI_Cancel(&r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
      }
      recvs.reqs.clear();
      for (MPI_Request &r : sends.reqs)
        MPI_Request_free(&r);
      sends.reqs.clear();
    }
  };

  /// Posts the send or receive of one box with `peer`.
  void postBox(int64_t k, const ExchangeEntry &en, const int64_t *shape,
               const int64_t *offset, char *tensor, int peer, ExchangeMode mode,
               MPI_Datatype base, size_t e, bool sending, Requests &reqs,
               std::vector<MPI_Datatype> &types, std::vector<Staged> &unstage,
               Scratch &scratch, int tag = kBoxTag) {
    const int nd = en.numDims;
    const int64_t n = en.elements();
    const size_t bytes = static_cast<size_t>(n) * e;
    char *box = tensor + rowMajorOffset(nd, shape, offset) * int64_t(e);
    auto post = [&](void *buf, int count, MPI_Datatype type) {
      if (sending)
        checkMpi(MPI_Isend(buf, count, type, peer, tag, world_, reqs.add()),
                 "MPI_Isend (exchange)");
      else
        checkMpi(MPI_Irecv(buf, count, type, peer, tag, world_, reqs.add()),
                 "MPI_Irecv (exchange)");
    };
    auto stage = [&]() -> char * {
      char *buf = scratch.take(bytes);
      if (sending) {
        BoxCopy c = boxPackCopy(nd, shape, offset, en.size(), e, tensor, buf,
                                /*toPacked=*/true);
        copyCpu(c.plan, c.src, c.dst);
      } else {
        unstage.push_back({k, buf});
      }
      return buf;
    };
    if (wire(en, e) == Wire::Chunks) {
      char *data = boxIsContiguous(nd, shape, en.size()) ? box : stage();
      for (size_t done = 0; done < bytes; done += kMaxMessageBytes)
        post(data + done,
             static_cast<int>(std::min(kMaxMessageBytes, bytes - done)),
             MPI_BYTE);
      return;
    }
    switch (boxMode(en, shape, mode)) {
    case BoxMode::InPlace:
      post(box, static_cast<int>(n), base);
      return;
    case BoxMode::Stage:
      post(stage(), static_cast<int>(n), base);
      return;
    case BoxMode::Subarray: {
      int sizes[DIST_RT_MAX_COPY_DIMS], sub[DIST_RT_MAX_COPY_DIMS],
          starts[DIST_RT_MAX_COPY_DIMS];
      for (int d = 0; d < nd; ++d) {
        sizes[d] = static_cast<int>(shape[d]);
        sub[d] = static_cast<int>(en.size()[d]);
        starts[d] = static_cast<int>(offset[d]);
      }
      MPI_Datatype type;
      checkMpi(MPI_Type_create_subarray(nd, sizes, sub, starts, MPI_ORDER_C,
                                        base, &type),
               "MPI_Type_create_subarray");
      types.push_back(type);
      checkMpi(MPI_Type_commit(&types.back()), "MPI_Type_commit");
      post(tensor, 1, types.back());
      return;
    }
    }
  }

  static MPI_Comm comm(BackendComm &c) {
    return static_cast<MpiComm &>(c).comm;
  }

  static int commSize(BackendComm &c) {
    int p = 1;
    MPI_Comm_size(comm(c), &p);
    return p;
  }

  // Datatype for moving data: the bit pattern is all that matters.
  static MPI_Datatype dataType(DType t) {
    switch (t) {
    case DType::F16:
    case DType::BF16:
    case DType::I16:
      return MPI_INT16_T;
    case DType::F32:
      return MPI_FLOAT;
    case DType::F64:
      return MPI_DOUBLE;
    case DType::I32:
      return MPI_INT32_T;
    case DType::I64:
      return MPI_INT64_T;
    case DType::I8:
      return MPI_INT8_T;
    case DType::I1:
      return MPI_UINT8_T;
    }
    return MPI_BYTE;
  }

  // Datatype for reducing: the arithmetic matters. Booleans are bytes 0/1,
  // on which MPI's unsigned max/min/prod are or/and/and.
  MPI_Datatype reduceType(DType t) const {
    if (t == DType::F16)
      return halfType_;
    if (t == DType::BF16)
      return bf16Type_;
    return dataType(t);
  }

  /// One chunk of `boxes` as a datatype whose extent is the chunk stride,
  /// so that chunk j starts j extents from the buffer. Built from the
  /// element type (never bytes), so its type signature matches a contiguous
  /// chunk on a peer that staged. Cached by geometry; MPI_DATATYPE_NULL when
  /// a size does not fit MPI's int counts.
  MPI_Datatype chunkType(const ChunkBoxes &boxes, DType t) {
    // Size-1 dims dropped, dims contiguous in one another merged.
    int64_t sizes[DIST_RT_MAX_COPY_DIMS], strides[DIST_RT_MAX_COPY_DIMS];
    int n = 0;
    for (int d = 0; d < boxes.numDims; ++d) {
      if (boxes.sizes[d] == 1)
        continue;
      if (n > 0 && strides[n - 1] == boxes.sizes[d] * boxes.strides[d]) {
        sizes[n - 1] *= boxes.sizes[d];
        strides[n - 1] = boxes.strides[d];
        continue;
      }
      sizes[n] = boxes.sizes[d];
      strides[n] = boxes.strides[d];
      ++n;
    }
    for (int d = 0; d < n; ++d)
      if (sizes[d] > INT_MAX)
        return MPI_DATATYPE_NULL;
    std::vector<int64_t> key{static_cast<int64_t>(t), boxes.chunkStride};
    key.insert(key.end(), sizes, sizes + n);
    key.insert(key.end(), strides, strides + n);
    auto it = chunkTypes_.find(key);
    if (it != chunkTypes_.end())
      return it->second;

    const MPI_Aint elem = static_cast<MPI_Aint>(dtypeSize(t));
    MPI_Datatype type = MPI_DATATYPE_NULL, inner;
    checkMpi(MPI_Type_dup(dataType(t), &type), "MPI_Type_dup");
    for (int d = n - 1; d >= 0; --d) {
      inner = type;
      int count = static_cast<int>(sizes[d]);
      if (d == n - 1 && strides[d] == 1)
        checkMpi(MPI_Type_contiguous(count, inner, &type),
                 "MPI_Type_contiguous");
      else
        checkMpi(
            MPI_Type_create_hvector(count, 1, strides[d] * elem, inner, &type),
            "MPI_Type_create_hvector");
      MPI_Type_free(&inner);
    }
    // Chunk j starts chunkStride elements after chunk j - 1 (a stride of 0,
    // the one block of an all_gather, keeps the type's own extent: it is
    // sent once, by MPI_Allgather).
    if (boxes.chunkStride != 0) {
      inner = type;
      checkMpi(
          MPI_Type_create_resized(inner, 0, boxes.chunkStride * elem, &type),
          "MPI_Type_create_resized");
      MPI_Type_free(&inner);
    }
    checkMpi(MPI_Type_commit(&type), "MPI_Type_commit");
    chunkTypes_.emplace(std::move(key), type);
    return type;
  }

  void freeChunkTypes() noexcept {
    for (auto &entry : chunkTypes_)
      MPI_Type_free(&entry.second);
    chunkTypes_.clear();
  }

  /// The 64-bit reduction of reducesInInt64: a mean needs the signed sum;
  /// sums and products wrap, which unsigned arithmetic does by definition.
  static MPI_Datatype wideType(RedOp op) {
    return op == RedOp::Avg ? MPI_INT64_T : MPI_UINT64_T;
  }
  static MPI_Op wideOp(RedOp op) {
    return op == RedOp::Prod ? MPI_PROD : MPI_SUM;
  }

  MPI_Op mpiOp(DType t, RedOp op) const {
    int index = op == RedOp::Avg ? 0 : static_cast<int>(op);
    if (t == DType::F16)
      return halfOps_[index];
    if (t == DType::BF16)
      return bf16Ops_[index];
    switch (op) {
    case RedOp::Sum:
    case RedOp::Avg:
      return MPI_SUM;
    case RedOp::Max:
      return MPI_MAX;
    case RedOp::Min:
      return MPI_MIN;
    case RedOp::Prod:
      return MPI_PROD;
    }
    return MPI_SUM;
  }

  MPI_Comm world_ = MPI_COMM_NULL;
  int rank_ = 0;
  MPI_Datatype halfType_ = MPI_DATATYPE_NULL;
  MPI_Datatype bf16Type_ = MPI_DATATYPE_NULL;
  MPI_Op halfOps_[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  MPI_Op bf16Ops_[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  std::map<std::vector<int64_t>, MPI_Datatype> chunkTypes_;
  static constexpr size_t kMaxChunkTypes = 64;
  NodeHeaps heaps_;
  // Staging of exchange boxes, kept between calls (compiled code repeats
  // the same exchanges).
  /// The blocking exchange's staging; kept between calls.
  Scratch scratch_;
  /// reduceScatterDirect's blocks; kept between calls, like scratch_.
  std::unique_ptr<char[]> reductionScratch_;
  size_t reductionScratchBytes_ = 0;
};

} // namespace

std::unique_ptr<Backend> createMpiBackend() {
  return std::make_unique<MpiBackend>();
}

} // namespace dist::rt
