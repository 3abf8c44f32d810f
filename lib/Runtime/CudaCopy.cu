//===- CudaCopy.cu - CUDA kernels for local data movement -----------------===//
//
// Two kernels execute every CopyPlan, in the plan's unit (16 bytes whenever
// the run length, strides and addresses allow it, so loads and stores are
// single 128-bit vector accesses):
//
//  - the row kernel, for runs of at least kRowKernelMinUnits units: each
//    block takes (row, segment) items, computes the row's base offsets once
//    and streams blockDim.x * kUnroll consecutive units, all loads first,
//    then all stores (memory-level parallelism); consecutive threads touch
//    consecutive units, so accesses coalesce;
//  - the unit kernel, for short runs (transposes, packing on the last dim):
//    one unit per thread per step of a grid-stride loop, its offsets
//    decomposed from the linear index with FastDivmod (32-bit) when the plan
//    fits, or 64-bit division otherwise.
//
// The offset functions are the ones in CopyPlan.h that the unit tests check
// on the CPU against a reference loop.
//
//===----------------------------------------------------------------------===//

#include "CudaCopy.h"

#include <cuda_runtime.h>

#include <algorithm>

namespace dist::rt::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 4;
constexpr int64_t kRowKernelMinUnits = 256;

// Plain-old-data vector units. uint4 loads/stores compile to
// ld.global.v4.u32 / st.global.v4.u32.
template <int N> struct UnitType;
template <> struct UnitType<1> {
  using type = uint8_t;
};
template <> struct UnitType<2> {
  using type = uint16_t;
};
template <> struct UnitType<4> {
  using type = uint32_t;
};
template <> struct UnitType<8> {
  using type = uint2;
};
template <> struct UnitType<16> {
  using type = uint4;
};

template <typename U> __device__ __forceinline__ U zeroUnit() { return U{}; }

// Fill kernels reuse the copy kernels with a null source.
template <typename U, bool Fill>
__global__ void __launch_bounds__(kThreads)
    rowKernel(CopyPlan plan, int64_t segsPerRow, const U *__restrict__ src,
              U *__restrict__ dst) {
  const int64_t run = plan.runUnits();
  const int64_t segLen = int64_t(kThreads) * kUnroll;
  const int64_t items = plan.numRows() * segsPerRow;
  for (int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const int64_t row = item / segsPerRow;
    const int64_t begin = (item - row * segsPerRow) * segLen;
    int64_t so, dO;
    planRowOffsets(plan, row, so, dO);
    const int64_t n = run - begin < segLen ? run - begin : segLen;
    U *d = dst + dO + begin;
    U tmp[kUnroll];
    if (!Fill) {
      const U *s = src + so + begin;
#pragma unroll
      for (int k = 0; k < kUnroll; ++k) {
        const int64_t i = threadIdx.x + int64_t(k) * kThreads;
        if (i < n)
          tmp[k] = s[i];
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const int64_t i = threadIdx.x + int64_t(k) * kThreads;
      if (i < n)
        d[i] = Fill ? zeroUnit<U>() : tmp[k];
    }
  }
}

template <typename U, bool Fill>
__global__ void __launch_bounds__(kThreads)
    unitKernel32(CopyPlan32 plan, uint32_t total, const U *__restrict__ src,
                 U *__restrict__ dst) {
  const uint32_t stride = gridDim.x * kThreads;
  for (uint32_t i = blockIdx.x * kThreads + threadIdx.x; i < total;
       i += stride) {
    uint32_t so, dO;
    plan32UnitOffsets(plan, i, so, dO);
    dst[dO] = Fill ? zeroUnit<U>() : src[so];
  }
}

template <typename U, bool Fill>
__global__ void __launch_bounds__(kThreads)
    unitKernel64(CopyPlan plan, const U *__restrict__ src,
                 U *__restrict__ dst) {
  const int64_t stride = int64_t(gridDim.x) * kThreads;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
       i < plan.totalUnits; i += stride) {
    int64_t so, dO;
    planUnitOffsets(plan, i, so, dO);
    dst[dO] = Fill ? zeroUnit<U>() : src[so];
  }
}

