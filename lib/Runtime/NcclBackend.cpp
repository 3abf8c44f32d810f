//===- NcclBackend.cpp - Collectives over NCCL on device memory -----------===//
//
// The GPU backend. One GPU per rank, chosen by the rank's index among the
// ranks on its node. MPI stays the control plane: it launches the job,
// broadcasts the world's ncclUniqueId, and carries the core's argument
// checks. Every group communicator is split off the world communicator
// (ncclCommSplit with the core's color/key), so group membership and order
// are exactly those of the MPI group.
//
// Everything is asynchronous on the caller's stream: collectives, the
// send/recv pairs of a permute (one ncclGroupStart/End), the local copy
// kernels, staging copies. synchronize() polls the stream and every
// communicator's asynchronous error, so a peer that died during a
// collective is reported instead of waited for.
//
// Every CUDA and NCCL result is checked; failures become Error exceptions
// naming the call, which the core reports with the rank and the op.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "CudaCopy.h"
#include "CudaDevice.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

namespace dist::rt {
namespace {

void checkNccl(ncclResult_t r, const char *call, ncclComm_t comm = nullptr) {
  if (r == ncclSuccess)
    return;
  std::string reason = std::string(call) + " failed: " + ncclGetErrorString(r);
  // NCCL keeps a more specific description of the last failure.
  const char *last = ncclGetLastError(comm);
  if (last && *last)
    reason += std::string(" (") + last + ")";
  backendError(reason);
}

class NcclComm : public BackendComm {
public:
  NcclComm(ncclComm_t c, int size, int rank)
      : comm(c), size(size), rank(rank) {}
  int memberCount() const override { return size; }
  // Destroyed by the backend at finalize, after the streams are drained.
  ncclComm_t comm;
  int size;
  int rank;
};

class NcclBackend final : public DeviceMemoryBackend {
public:
  const char *name() const override { return "nccl"; }

  void init(MPI_Comm world) override {
    MPI_Comm_rank(world, &rank_);
    MPI_Comm_size(world, &size_);
    gpu_.init(localRankOnNode(world), /*shared=*/false);
    ncclUniqueId id;
    if (rank_ == 0)
      checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    checkMpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, world),
             "MPI_Bcast (ncclUniqueId)");
    checkNccl(ncclCommInitRank(&world_, size_, id, rank_), "ncclCommInitRank");
    comms_.push_back(world_);
    if (const char *v = std::getenv("DIST_RT_SYNC_TIMEOUT_S"))
      syncTimeoutS_ = std::strtod(v, nullptr);
  }

  void finalize() noexcept override {
    if (gpu_.stream())
      cudaStreamSynchronize(gpu_.stream());
    // Groups first, the world (their parent) last; ncclCommFinalize flushes
    // outstanding work before the destroy.
    for (auto it = comms_.rbegin(); it != comms_.rend(); ++it) {
      ncclCommFinalize(*it);
      ncclCommDestroy(*it);
    }
    comms_.clear();
    world_ = nullptr;
    gpu_.finalize();
  }

  std::unique_ptr<BackendComm> createComm(MPI_Comm groupComm, int color,
                                          int key) override {
    if (groupComm == MPI_COMM_NULL) {
      // Not a device of the mesh: the split is collective over the world,
      // so take part in it without a color.
      ncclComm_t none = nullptr;
      checkNccl(ncclCommSplit(world_, NCCL_SPLIT_NOCOLOR, key, &none, nullptr),
                "ncclCommSplit", world_);
      return nullptr;
    }
    int size = 0, rank = 0;
    MPI_Comm_size(groupComm, &size);
    MPI_Comm_rank(groupComm, &rank);
    ncclComm_t c = nullptr;
    checkNccl(ncclCommSplit(world_, color, key, &c, nullptr), "ncclCommSplit",
              world_);
    comms_.push_back(c);
    int ncclSize = 0, ncclRank = 0;
    checkNccl(ncclCommCount(c, &ncclSize), "ncclCommCount", c);
    checkNccl(ncclCommUserRank(c, &ncclRank), "ncclCommUserRank", c);
    if (ncclSize != size || ncclRank != rank)
      backendError("ncclCommSplit produced rank " + std::to_string(ncclRank) +
                   " of " + std::to_string(ncclSize) +
                   ", the MPI group has rank " + std::to_string(rank) + " of " +
                   std::to_string(size));
    return std::make_unique<NcclComm>(c, size, rank);
  }

  size_t maxCount() const override {
    // NCCL counts are size_t; bound them so byte sizes cannot overflow.
    return static_cast<size_t>(std::numeric_limits<int64_t>::max() / 16);
  }

  bool supportsReduction(DType t, RedOp) const override {
    return t != DType::I16; // NCCL has no 16-bit integer type
  }

