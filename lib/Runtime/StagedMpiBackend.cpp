//===- StagedMpiBackend.cpp - MPI with device memory, staged via the host -===//
//
// The MPI backend for programs compiled for target=gpu on a machine whose
// ranks share GPUs (DIST_RT_MPI_MEMORY=device, or auto with a GPU visible:
// docs/runtime.md). Buffers are device memory, so the program's kernels,
// copies and matrix products run on the GPU (CudaDevice), while every
// transfer between ranks goes through host memory: the stream is drained,
// the data copied to a pinned host buffer, moved by the MPI backend (its
// collectives, permutes and exchanges, unchanged), and copied back. NCCL
// cannot do this: it refuses two ranks on one GPU. Slower than NCCL by the
// two copies, but it runs any number of ranks on any number of GPUs, and
// checks the GPU path against the same collectives the CPU tests use.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "CudaDevice.h"

#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

namespace dist::rt {
namespace {

/// A pinned host buffer that grows to the largest request.
class HostStage {
public:
  HostStage() = default;
  HostStage(const HostStage &) = delete;
  HostStage &operator=(const HostStage &) = delete;
  ~HostStage() { release(); }
  char *get(size_t bytes) {
    if (bytes > capacity_) {
      release();
      void *p = nullptr;
      checkCuda(cudaMallocHost(&p, bytes), "cudaMallocHost");
      data_ = static_cast<char *>(p);
      capacity_ = bytes;
    }
    return data_;
  }
  void release() noexcept {
    if (data_)
      cudaFreeHost(data_);
    data_ = nullptr;
    capacity_ = 0;
  }

private:
  char *data_ = nullptr;
  size_t capacity_ = 0;
};

class StagedMpiBackend final : public DeviceMemoryBackend {
public:
  const char *name() const override { return "mpi"; }

  void init(MPI_Comm world) override {
    MPI_Comm_rank(world, &rank_);
    host_->init(world);
    gpu_.init(localRankOnNode(world), /*shared=*/true);
  }

  void finalize() noexcept override {
    gpu_.finalize();
    sendStage_.release();
    recvStage_.release();
    host_->finalize();
  }

  std::unique_ptr<BackendComm> createComm(MPI_Comm groupComm, int color,
                                          int key) override {
    return host_->createComm(groupComm, color, key);
  }
  size_t maxCount() const override { return host_->maxCount(); }
  bool supportsReduction(DType t, RedOp op) const override {
    return host_->supportsReduction(t, op);
  }

  void allGather(BackendComm &c, const void *send, void *recv, size_t n,
                 DType t, bool inPlace, Stream s) override {
    const size_t chunk = n * dtypeSize(t), whole = chunk * c.memberCount();
    staged(send, chunk, recv, whole, whole, inPlace, s,
           [&](const char *hostSend, char *hostRecv) {
             host_->allGather(c, hostSend, hostRecv, n, t, inPlace, nullptr);
           });
  }

  void allToAll(BackendComm &c, const void *send, void *recv, size_t n, DType t,
                bool inPlace, Stream s) override {
    const size_t whole = n * dtypeSize(t) * c.memberCount();
    staged(send, whole, recv, whole, whole, inPlace, s,
           [&](const char *hostSend, char *hostRecv) {
             host_->allToAll(c, hostSend, hostRecv, n, t, inPlace, nullptr);
           });
  }

  void reduceScatter(BackendComm &c, const void *send, void *recv, size_t n,
                     DType t, RedOp op, bool inPlace, Stream s) override {
    const size_t chunk = n * dtypeSize(t), whole = chunk * c.memberCount();
    // In place the whole buffer is the input and the result its start.
    staged(send, whole, recv, inPlace ? whole : chunk, chunk, inPlace, s,
           [&](const char *hostSend, char *hostRecv) {
             host_->reduceScatter(c, hostSend, hostRecv, n, t, op, inPlace,
                                  nullptr);
           });
  }

  void allReduce(BackendComm &c, const void *send, void *recv, size_t n,
                 DType t, RedOp op, bool inPlace, Stream s) override {
    const size_t bytes = n * dtypeSize(t);
    staged(send, bytes, recv, bytes, bytes, inPlace, s,
           [&](const char *hostSend, char *hostRecv) {
             host_->allReduce(c, hostSend, hostRecv, n, t, op, inPlace,
                              nullptr);
           });
  }

