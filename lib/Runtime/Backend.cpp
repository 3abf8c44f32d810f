//===- Backend.cpp - Backend registry and MPI error helpers ---------------===//

#include "Backend.h"

#include <cstdlib>
#include <string>

namespace dist::rt {

std::vector<std::string> availableBackends() {
  std::vector<std::string> names{"mpi"};
#if defined(DIST_RT_HAVE_NCCL)
  names.push_back("nccl");
#endif
  return names;
}

/// Whether the MPI backend keeps its buffers in device memory
/// (DIST_RT_MPI_MEMORY: host, the default; device; auto: device when this
/// runtime has CUDA and a GPU is visible).
static bool mpiOnDevice() {
  const char *v = std::getenv("DIST_RT_MPI_MEMORY");
  std::string memory = v ? v : "host";
  if (memory == "host")
    return false;
#if defined(DIST_RT_HAVE_NCCL)
  if (memory == "device")
    return true;
  if (memory == "auto")
    return cudaDeviceVisible();
#else
  if (memory == "device")
    throw Error(DIST_RT_ERR_STATE,
                "DIST_RT_MPI_MEMORY=device, but this runtime was built "
                "without CUDA");
  if (memory == "auto")
    return false;
#endif
  throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
              "DIST_RT_MPI_MEMORY must be host, device or auto, not '" +
                  memory + "'");
}

std::unique_ptr<Backend> createBackend(const std::string &name) {
  if (name == "mpi") {
#if defined(DIST_RT_HAVE_NCCL)
    if (mpiOnDevice())
      return createStagedMpiBackend();
#else
    (void)mpiOnDevice();
#endif
    return createMpiBackend();
  }
#if defined(DIST_RT_HAVE_NCCL)
  if (name == "nccl")
    return createNcclBackend();
#endif
  std::string list;
  for (const std::string &n : availableBackends())
    list += (list.empty() ? "" : ", ") + n;
  std::string reason = "unknown backend '" + name + "' (available: " + list;
#if !defined(DIST_RT_HAVE_NCCL)
  if (name == "nccl")
    reason = "backend 'nccl' was not built (CUDA or NCCL not found at "
             "configure time, or DIST_ENABLE_NCCL=OFF); available: " +
             list;
#endif
  throw Error(DIST_RT_ERR_STATE, reason + ")");
}

std::string mpiErrorString(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(buf, len) + " (MPI error " + std::to_string(code) + ")";
}

void checkMpi(int rc, const char *call) {
  if (rc != MPI_SUCCESS)
    throw Error(DIST_RT_ERR_BACKEND,
                std::string(call) + " failed: " + mpiErrorString(rc));
}

namespace {
[[noreturn]] void noKernels(const Backend &backend) {
  throw Error(DIST_RT_ERR_UNSUPPORTED,
              std::string("the ") + backend.name() +
                  " backend runs no GPU kernels here: a program compiled "
                  "for target=gpu with compute needs a GPU, with the nccl "
                  "backend (one per rank) or the mpi backend on device "
                  "memory (DIST_RT_MPI_MEMORY=device or auto)");
}
} // namespace

void *Backend::loadKernels(const void *, size_t) { noKernels(*this); }
void Backend::unloadKernels(void *) noexcept {}
void *Backend::kernel(void *, const char *) { noKernels(*this); }
void Backend::launchKernel(void *, const int64_t[3], const int64_t[3], int32_t,
                           void **, Stream) {
  noKernels(*this);
}

namespace {
/// An exchange done when it was started.
class CompletedExchange final : public Backend::PendingExchange {
public:
  void wait() override {}
  void cancel() override {}
};
} // namespace

std::unique_ptr<Backend::PendingExchange>
Backend::exchangeStart(const ExchangeCall &call,
                       const std::function<int(int64_t)> &, Stream s) {
  exchange(call, s);
  return std::make_unique<CompletedExchange>();
}

} // namespace dist::rt