int gridFor(int64_t work, int numSMs) {
  // Enough resident blocks to saturate memory bandwidth; the kernels loop
  // over the rest, so huge copies do not launch millions of blocks.
  int64_t cap = int64_t(std::max(numSMs, 1)) * 16;
  return static_cast<int>(std::max<int64_t>(1, std::min(work, cap)));
}

template <int N, bool Fill>
int launch(const CopyPlan &plan, const void *src, void *dst,
           cudaStream_t stream, int numSMs) {
  using U = typename UnitType<N>::type;
  const U *s = static_cast<const U *>(src);
  U *d = static_cast<U *>(dst);
  if (plan.runUnits() >= kRowKernelMinUnits) {
    const int64_t segLen = int64_t(kThreads) * kUnroll;
    const int64_t segsPerRow = (plan.runUnits() + segLen - 1) / segLen;
    rowKernel<U, Fill>
        <<<gridFor(plan.numRows() * segsPerRow, numSMs), kThreads, 0, stream>>>(
            plan, segsPerRow, s, d);
  } else if (fitsIn32Bits(plan)) {
    unitKernel32<U, Fill>
        <<<gridFor((plan.totalUnits + kThreads - 1) / kThreads, numSMs),
           kThreads, 0, stream>>>(toPlan32(plan),
                                  static_cast<uint32_t>(plan.totalUnits), s, d);
  } else {
    unitKernel64<U, Fill>
        <<<gridFor((plan.totalUnits + kThreads - 1) / kThreads, numSMs),
           kThreads, 0, stream>>>(plan, s, d);
  }
  return static_cast<int>(cudaGetLastError());
}

template <bool Fill>
int dispatch(const CopyPlan &plan, const void *src, void *dst, void *stream,
             int numSMs) {
  if (plan.empty())
    return cudaSuccess;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  switch (plan.unitBytes) {
  case 16:
    return launch<16, Fill>(plan, src, dst, s, numSMs);
  case 8:
    return launch<8, Fill>(plan, src, dst, s, numSMs);
  case 4:
    return launch<4, Fill>(plan, src, dst, s, numSMs);
  case 2:
    return launch<2, Fill>(plan, src, dst, s, numSMs);
  default:
    return launch<1, Fill>(plan, src, dst, s, numSMs);
  }
}

template <typename T>
__global__ void divideKernel(T *data, size_t n, int64_t divisor) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += stride)
    data[i] = static_cast<T>(static_cast<int64_t>(data[i]) / divisor);
}

} // namespace

int launchCopy(const CopyPlan &plan, const void *src, void *dst, void *stream,
               int numSMs) {
  return dispatch<false>(plan, src, dst, stream, numSMs);
}

int launchFillZero(const CopyPlan &plan, void *dst, void *stream, int numSMs) {
  return dispatch<true>(plan, nullptr, dst, stream, numSMs);
}

int launchDivideInts(void *data, size_t n, DType t, int64_t divisor,
                     void *stream, int numSMs) {
  if (n == 0 || divisor == 1)
    return cudaSuccess;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  const int grid =
      gridFor(static_cast<int64_t>((n + kThreads - 1) / kThreads), numSMs);
  switch (t) {
  case DType::I8:
    divideKernel<<<grid, kThreads, 0, s>>>(static_cast<int8_t *>(data), n,
                                           divisor);
    break;
  case DType::I16:
    divideKernel<<<grid, kThreads, 0, s>>>(static_cast<int16_t *>(data), n,
                                           divisor);
    break;
  case DType::I32:
    divideKernel<<<grid, kThreads, 0, s>>>(static_cast<int32_t *>(data), n,
                                           divisor);
    break;
  case DType::I64:
    divideKernel<<<grid, kThreads, 0, s>>>(static_cast<int64_t *>(data), n,
                                           divisor);
    break;
  default:
    return cudaErrorInvalidValue;
  }
  return static_cast<int>(cudaGetLastError());
}

} // namespace dist::rt::cuda