  void permute(const void *send, void *recv, size_t n, DType t, int source,
               const std::vector<int> &dests, Stream s) override {
    const size_t bytes = n * dtypeSize(t);
    char *hostSend = sendStage_.get(bytes);
    char *hostRecv = send == recv ? hostSend : recvStage_.get(bytes);
    // The send buffer is read by the sends, by the local copy of a rank
    // that is its own source, and in place by what it keeps.
    if (!dests.empty() || source == rank_ || send == recv)
      toHost(hostSend, send, bytes, s);
    host_->permute(hostSend, hostRecv, n, t, source, dests, nullptr);
    if (source >= 0)
      toDevice(recv, hostRecv, bytes, s);
  }

  void exchange(const ExchangeCall &call, Stream s) override {
    const size_t e = dtypeSize(call.dtype);
    auto bytesOf = [&](const int64_t *shape) {
      if (!shape)
        return size_t(0);
      size_t count = 1;
      for (int d = 0; d < call.numDims; ++d)
        count *= static_cast<size_t>(shape[d]);
      return count * e;
    };
    const size_t sendBytes = call.send ? bytesOf(call.sendShape) : 0;
    const size_t recvBytes = call.recv ? bytesOf(call.recvShape) : 0;
    ExchangeCall staged = call;
    // The receiver's boxes may cover part of its buffer: the rest keeps its
    // device contents.
    if (recvBytes) {
      char *hostRecv = recvStage_.get(recvBytes);
      toHost(hostRecv, call.recv, recvBytes, s);
      staged.recv = hostRecv;
    }
    if (sendBytes) {
      char *hostSend = call.send == call.recv && recvBytes
                           ? static_cast<char *>(staged.recv)
                           : sendStage_.get(sendBytes);
      if (hostSend != staged.recv)
        toHost(hostSend, call.send, sendBytes, s);
      staged.send = hostSend;
    }
    host_->exchange(staged, nullptr);
    if (recvBytes)
      toDevice(call.recv, static_cast<const char *>(staged.recv), recvBytes, s);
  }

  void synchronize(Stream s) override {
    checkCuda(cudaStreamSynchronize(cuda(s)), "cudaStreamSynchronize");
  }

private:
  /// A collective through the host: its input (`sendBytes` of `send`, or
  /// in place the `recvBytes` of `recv` it starts from) to the host, the
  /// host collective, and `backBytes` of the result back to `recv`.
  template <typename HostCollective>
  void staged(const void *send, size_t sendBytes, void *recv, size_t recvBytes,
              size_t backBytes, bool inPlace, Stream s, HostCollective run) {
    char *hostRecv = recvStage_.get(recvBytes);
    char *hostSend = nullptr;
    if (inPlace)
      toHost(hostRecv, recv, recvBytes, s);
    else
      toHost(hostSend = sendStage_.get(sendBytes), send, sendBytes, s);
    run(hostSend, hostRecv);
    toDevice(recv, hostRecv, backBytes, s);
  }

  /// The device bytes, once everything before them on the stream is done.
  void toHost(char *host, const void *device, size_t bytes, Stream s) {
    if (!bytes)
      return;
    checkCuda(
        cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, cuda(s)),
        "cudaMemcpyAsync (to host)");
    checkCuda(cudaStreamSynchronize(cuda(s)), "cudaStreamSynchronize");
  }
  /// The host bytes back, ordered before what follows on the stream; the
  /// stage is reused only after the next toHost, which waits for this.
  void toDevice(void *device, const char *host, size_t bytes, Stream s) {
    if (!bytes)
      return;
    checkCuda(
        cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, cuda(s)),
        "cudaMemcpyAsync (to device)");
    checkCuda(cudaStreamSynchronize(cuda(s)), "cudaStreamSynchronize");
  }

  int rank_ = 0; // in the world
  std::unique_ptr<Backend> host_ = createMpiBackend();
  HostStage sendStage_, recvStage_;
};

} // namespace

std::unique_ptr<Backend> createStagedMpiBackend() {
  return std::make_unique<StagedMpiBackend>();
}

} // namespace dist::rt
