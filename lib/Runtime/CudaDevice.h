//===- CudaDevice.h - one rank's GPU for the CUDA backends ------*- C++ -*-===//
//
// What both backends with device memory need of the rank's GPU: choosing
// it, the runtime's stream, memory, the copy kernels (CudaCopy.h), matrix
// products (CublasGemm.h) and the kernels that compiled programs embed
// (loaded as CUDA libraries through the runtime API, so nothing links the
// driver library, which a machine without a GPU lacks). The NCCL backend
// moves data with NCCL; the MPI backend with device memory
// (StagedMpiBackend.cpp) stages it through the host.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_RUNTIME_CUDADEVICE_H
#define DIST_LIB_RUNTIME_CUDADEVICE_H

#include "Backend.h"
#include "CopyPlan.h"
#include "CublasGemm.h"
#include "Types.h"

#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace dist::rt {

[[noreturn]] inline void backendError(const std::string &reason) {
  throw Error(DIST_RT_ERR_BACKEND, reason);
}

inline void checkCuda(cudaError_t e, const char *call) {
  if (e != cudaSuccess)
    backendError(std::string(call) + " failed: " + cudaGetErrorName(e) + ": " +
                 cudaGetErrorString(e));
}

/// The rank's index among the ranks of its node: the launcher's variable
/// when there is one (Open MPI, MPICH/Hydra, Slurm), else a shared-memory
/// split of `world`.
int localRankOnNode(MPI_Comm world);

class CudaDevice {
public:
  /// Picks the GPU of the rank with index `local` among its node's ranks:
  /// its own (one GPU per rank: an error when there are too few), or with
  /// `shared` the GPUs in turn (local modulo their count). Makes the stream.
  void init(int local, bool shared);
  /// Releases everything; must not throw.
  void finalize() noexcept;

  cudaStream_t stream() const { return stream_; }
  int numSMs() const { return numSMs_; }

  void copy(const CopyPlan &plan, const void *src, void *dst, cudaStream_t s);
  void fillZero(const CopyPlan &plan, void *dst, cudaStream_t s);
  void gemm(const GemmCall &call, cudaStream_t s) { gemm_.run(call, s); }

  void *loadKernels(const void *image);
  void unloadKernels(void *module) noexcept;
  void *kernel(void *module, const char *name);
  void launchKernel(void *kernel, const int64_t grid[3], const int64_t block[3],
                    int32_t sharedBytes, void **params, cudaStream_t s);

  void *allocate(size_t bytes);
  void deallocate(void *ptr);
  void memcpy(void *dst, const void *src, size_t bytes, int kind,
              cudaStream_t s);

private:
  int device_ = 0;
  int numSMs_ = 1;
  cudaStream_t stream_ = nullptr;
  CublasGemm gemm_;
  std::vector<cudaLibrary_t> libraries_;
};

/// A backend whose memory is the rank's GPU: local work (copies, fills,
/// matrix products, the programs' kernels), memory and the stream go to
/// the device; the subclass moves data between ranks and sets `gpu_` up.
class DeviceMemoryBackend : public Backend {
public:
  void copy(const CopyPlan &plan, const void *src, void *dst,
            Stream s) override {
    gpu_.copy(plan, src, dst, cuda(s));
  }
  void fillZero(const CopyPlan &plan, void *dst, Stream s) override {
    gpu_.fillZero(plan, dst, cuda(s));
  }
  void gemm(const GemmCall &call, Stream s) override {
    gpu_.gemm(call, cuda(s));
  }

  void *loadKernels(const void *image, size_t) override {
    return gpu_.loadKernels(image);
  }
  void unloadKernels(void *module) noexcept override {
    gpu_.unloadKernels(module);
  }
  void *kernel(void *module, const char *name) override {
    return gpu_.kernel(module, name);
  }
  void launchKernel(void *kernel, const int64_t grid[3], const int64_t block[3],
                    int32_t sharedBytes, void **params, Stream s) override {
    gpu_.launchKernel(kernel, grid, block, sharedBytes, params, cuda(s));
  }

  void *allocate(size_t bytes) override { return gpu_.allocate(bytes); }
  void deallocate(void *ptr) override { gpu_.deallocate(ptr); }
  void memcpy(void *dst, const void *src, size_t bytes, int kind,
              Stream s) override {
    gpu_.memcpy(dst, src, bytes, kind, cuda(s));
  }

  Stream resolveStream(Stream s) override { return s ? s : gpu_.stream(); }
  Stream defaultStream() override { return gpu_.stream(); }

protected:
  static cudaStream_t cuda(Stream s) { return static_cast<cudaStream_t>(s); }
  CudaDevice gpu_;
};

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_CUDADEVICE_H
