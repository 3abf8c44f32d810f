//===- CudaCopy.h - CUDA kernels for local data movement -------*- C++ -*-===//
//
// Executes CopyPlans (dist/Runtime/CopyPlan.h) on device memory, on a
// stream. Host-callable from plain C++ (no CUDA headers needed here).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_RUNTIME_CUDACOPY_H
#define DIST_LIB_RUNTIME_CUDACOPY_H

#include "CopyPlan.h"
#include "Types.h"

#include <cstddef>
#include <cstdint>

namespace dist::rt::cuda {

/// Enqueues the copy of `plan` from src to dst on `stream` (a
/// cudaStream_t). `numSMs` sizes the grid. Returns the cudaError_t of the
/// launch as an int (0 = cudaSuccess).
int launchCopy(const CopyPlan &plan, const void *src, void *dst, void *stream,
               int numSMs);

/// Enqueues zero stores over the destination box of `plan`.
int launchFillZero(const CopyPlan &plan, void *dst, void *stream, int numSMs);

/// Enqueues data[i] /= divisor for `n` integer elements of type `t`,
/// truncating toward zero (the second half of an integer average).
int launchDivideInts(void *data, size_t n, DType t, int64_t divisor,
                     void *stream, int numSMs);

} // namespace dist::rt::cuda

#endif // DIST_LIB_RUNTIME_CUDACOPY_H
