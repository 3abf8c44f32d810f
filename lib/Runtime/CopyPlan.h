//===- CopyPlan.h - Index math of local data movement -----------*- C++ -*-===//
//
// Every local data movement of a reshard (strided slices, all-to-all chunk
// packing and unpacking on any dim, zero padding) is a copy over a box with
// independent source and destination strides. This header normalises such a
// copy into a CopyPlan once, on the host:
//   - size-1 dims are dropped and the element becomes an innermost dim of
//     bytes, so the plan is dtype-agnostic;
//   - adjacent dims that are contiguous on both sides are merged, so the
//     innermost dim is always the longest run that is contiguous in source
//     and destination alike;
//   - the run is then re-expressed in the widest unit (16, 8, 4, 2 or 1
//     bytes) that divides the run, every stride and both base addresses, so
//     the GPU kernels issue 16-byte vector accesses whenever alignment allows.
// The CPU path executes a plan with loops (copyCpu, fillZeroCpu); the CUDA
// kernels execute the same plan with the offset functions below, which are
// __host__ __device__ so that the unit tests check them on the CPU.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_RUNTIME_COPYPLAN_H
#define DIST_LIB_RUNTIME_COPYPLAN_H

#include "dist/Runtime/DistRuntime.h"

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define DIST_RT_HD __host__ __device__ __forceinline__
#else
#define DIST_RT_HD inline
#endif

namespace dist::rt {

/// User dims plus the byte dim of the element.
inline constexpr int kMaxPlanDims = DIST_RT_MAX_COPY_DIMS + 1;

struct CopyPlan {
  int32_t numDims = 0;    ///< dims below; 0 when there is nothing to copy
  int32_t unitBytes = 1;  ///< 1, 2, 4, 8 or 16
  int64_t totalUnits = 0; ///< product of sizes
  /// Outermost first. sizes[numDims-1] is the contiguous run in units and
  /// has stride 1 on both sides. Strides are in units.
  int64_t sizes[kMaxPlanDims] = {};
  int64_t srcStrides[kMaxPlanDims] = {};
  int64_t dstStrides[kMaxPlanDims] = {};