  void allGather(BackendComm &c, const void *send, void *recv, size_t n,
                 DType t, bool inPlace, Stream s) override {
    NcclComm &g = nccl(c);
    Moved m = moved(t, n);
    // NCCL's in-place form is the same as ours: send == recv + rank * n.
    const void *src = inPlace ? static_cast<const char *>(recv) +
                                    size_t(g.rank) * n * dtypeSize(t)
                              : send;
    checkNccl(ncclAllGather(src, recv, m.count, m.type, g.comm, cuda(s)),
              "ncclAllGather", g.comm);
  }

  void allToAll(BackendComm &c, const void *send, void *recv, size_t n, DType t,
                bool inPlace, Stream s) override {
    NcclComm &g = nccl(c);
    Moved m = moved(t, n);
    const size_t bytes = size_t(g.size) * n * dtypeSize(t);
    cudaStream_t st = cuda(s);
    // NCCL documents no in-place all-to-all: send from a stream-ordered copy.
    void *staging = nullptr;
    if (inPlace) {
      checkCuda(cudaMallocAsync(&staging, bytes, st), "cudaMallocAsync");
      checkCuda(
          cudaMemcpyAsync(staging, send, bytes, cudaMemcpyDeviceToDevice, st),
          "cudaMemcpyAsync");
      send = staging;
    }
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 28, 0)
    ncclResult_t r = ncclAlltoAll(send, recv, m.count, m.type, g.comm, st);
    const char *call = "ncclAlltoAll";
#else
    const size_t chunk = n * dtypeSize(t);
    ncclResult_t r = ncclGroupStart();
    for (int peer = 0; r == ncclSuccess && peer < g.size; ++peer) {
      r = ncclSend(static_cast<const char *>(send) + peer * chunk, m.count,
                   m.type, peer, g.comm, st);
      if (r == ncclSuccess)
        r = ncclRecv(static_cast<char *>(recv) + peer * chunk, m.count, m.type,
                     peer, g.comm, st);
    }
    ncclResult_t end = ncclGroupEnd();
    if (r == ncclSuccess)
      r = end;
    const char *call = "ncclSend/ncclRecv (all-to-all)";
#endif
    if (staging)
      checkCuda(cudaFreeAsync(staging, st), "cudaFreeAsync");
    checkNccl(r, call, g.comm);
  }

  void reduceScatter(BackendComm &c, const void *send, void *recv, size_t n,
                     DType t, RedOp op, bool inPlace, Stream s) override {
    NcclComm &g = nccl(c);
    cudaStream_t st = cuda(s);
    const size_t chunkBytes = n * dtypeSize(t);
    // Ours is "result in recv[0..n) with recv == send"; NCCL's in-place form
    // is recv == send + rank * n. Use NCCL's and move the chunk down.
    void *out =
        inPlace ? static_cast<char *>(recv) + g.rank * chunkBytes : recv;
    checkNccl(
        ncclReduceScatter(send, out, n, ncclType(t), ncclOp(t, op), g.comm, st),
        "ncclReduceScatter", g.comm);
    if (out != recv)
      checkCuda(
          cudaMemcpyAsync(recv, out, chunkBytes, cudaMemcpyDeviceToDevice, st),
          "cudaMemcpyAsync");
    finishAverage(recv, n, t, op, g.size, st);
  }

  void allReduce(BackendComm &c, const void *send, void *recv, size_t n,
                 DType t, RedOp op, bool inPlace, Stream s) override {
    NcclComm &g = nccl(c);
    cudaStream_t st = cuda(s);
    checkNccl(ncclAllReduce(inPlace ? recv : send, recv, n, ncclType(t),
                            ncclOp(t, op), g.comm, st),
              "ncclAllReduce", g.comm);
    finishAverage(recv, n, t, op, g.size, st);
  }

  void permute(const void *send, void *recv, size_t n, DType t, int source,
               const std::vector<int> &dests, Stream s) override {
    cudaStream_t st = cuda(s);
    Moved m = moved(t, n);
    const size_t bytes = n * dtypeSize(t);
    const bool receives = source >= 0 && source != rank_;
    void *target = recv;
    void *staging = nullptr;
    if (receives && send == recv) {
      // Receiving over the buffer being sent: stage the incoming data.
      checkCuda(cudaMallocAsync(&staging, bytes, st), "cudaMallocAsync");
      target = staging;
    }
    if (source == rank_ && send != recv)
      checkCuda(
          cudaMemcpyAsync(recv, send, bytes, cudaMemcpyDeviceToDevice, st),
          "cudaMemcpyAsync");
    // One group: NCCL schedules all pairs together, so a cycle of sends and
    // receives cannot deadlock.
    ncclResult_t r = ncclGroupStart();
    if (r == ncclSuccess && receives)
      r = ncclRecv(target, m.count, m.type, source, world_, st);
    for (size_t i = 0; r == ncclSuccess && i < dests.size(); ++i)
      if (dests[i] != rank_)
        r = ncclSend(send, m.count, m.type, dests[i], world_, st);
    ncclResult_t end = ncclGroupEnd();
    checkNccl(r != ncclSuccess ? r : end, "ncclSend/ncclRecv (permute)",
              world_);
    if (staging) {
      checkCuda(
          cudaMemcpyAsync(recv, staging, bytes, cudaMemcpyDeviceToDevice, st),
          "cudaMemcpyAsync");
      checkCuda(cudaFreeAsync(staging, st), "cudaFreeAsync");
    }
  }

  // Per peer, the boxes travel as one contiguous message in table order:
  // packed by the copy kernel into a temporary (or sent/received in place
  // when the peer's only box is one contiguous run), one ncclSend/ncclRecv
  // per peer inside one ncclGroupStart/End on the world communicator (point
  // to point: only the ranks of the exchange take part), unpacked by the
  // copy kernel. Local copies are one kernel each. All on the stream.
  void exchange(const ExchangeCall &x, Stream s) override {
    cudaStream_t st = cuda(s);
    const ExchangeRole &role = *x.role;
    const size_t e = dtypeSize(x.dtype);
    const int nd = x.numDims;
    const char *send = static_cast<const char *>(x.send);
    char *recv = static_cast<char *>(x.recv);
    auto inPlace = [&](const ExchangePeer &p, const int64_t *shape,
                       bool sending) -> char * {
      if (p.entries.size() != 1)
        return nullptr;
      ExchangeEntry en = x.entry(p.entries[0]);
      if (!boxIsContiguous(nd, shape, en.size()))
        return nullptr;
      const int64_t offset =
          rowMajorOffset(nd, shape, sending ? en.srcOffset() : en.dstOffset());
      return (sending ? const_cast<char *>(send) : recv) +
             offset * static_cast<int64_t>(e);
    };
    // One temporary for every staged peer, freed in stream order.
    std::vector<char *> sendBufs(role.sends.size()),
        recvBufs(role.recvs.size());
    size_t stageBytes = 0;
    std::vector<size_t> sendAt(role.sends.size()), recvAt(role.recvs.size());
    for (size_t i = 0; i < role.sends.size(); ++i) {
      sendBufs[i] = inPlace(role.sends[i], x.sendShape, true);
      sendAt[i] = stageBytes;
      if (!sendBufs[i])
        stageBytes += align(role.sends[i].elements * e);
    }
    std::vector<bool> recvStaged(role.recvs.size());
    for (size_t i = 0; i < role.recvs.size(); ++i) {
      recvBufs[i] = inPlace(role.recvs[i], x.recvShape, false);
      recvAt[i] = stageBytes;
      recvStaged[i] = !recvBufs[i];
      if (recvStaged[i])
        stageBytes += align(role.recvs[i].elements * e);
    }
    char *stage = nullptr;
    if (stageBytes > 0)
      checkCuda(
          cudaMallocAsync(reinterpret_cast<void **>(&stage), stageBytes, st),
          "cudaMallocAsync");
    for (size_t i = 0; i < role.sends.size(); ++i) {
      if (sendBufs[i])
        continue;
      sendBufs[i] = stage + sendAt[i];
      char *at = sendBufs[i];
      for (int64_t k : role.sends[i].entries) {
        ExchangeEntry en = x.entry(k);
        BoxCopy c = boxPackCopy(nd, x.sendShape, en.srcOffset(), en.size(), e,
                                send, at, /*toPacked=*/true);
        launch(c, st);
        at += en.elements() * e;
      }
    }
    for (size_t i = 0; i < role.recvs.size(); ++i)
      if (!recvBufs[i])
        recvBufs[i] = stage + recvAt[i];
    for (int64_t k : role.local) {
      ExchangeEntry en = x.entry(k);
      launch(boxCopy(nd, en.size(), x.sendShape, en.srcOffset(), send,
                     x.recvShape, en.dstOffset(), recv, e),
             st);
    }
    // Bytes on the wire: the element type does not matter for movement.
    ncclResult_t r = ncclGroupStart();
    for (size_t i = 0; r == ncclSuccess && i < role.recvs.size(); ++i)
      r = ncclRecv(recvBufs[i], role.recvs[i].elements * e, ncclUint8,
                   static_cast<int>(role.recvs[i].rank), world_, st);
    for (size_t i = 0; r == ncclSuccess && i < role.sends.size(); ++i)
      r = ncclSend(sendBufs[i], role.sends[i].elements * e, ncclUint8,
                   static_cast<int>(role.sends[i].rank), world_, st);
    ncclResult_t end = ncclGroupEnd();
    checkNccl(r != ncclSuccess ? r : end, "ncclSend/ncclRecv (exchange)",
              world_);
    for (size_t i = 0; i < role.recvs.size(); ++i) {
      if (!recvStaged[i])
        continue; // received in place
      const char *at = recvBufs[i];
      for (int64_t k : role.recvs[i].entries) {
        ExchangeEntry en = x.entry(k);
        BoxCopy c = boxPackCopy(nd, x.recvShape, en.dstOffset(), en.size(), e,
                                recv, at, /*toPacked=*/false);
        launch(c, st);
        at += en.elements() * e;
      }
    }
    if (stage)
      checkCuda(cudaFreeAsync(stage, st), "cudaFreeAsync");
  }

  void synchronize(Stream s) override {
    cudaStream_t st = cuda(s);
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
      cudaError_t e = cudaStreamQuery(st);
      if (e == cudaSuccess)
        return;
      if (e != cudaErrorNotReady)
        checkCuda(e, "cudaStreamQuery");
      // A collective whose peer died never completes on its own; NCCL
      // reports it as an asynchronous error on the communicator.
      for (ncclComm_t c : comms_) {
        ncclResult_t async = ncclSuccess;
        checkNccl(ncclCommGetAsyncError(c, &async), "ncclCommGetAsyncError", c);
        if (async != ncclSuccess && async != ncclInProgress) {
          std::string reason = std::string("a collective failed "
                                           "asynchronously: ") +
                               ncclGetErrorString(async);
          const char *last = ncclGetLastError(c);
          if (last && *last)
            reason += std::string(" (") + last + ")";
          for (ncclComm_t other : comms_)
            ncclCommAbort(other);
          comms_.clear();
          backendError(reason);
        }
      }
      if (syncTimeoutS_ > 0 && std::chrono::duration<double>(
                                   std::chrono::steady_clock::now() - start)
                                       .count() > syncTimeoutS_)
        backendError("the stream did not complete within " +
                     std::to_string(syncTimeoutS_) +
                     " s (DIST_RT_SYNC_TIMEOUT_S); a peer may be stuck");
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }

