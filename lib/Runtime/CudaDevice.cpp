//===- CudaDevice.cpp - one rank's GPU for the CUDA backends --------------===//

#include "CudaDevice.h"
#include "Backend.h"
#include "CudaCopy.h"

#include <algorithm>
#include <cstdlib>

namespace dist::rt {

// The rank's index among the ranks of its node: the launcher's variable when
// there is one (Open MPI, MPICH/Hydra, Slurm), else a shared-memory split.
int localRankOnNode(MPI_Comm world) {
  for (const char *var :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *v = std::getenv(var))
      return std::atoi(v);
  MPI_Comm node;
  checkMpi(
      MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node),
      "MPI_Comm_split_type");
  int r = 0;
  MPI_Comm_rank(node, &r);
  MPI_Comm_free(&node);
  return r;
}

bool cudaDeviceVisible() {
  int devices = 0;
  return cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
}

void CudaDevice::init(int local, bool shared) {
  int devices = 0;
  checkCuda(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  if (devices == 0)
    backendError("no CUDA device is visible to this process");
  // NCCL refuses two ranks on one GPU in a communicator; say why up front.
  if (!shared && local >= devices)
    backendError("local rank " + std::to_string(local) +
                 " needs its own "
                 "GPU but only " +
                 std::to_string(devices) + " are visible (one rank per GPU)");
  device_ = local % devices;
  checkCuda(cudaSetDevice(device_), "cudaSetDevice");
  checkCuda(
      cudaDeviceGetAttribute(&numSMs_, cudaDevAttrMultiProcessorCount, device_),
      "cudaDeviceGetAttribute");
  checkCuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
            "cudaStreamCreateWithFlags");
}

void CudaDevice::finalize() noexcept {
  if (stream_)
    cudaStreamSynchronize(stream_);
  gemm_.release();
  for (cudaLibrary_t library : libraries_)
    cudaLibraryUnload(library);
  libraries_.clear();
  if (stream_)
    cudaStreamDestroy(stream_);
  stream_ = nullptr;
}

void CudaDevice::copy(const CopyPlan &plan, const void *src, void *dst,
                      cudaStream_t s) {
  checkCuda(
      static_cast<cudaError_t>(cuda::launchCopy(plan, src, dst, s, numSMs_)),
      "copy kernel launch");
}

void CudaDevice::fillZero(const CopyPlan &plan, void *dst, cudaStream_t s) {
  checkCuda(
      static_cast<cudaError_t>(cuda::launchFillZero(plan, dst, s, numSMs_)),
      "fill kernel launch");
}

void *CudaDevice::loadKernels(const void *image) {
  cudaLibrary_t library = nullptr;
  checkCuda(cudaLibraryLoadData(&library, image, nullptr, nullptr, 0, nullptr,
                                nullptr, 0),
            "cudaLibraryLoadData");
  libraries_.push_back(library);
  return library;
}

void CudaDevice::unloadKernels(void *module) noexcept {
  auto library = static_cast<cudaLibrary_t>(module);
  auto it = std::find(libraries_.begin(), libraries_.end(), library);
  if (it == libraries_.end())
    return;
  libraries_.erase(it);
  if (stream_)
    cudaStreamSynchronize(stream_);
  cudaLibraryUnload(library);
}

void *CudaDevice::kernel(void *module, const char *name) {
  cudaKernel_t kernel = nullptr;
  checkCuda(
      cudaLibraryGetKernel(&kernel, static_cast<cudaLibrary_t>(module), name),
      "cudaLibraryGetKernel");
  return kernel;
}

void CudaDevice::launchKernel(void *kernel, const int64_t grid[3],
                              const int64_t block[3], int32_t sharedBytes,
                              void **params, cudaStream_t s) {
  auto dim = [](const int64_t d[3]) {
    return dim3(static_cast<unsigned>(d[0]), static_cast<unsigned>(d[1]),
                static_cast<unsigned>(d[2]));
  };
  checkCuda(cudaLaunchKernel(static_cast<const void *>(kernel), dim(grid),
                             dim(block), params,
                             static_cast<size_t>(sharedBytes), s),
            "cudaLaunchKernel");
}

void *CudaDevice::allocate(size_t bytes) {
  void *p = nullptr;
  checkCuda(cudaMalloc(&p, bytes), "cudaMalloc");
  return p;
}

void CudaDevice::deallocate(void *ptr) { checkCuda(cudaFree(ptr), "cudaFree"); }

void CudaDevice::memcpy(void *dst, const void *src, size_t bytes, int kind,
                        cudaStream_t s) {
  checkCuda(
      cudaMemcpyAsync(dst, src, bytes, static_cast<cudaMemcpyKind>(kind), s),
      "cudaMemcpyAsync");
}

} // namespace dist::rt