  DIST_RT_HD int64_t runUnits() const {
    return numDims ? sizes[numDims - 1] : 0;
  }
  DIST_RT_HD int64_t numRows() const {
    return numDims ? totalUnits / sizes[numDims - 1] : 0;
  }
  bool empty() const { return totalUnits == 0; }
};

/// Builds the plan of a strided copy (see distRtCopyStrided). Sizes and
/// strides are in elements; `srcStrides` may be null for a fill (the plan
/// then only describes the destination). `src`/`dst` are only used for their
/// alignment. Throws Error(INVALID_ARGUMENT) for negative sizes or strides,
/// too many dims, a zero destination stride on a dim of size > 1, or byte
/// offsets that overflow int64.
CopyPlan makeCopyPlan(int64_t numDims, const int64_t *sizes,
                      const int64_t *srcStrides, const int64_t *dstStrides,
                      size_t elemBytes, const void *src, const void *dst);

/// Builds the plan of distRtPackChunks (unpack = false) or distRtUnpackChunks
/// (unpack = true): the tensor is viewed as [outer, parts, c, inner] on the
/// unpacked side and [parts, outer, c, inner] on the packed side.
CopyPlan makePackPlan(int64_t numDims, const int64_t *shape, int64_t dim,
                      int64_t parts, size_t elemBytes, const void *src,
                      const void *dst, bool unpack);

/// Number of elements of a contiguous row-major `shape` (checked product).
int64_t shapeElements(int64_t numDims, const int64_t *shape);

/// Half-open byte range [first, last) touched by a strided box, relative to
/// its base pointer; {0, 0} for an empty box.
struct ByteExtent {
  int64_t first = 0;
  int64_t last = 0;
};
ByteExtent stridedExtent(int64_t numDims, const int64_t *sizes,
                         const int64_t *strides, size_t elemBytes);

/// Executes a plan with host loops.
void copyCpu(const CopyPlan &plan, const void *src, void *dst);
void fillZeroCpu(const CopyPlan &plan, void *dst);

//===--------------------------------------------------------------------===//
// Offset math shared by the CPU tests and the CUDA kernels.
//===--------------------------------------------------------------------===//

/// Unit offsets (source, destination) of the unit with row-major linear index
/// `linear` in the plan's box.
// The loops run over all kMaxPlanDims slots with a guard, fully unrolled on
// the GPU: constant indices keep a kernel's plan argument in the parameter
// bank instead of a local-memory copy that dynamic indexing would force.
#if defined(__CUDA_ARCH__)
#define DIST_RT_UNROLL _Pragma("unroll")
#else
#define DIST_RT_UNROLL
#endif

DIST_RT_HD void planUnitOffsets(const CopyPlan &p, int64_t linear,
                                int64_t &srcOff, int64_t &dstOff) {
  srcOff = 0;
  dstOff = 0;
  DIST_RT_UNROLL
  for (int d = kMaxPlanDims - 1; d >= 0; --d) {
    if (d >= p.numDims)
      continue;
    int64_t i = linear % p.sizes[d];
    linear /= p.sizes[d];
    srcOff += i * p.srcStrides[d];
    dstOff += i * p.dstStrides[d];
  }
}

/// Unit offsets of the first unit of row `row` (rows enumerate the dims
/// outside the run in row-major order).
DIST_RT_HD void planRowOffsets(const CopyPlan &p, int64_t row, int64_t &srcOff,
                               int64_t &dstOff) {
  srcOff = 0;
  dstOff = 0;
  DIST_RT_UNROLL
  for (int d = kMaxPlanDims - 2; d >= 0; --d) {
    if (d >= p.numDims - 1)
      continue;
    int64_t i = row % p.sizes[d];
    row /= p.sizes[d];
    srcOff += i * p.srcStrides[d];
    dstOff += i * p.dstStrides[d];
  }
}

/// Division by a runtime-invariant divisor d (1 <= d < 2^31) of a dividend
/// n < 2^31 with one multiply-high, add and shift (Granlund & Montgomery's
/// round-up method): the GPU kernels decompose linear indices with it instead
/// of 64-bit divisions, which GPUs emulate in dozens of instructions.
struct FastDivmod {
  uint32_t divisor = 1;
  uint32_t multiplier = 0;
  uint32_t shift = 0;

  FastDivmod() = default;
  explicit FastDivmod(uint32_t d) : divisor(d) {
    uint32_t s = 0;
    while ((uint64_t(1) << s) < d)
      ++s;
    shift = s;
    multiplier = static_cast<uint32_t>(
        ((uint64_t(1) << 32) * ((uint64_t(1) << s) - d)) / d + 1);
  }

  DIST_RT_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    uint32_t hi = __umulhi(n, multiplier);
#else
    uint32_t hi = static_cast<uint32_t>((uint64_t(n) * multiplier) >> 32);
#endif
    return (hi + n) >> shift;
  }
  DIST_RT_HD void divmod(uint32_t n, uint32_t &q, uint32_t &r) const {
    q = div(n);
    r = n - q * divisor;
  }
};

/// The plan in 32-bit form with FastDivmod per dim, for copies of fewer than
/// 2^31 units whose offsets fit in 31 bits (the common case on a GPU).
struct CopyPlan32 {
  int32_t numDims = 0;
  FastDivmod sizes[kMaxPlanDims];
  uint32_t srcStrides[kMaxPlanDims] = {};
  uint32_t dstStrides[kMaxPlanDims] = {};
};

/// Whether a plan qualifies for CopyPlan32 (all unit indices and offsets
/// below 2^31).
bool fitsIn32Bits(const CopyPlan &p);
CopyPlan32 toPlan32(const CopyPlan &p);

DIST_RT_HD void plan32UnitOffsets(const CopyPlan32 &p, uint32_t linear,
                                  uint32_t &srcOff, uint32_t &dstOff) {
  srcOff = 0;
  dstOff = 0;
  DIST_RT_UNROLL
  for (int d = kMaxPlanDims - 1; d >= 0; --d) {
    if (d >= p.numDims)
      continue;
    uint32_t q, i;
    p.sizes[d].divmod(linear, q, i);
    linear = q;
    srcOff += i * p.srcStrides[d];
    dstOff += i * p.dstStrides[d];
  }
}

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_COPYPLAN_H
