//===- CApiGpuKernels.cpp - C ABI: the GPU kernels of compiled programs ---===//
//
// Programs compiled for target=gpu embed their kernels as a binary (a
// fatbin from gpu-module-to-binary) and launch them through the calls
// MLIR's gpu-to-llvm lowering emits: the mgpu* functions of MLIR's CUDA
// runtime wrappers, which Debian's MLIR does not ship. The runtime provides
// them (docs/runtime.md, "GPU kernels"), on the backend's device:
//   mgpuModuleLoad / Unload     the binary, loaded when the program's shared
//                               object is (after distRtInit) and unloaded
//                               with it
//   mgpuModuleGetFunction       a kernel by name
//   mgpuLaunchKernel            a launch on the given stream
//   mgpuStreamCreate / Destroy  the runtime's stream, every time: kernels,
//                               collectives, copies and GEMMs of a program
//                               are all ordered on it
//   mgpuStreamSynchronize       nothing: the lowering synchronizes after
//                               every launch, but nothing on the host reads
//                               device memory in between (convert-compute-
//                               to-gpu refuses such code), so the wait is
//                               the caller's distRtSynchronize at the end
// Failures follow the runtime's policy (abort with the rank and reason, or
// a status for distRtLastError): these calls return nothing to check.
//
//===----------------------------------------------------------------------===//

#include "Errors.h"
#include "State.h"

#include "dist/Runtime/DistRuntime.h"

#include <cstddef>
#include <cstdint>
#include <string>

using namespace dist::rt;

extern "C" {

DIST_RT_API void *mgpuModuleLoad(void *data, size_t bytes) {
  return guardValue<void *>("gpu_module_load", nullptr, [&]() -> void * {
    requireInit();
    if (!data)
      invalid("the kernel image is null");
    return S.backend->loadKernels(data, bytes);
  });
}

DIST_RT_API void mgpuModuleUnload(void *module) {
  // At unload (dlclose, or exit): after distRtFinalize the backend is gone
  // and took its modules with it.
  if (module && S.backend)
    S.backend->unloadKernels(module);
}

DIST_RT_API void *mgpuModuleGetFunction(void *module, const char *name) {
  return guardValue<void *>("gpu_kernel", nullptr, [&]() -> void * {
    requireInit();
    if (!module || !name)
      invalid("no module or no kernel name");
    return S.backend->kernel(module, name);
  });
}

DIST_RT_API void mgpuLaunchKernel(void *function, intptr_t gridX,
                                  intptr_t gridY, intptr_t gridZ,
                                  intptr_t blockX, intptr_t blockY,
                                  intptr_t blockZ, int32_t sharedBytes,
                                  void *stream, void **params, void **extra,
                                  size_t paramsCount) {
  (void)paramsCount;
  guard("gpu_launch", [&] {
    requireInit();
    if (!function)
      invalid("no kernel");
    if (extra)
      invalid("'extra' launch parameters are not supported");
    const int64_t grid[3] = {gridX, gridY, gridZ};
    const int64_t block[3] = {blockX, blockY, blockZ};
    for (int d = 0; d < 3; ++d)
      if (grid[d] < 1 || block[d] < 1)
        invalid("empty launch dimension");
    S.backend->launchKernel(function, grid, block, sharedBytes, params,
                            S.backend->resolveStream(stream));
  });
}

DIST_RT_API void *mgpuStreamCreate(void) {
  return guardValue<void *>("gpu_stream", nullptr, [&]() -> void * {
    requireInit();
    return S.backend->defaultStream();
  });
}

DIST_RT_API void mgpuStreamDestroy(void *) {}

DIST_RT_API void mgpuStreamSynchronize(void *) {}

} // extern "C"
