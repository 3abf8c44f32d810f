//===- Backend.h - Communication backend interface --------------*- C++ -*-===//
//
// What a backend (MPI, NCCL) provides to the runtime core. The core owns
// what is the same for every backend: handles, meshes, groups, argument
// validation, the cross-rank signature check and error reporting. A backend
// only moves bytes, on its kind of memory.
//
// The control plane is always MPI (ControlPlane.h: process launch,
// communicator splits, checks, NCCL's unique-id exchange), so the interface
// speaks MPI_Comm for setup; the data plane is the backend's own.
//
// Contract of the data-moving calls: arguments are already validated (counts
// fit the backend, dtype/redop supported, buffers non-null unless the count
// is 0, in-place forms recognised as documented in DistRuntime.h); failures
// are reported by throwing Error. Calls are asynchronous on `stream` where
// the backend has streams; synchronize(stream) waits and reports
// asynchronous failures.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_RUNTIME_BACKEND_H
#define DIST_LIB_RUNTIME_BACKEND_H

#include "CopyPlan.h"
#include "Exchange.h"
#include "Gemm.h"
#include "StridedGeometry.h"
#include "Types.h"

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dist::rt {

using Stream = void *;

/// Backend state of one group (e.g. an ncclComm_t). Owned by the core.
class BackendComm {
public:
  virtual ~BackendComm() = default;
  /// The number of members of the group.
  virtual int memberCount() const = 0;
};

/// How distRtExchange moves boxes between ranks (DIST_RT_EXCHANGE).
enum class ExchangeMode {
  Auto,     ///< the backend's fastest path for each pair
  Datatype, ///< mpi: no single copy between heaps; MPI walks the boxes
  Pack,     ///< mpi: staged through contiguous buffers only
};

/// One rank's part of a distRtExchange, validated by the core: the table,
/// this rank's buffers and shapes, and what it sends and receives.
struct ExchangeCall {
  int numDims = 0;
  const int64_t *table = nullptr;
  const int64_t *sendShape = nullptr; ///< null only when nothing is sent
  const int64_t *recvShape = nullptr; ///< null only when nothing is received
  const void *send = nullptr;
  void *recv = nullptr;
  DType dtype = DType::F32;
  const ExchangeRole *role = nullptr;     ///< role.named is true
  ExchangeMode mode = ExchangeMode::Auto; ///< the same on every rank

  ExchangeEntry entry(int64_t k) const {
    return exchangeEntry(table, numDims, k);
  }
};

/// How distRtAllToAllStrided moves its chunks (DIST_RT_STRIDED_ALLTOALL).
enum class StridedAllToAllMode {
  Auto,         ///< the backend's fastest path that applies to the call
  SharedMemory, ///< single copy out of the peers' memory, or an error
  Datatype,     ///< the transport walks the boxes (MPI derived datatypes)
  Pack,         ///< the core stages through contiguous chunks
};

class Backend {
public:
  virtual ~Backend() = default;

  virtual const char *name() const = 0;

  /// Sets the backend up over `world` (the core's private duplicate of
  /// MPI_COMM_WORLD, errors returned). Collective over the world.
  virtual void init(MPI_Comm world) = 0;
  /// Releases everything; must not throw (it also runs on the exit path).
  virtual void finalize() noexcept = 0;

  /// Backend state for this process's group. `groupComm` is the group's MPI
  /// communicator (members ordered by group index), `color`/`key` the split
  /// that produced it. Collective over the world. On a rank that is not a
  /// device of the group's mesh, groupComm is MPI_COMM_NULL and color -1:
  /// the backend takes its part in any world-collective setup and returns
  /// null (the core never passes such a group to a collective).
  virtual std::unique_ptr<BackendComm> createComm(MPI_Comm groupComm, int color,
                                                  int key) = 0;

  /// Largest element count one call can move (MPI's counts are int).
  virtual size_t maxCount() const = 0;
  /// Whether this backend reduces `t` with `op` (beyond supportsReduction).
  virtual bool supportsReduction(DType t, RedOp op) const = 0;

  virtual void allGather(BackendComm &comm, const void *send, void *recv,
                         size_t countPerRank, DType t, bool inPlace,
                         Stream s) = 0;
  virtual void allToAll(BackendComm &comm, const void *send, void *recv,
                        size_t countPerRank, DType t, bool inPlace,
                        Stream s) = 0;
  /// The strided all-to-all of distRtAllToAllStrided, without staging, when
  /// the backend can move the boxes itself. Returns false (having done
  /// nothing) when it cannot; the core then packs, exchanges contiguous
  /// chunks with allToAll and unpacks. `mode` is never Pack, and only a mode
  /// that supportsStridedMode accepted. Whether a path applies must be
  /// decided the same way on every member.
  virtual bool allToAllStrided(BackendComm &comm, const void *send,
                               const ChunkBoxes &sendBoxes, void *recv,
                               const ChunkBoxes &recvBoxes, DType t,
                               StridedAllToAllMode mode, Stream s) {
    (void)comm, (void)send, (void)sendBoxes, (void)recv, (void)recvBoxes;
    (void)t, (void)mode, (void)s;
    return false;
  }
  /// Whether DIST_RT_STRIDED_ALLTOALL may force `mode` on this backend
  /// (checked at init, so that a forced path is never silently replaced).
  virtual bool supportsStridedMode(StridedAllToAllMode mode) const {
    return mode == StridedAllToAllMode::Auto ||
           mode == StridedAllToAllMode::Pack;
  }
  virtual void reduceScatter(BackendComm &comm, const void *send, void *recv,
                             size_t countPerRank, DType t, RedOp op,
                             bool inPlace, Stream s) = 0;
  virtual void allReduce(BackendComm &comm, const void *send, void *recv,
                         size_t count, DType t, RedOp op, bool inPlace,
                         Stream s) = 0;
  /// Whole-buffer exchange over the world: receive `count` elements from
  /// `source` (-1: none; this rank: local copy) and send to each of `dests`
  /// (this rank among them means the same local copy). send may equal recv.
  virtual void permute(const void *send, void *recv, size_t count, DType t,
                       int source, const std::vector<int> &dests, Stream s) = 0;

  /// This rank's part of distRtExchange: the local copies, and the boxes of
  /// every transfer that names it sent to / received from the other ranks
  /// (point to point over the world; only the ranks in `call.role` take
  /// part). Transfers between a pair are matched in table order.
  virtual void exchange(const ExchangeCall &call, Stream s) = 0;

  /// An exchange in flight (distRtExchangeStart): wait() completes it,
  /// cancel() gives it up (its peers disagreed: nothing it received is
  /// used, and what it sent may never be received).
  class PendingExchange {
  public:
    virtual ~PendingExchange() = default;
    virtual void wait() = 0;
    virtual void cancel() = 0;
  };
  /// exchange() without waiting: every box of this rank posted (the local
  /// copies done) and the rest left to the pending exchange. `tagOfPeer`
  /// gives the message tag of each peer: exchanges in flight at once
  /// between a pair use different tags, so that a message never meets
  /// another exchange's receive. By default the exchange is done at once
  /// (a stream-ordered backend's exchange is already asynchronous to the
  /// host) and the pending one has nothing left to do.
  virtual std::unique_ptr<PendingExchange>
  exchangeStart(const ExchangeCall &call,
                const std::function<int(int64_t)> &tagOfPeer, Stream s);

  /// Local data movement on backend memory.
  virtual void copy(const CopyPlan &plan, const void *src, void *dst,
                    Stream s) = 0;
  virtual void fillZero(const CopyPlan &plan, void *dst, Stream s) = 0;

  /// C[b] += op(A[b]) op(B[b]) (distRtGemm; Gemm.h), checked by the core.
  virtual void gemm(const GemmCall &call, Stream s) = 0;

  /// GPU kernels that compiled programs embed (target=gpu; CApiGpuKernels):
  /// loaded on the backend's device, launched on `s`. A backend without a
  /// GPU throws Error(UNSUPPORTED).
  virtual void *loadKernels(const void *image, size_t bytes);
  virtual void unloadKernels(void *module) noexcept;
  virtual void *kernel(void *module, const char *name);
  virtual void launchKernel(void *kernel, const int64_t grid[3],
                            const int64_t block[3], int32_t sharedBytes,
                            void **params, Stream s);

  virtual void *allocate(size_t bytes) = 0;
  virtual void deallocate(void *ptr) = 0;
  /// kind is one of DIST_RT_COPY_*.
  virtual void memcpy(void *dst, const void *src, size_t bytes, int kind,
                      Stream s) = 0;

  /// Normalises a caller's stream: NULL becomes defaultStream(); a stream
  /// the backend cannot use throws Error(INVALID_ARGUMENT).
  virtual Stream resolveStream(Stream s) = 0;
  virtual Stream defaultStream() = 0;
  virtual void synchronize(Stream s) = 0;
};

/// The backends this build has, by name, in a fixed order ("mpi", then
/// "nccl" when built with it).
std::vector<std::string> availableBackends();

/// Creates a backend by name; throws Error(STATE) listing the available ones
/// when the name is unknown or the backend was not built.
std::unique_ptr<Backend> createBackend(const std::string &name);

std::unique_ptr<Backend> createMpiBackend();
#if defined(DIST_RT_HAVE_NCCL)
std::unique_ptr<Backend> createNcclBackend();
/// The MPI backend on device memory, transfers staged through the host
/// (StagedMpiBackend.cpp).
std::unique_ptr<Backend> createStagedMpiBackend();
/// Whether a CUDA device is visible to this process.
bool cudaDeviceVisible();
#endif

/// Formats an MPI return code with MPI_Error_string.
std::string mpiErrorString(int code);

/// Throws Error(BACKEND) "<call> failed: <MPI message>" unless rc is
/// MPI_SUCCESS.
void checkMpi(int rc, const char *call);

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_BACKEND_H
