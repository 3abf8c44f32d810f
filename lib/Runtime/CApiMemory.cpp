//===- CApiMemory.cpp - C ABI: memory and streams -------------------------===//
//
// Buffers of the backend's memory (through the block cache, Allocation.h),
// MLIR's allocation hooks for code compiled for target=gpu, copies between
// host and backend memory, and streams.
//
//===----------------------------------------------------------------------===//

#include "ArgumentChecks.h"
#include "Errors.h"
#include "State.h"

#include "dist/Runtime/DistRuntime.h"

#include <string>

using namespace dist::rt;

extern "C" {

void *distRtAlloc(int64_t bytes) {
  return guardValue<void *>("alloc", nullptr, [&]() -> void * {
    requireInit();
    if (bytes < 0)
      invalid("negative size " + std::to_string(bytes));
    if (bytes == 0)
      return nullptr;
    return S.blocks->get(static_cast<size_t>(bytes));
  });
}

int32_t distRtFree(void *ptr) {
  return guard("free", [&] {
    requireInit();
    if (ptr && !S.blocks->put(ptr))
      invalid("pointer was not allocated by distRtAlloc");
  });
}

// Code compiled for target=gpu allocates its buffers through these (MLIR's
// memref-to-LLVM lowering with use-generic-functions), so that every buffer
// it creates lives in the backend's memory.
void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  return distRtAlloc(static_cast<int64_t>(size));
}

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  return guardValue<void *>("aligned_alloc", nullptr, [&]() -> void * {
    requireInit();
    // Both backends align to at least 64 bytes (cudaMalloc: 256).
    if (alignment > 64 || (alignment & (alignment - 1)) != 0)
      invalid("unsupported alignment " + std::to_string(alignment) +
              " (at most 64, a power of two)");
    if (size == 0)
      return nullptr;
    return S.blocks->get(static_cast<size_t>(size));
  });
}

void _mlir_memref_to_llvm_free(void *ptr) { distRtFree(ptr); }

int32_t distRtMemcpy(void *dst, const void *src, int64_t bytes, int32_t kind,
                     void *stream) {
  return guard("memcpy", [&] {
    requireInit();
    if (kind != DIST_RT_COPY_HOST_TO_DEVICE &&
        kind != DIST_RT_COPY_DEVICE_TO_HOST &&
        kind != DIST_RT_COPY_DEVICE_TO_DEVICE)
      invalid("unknown copy kind " + std::to_string(kind));
    if (bytes < 0)
      invalid("negative size " + std::to_string(bytes));
    Stream s = S.backend->resolveStream(stream);
    if (bytes == 0)
      return;
    checkBuffer(src, 1, "source");
    checkBuffer(dst, 1, "destination");
    if (overlaps(src, bytes, dst, bytes))
      invalid("source and destination overlap");
    S.backend->memcpy(dst, src, static_cast<size_t>(bytes), kind, s);
  });
}

void *distRtDefaultStream(void) {
  return guardValue<void *>("default_stream", nullptr, [] {
    requireInit();
    return S.backend->defaultStream();
  });
}

int32_t distRtSynchronize(void *stream) {
  return guard("synchronize", [&] {
    requireInit();
    S.backend->synchronize(S.backend->resolveStream(stream));
  });
}

} // extern "C"