private:
  struct Moved {
    size_t count;
    ncclDataType_t type;
  };

  static NcclComm &nccl(BackendComm &c) { return static_cast<NcclComm &>(c); }
  static size_t align(size_t bytes) { return (bytes + 255) / 256 * 256; }

  void launch(const BoxCopy &c, cudaStream_t st) {
    if (c.plan.empty())
      return;
    checkCuda(static_cast<cudaError_t>(
                  cuda::launchCopy(c.plan, c.src, c.dst, st, gpu_.numSMs())),
              "copy kernel launch");
  }

  // Type for reductions (the arithmetic matters). Booleans are bytes 0/1,
  // on which unsigned max/min/prod are or/and/and.
  static ncclDataType_t ncclType(DType t) {
    switch (t) {
    case DType::F16:
      return ncclFloat16;
    case DType::BF16:
      return ncclBfloat16;
    case DType::F32:
      return ncclFloat32;
    case DType::F64:
      return ncclFloat64;
    case DType::I32:
      return ncclInt32;
    case DType::I64:
      return ncclInt64;
    case DType::I8:
      return ncclInt8;
    case DType::I1:
    case DType::I16: // not reducible (supportsReduction); moved as bytes
      return ncclUint8;
    }
    return ncclUint8;
  }

  // Type and count for pure data movement: NCCL has no 16-bit integer, so
  // i16 moves as twice as many bytes.
  static Moved moved(DType t, size_t n) {
    if (t == DType::I16)
      return {2 * n, ncclUint8};
    return {n, ncclType(t)};
  }

  static ncclRedOp_t ncclOp(DType t, RedOp op) {
    switch (op) {
    case RedOp::Sum:
      return ncclSum;
    case RedOp::Max:
      return ncclMax;
    case RedOp::Min:
      return ncclMin;
    case RedOp::Prod:
      return ncclProd;
    case RedOp::Avg:
      // Floats: NCCL's own mean. Integers: a sum, divided by the kernel
      // below, so that the rounding (toward zero) is the MPI backend's.
      return isFloat(t) ? ncclAvg : ncclSum;
    }
    return ncclSum;
  }

  void finishAverage(void *data, size_t n, DType t, RedOp op, int groupSize,
                     cudaStream_t st) {
    if (op != RedOp::Avg || isFloat(t))
      return;
    checkCuda(static_cast<cudaError_t>(cuda::launchDivideInts(
                  data, n, t, groupSize, st, gpu_.numSMs())),
              "divide kernel launch");
  }

  int rank_ = 0;
  int size_ = 1;
  double syncTimeoutS_ = 0;
  ncclComm_t world_ = nullptr;
  std::vector<ncclComm_t> comms_; // world first, then every group
};

} // namespace

std::unique_ptr<Backend> createNcclBackend() {
  return std::make_unique<NcclBackend>();
}

} // namespace dist::rt
