//===- CopyPlan.cpp - Normalising and executing local copies --------------===//

#include "CopyPlan.h"
#include "Types.h"

#include <cstring>
#include <string>

namespace dist::rt {

namespace {

[[noreturn]] void invalid(const std::string &reason) {
  throw Error(DIST_RT_ERR_INVALID_ARGUMENT, reason);
}

int64_t checkedMul(int64_t a, int64_t b, const char *what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    invalid(std::string(what) + " overflows int64");
  return r;
}

struct Dim {
  int64_t size, src, dst; // strides in bytes
};

} // namespace

CopyPlan makeCopyPlan(int64_t numDims, const int64_t *sizes,
                      const int64_t *srcStrides, const int64_t *dstStrides,
                      size_t elemBytes, const void *src, const void *dst) {
  if (numDims < 0 || numDims > DIST_RT_MAX_COPY_DIMS)
    invalid("copies have 0.." + std::to_string(DIST_RT_MAX_COPY_DIMS) +
            " dims (got " + std::to_string(numDims) + ")");
  if (numDims > 0 && (!sizes || !dstStrides))
    invalid("sizes and strides must not be null");
  const int64_t elem = static_cast<int64_t>(elemBytes);
  CopyPlan plan;
  Dim dims[kMaxPlanDims];
  int n = 0;
  int64_t total = 1;
  for (int64_t d = 0; d < numDims; ++d) {
    // A fill has no source: mirror the destination so that dims merge by the
    // destination's layout alone (source strides are zeroed at the end).
    int64_t s = srcStrides ? srcStrides[d] : dstStrides[d];
    if (sizes[d] < 0)
      invalid("size of dim " + std::to_string(d) + " is negative (" +
              std::to_string(sizes[d]) + ")");
    if (s < 0 || dstStrides[d] < 0)
      invalid("stride of dim " + std::to_string(d) +
              " is negative (strides must be >= 0)");
    if (sizes[d] > 1 && dstStrides[d] == 0)
      invalid("destination stride of dim " + std::to_string(d) +
              " is 0 but the dim has " + std::to_string(sizes[d]) +
              " elements (they would all be written to one place)");
    total = checkedMul(total, sizes[d], "the number of elements");
    // Size-1 dims move nothing; dropping them lets their neighbours merge.
    if (sizes[d] == 1)
      continue;
    dims[n++] = {sizes[d], checkedMul(s, elem, "a source byte stride"),
                 checkedMul(dstStrides[d], elem, "a destination byte stride")};
  }
  if (total == 0)
    return plan; // Nothing to copy: numDims == 0, totalUnits == 0.
  // Offsets of the last element must be representable too.
  int64_t lastSrc = 0, lastDst = 0;
  for (int i = 0; i < n; ++i) {
    if (__builtin_add_overflow(
            lastSrc, checkedMul(dims[i].size - 1, dims[i].src, "an offset"),
            &lastSrc) ||
        __builtin_add_overflow(
            lastDst, checkedMul(dims[i].size - 1, dims[i].dst, "an offset"),
            &lastDst))
      invalid("byte offsets of the copy overflow int64");
  }
  dims[n++] = {elem, 1, 1};

  // Merge from the inside out: an outer dim whose strides equal the inner
  // dim's extent on both sides continues the inner dim.
  Dim merged[kMaxPlanDims];
  int m = 0;
  merged[m++] = dims[n - 1];
  for (int i = n - 2; i >= 0; --i) {
    Dim &inner = merged[m - 1];
    const Dim &outer = dims[i];
    if (outer.src == inner.size * inner.src &&
        outer.dst == inner.size * inner.dst) {
      inner.size *= outer.size;
    } else {
      merged[m++] = outer;
    }
  }
  // merged[] is innermost first; merged[0] is the contiguous run (stride 1).

  // The widest unit that divides the run, every stride and both addresses.
  uint64_t align =
      static_cast<uint64_t>(merged[0].size) | reinterpret_cast<uintptr_t>(dst);
  if (srcStrides)
    align |= reinterpret_cast<uintptr_t>(src);
  for (int i = 1; i < m; ++i)
    align |= static_cast<uint64_t>(merged[i].src) |
             static_cast<uint64_t>(merged[i].dst);
  int64_t unit = 16;
  while (unit > 1 && (align & static_cast<uint64_t>(unit - 1)))
    unit /= 2;

  plan.numDims = m;
  plan.unitBytes = static_cast<int32_t>(unit);
  plan.totalUnits = checkedMul(total, elem, "the number of bytes") / unit;
  for (int i = 0; i < m; ++i) {
    int out = m - 1 - i;
    plan.sizes[out] = i == 0 ? merged[i].size / unit : merged[i].size;
    plan.srcStrides[out] = i == 0 ? 1 : merged[i].src / unit;
    plan.dstStrides[out] = i == 0 ? 1 : merged[i].dst / unit;
  }
  if (!srcStrides)
    for (int i = 0; i < m; ++i)
      plan.srcStrides[i] = 0;
  return plan;
}

int64_t shapeElements(int64_t numDims, const int64_t *shape) {
  if (numDims < 0 || numDims > DIST_RT_MAX_COPY_DIMS)
    invalid("shapes have 0.." + std::to_string(DIST_RT_MAX_COPY_DIMS) +
            " dims (got " + std::to_string(numDims) + ")");
  if (numDims > 0 && !shape)
    invalid("shape must not be null");
  int64_t n = 1;
  for (int64_t d = 0; d < numDims; ++d) {
    if (shape[d] < 0)
      invalid("shape dim " + std::to_string(d) + " is negative (" +
              std::to_string(shape[d]) + ")");
    n = checkedMul(n, shape[d], "the number of elements");
  }
  return n;
}

CopyPlan makePackPlan(int64_t numDims, const int64_t *shape, int64_t dim,
                      int64_t parts, size_t elemBytes, const void *src,
                      const void *dst, bool unpack) {
  shapeElements(numDims, shape);
  if (dim < 0 || dim >= numDims)
    invalid("chunk dim " + std::to_string(dim) + " is not a dim of a rank-" +
            std::to_string(numDims) + " shape");
  if (parts < 1)
    invalid("parts must be >= 1 (got " + std::to_string(parts) + ")");
  if (shape[dim] % parts != 0)
    invalid("dim " + std::to_string(dim) + " of size " +
            std::to_string(shape[dim]) + " does not split into " +
            std::to_string(parts) + " equal chunks");
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (int64_t d = dim + 1; d < numDims; ++d)
    inner *= shape[d];
  const int64_t c = shape[dim] / parts;
  // Iterate over (o, j, i, k) = (outer index, chunk, index in chunk, inner).
  const int64_t sizes[4] = {outer, parts, c, inner};
  const int64_t unpacked[4] = {parts * c * inner, c * inner, inner, 1};
  const int64_t packed[4] = {c * inner, outer * c * inner, inner, 1};
  return unpack ? makeCopyPlan(4, sizes, packed, unpacked, elemBytes, src, dst)
                : makeCopyPlan(4, sizes, unpacked, packed, elemBytes, src, dst);
}

ByteExtent stridedExtent(int64_t numDims, const int64_t *sizes,
                         const int64_t *strides, size_t elemBytes) {
  ByteExtent e;
  int64_t last = 0;
  for (int64_t d = 0; d < numDims; ++d) {
    if (sizes[d] == 0)
      return e;
    last += (sizes[d] - 1) * strides[d];
  }
  e.last = (last + 1) * static_cast<int64_t>(elemBytes);
  return e;
}

namespace {

// Copies one run of `units` units of N bytes; fixed-size memcpy lets the
// compiler emit plain loads and stores for short runs (transposes), while
// long runs go through the library memcpy.
template <int N> void copyUnits(const char *src, char *dst, int64_t units) {
  for (int64_t i = 0; i < units; ++i)
    std::memcpy(dst + i * N, src + i * N, N);
}

void copyRun(const char *src, char *dst, int64_t units, int unitBytes) {
  const int64_t bytes = units * unitBytes;
  if (bytes >= 128) {
    std::memcpy(dst, src, static_cast<size_t>(bytes));
    return;
  }
  switch (unitBytes) {
  case 16:
    return copyUnits<16>(src, dst, units);
  case 8:
    return copyUnits<8>(src, dst, units);
  case 4:
    return copyUnits<4>(src, dst, units);
  case 2:
    return copyUnits<2>(src, dst, units);
  default:
    return copyUnits<1>(src, dst, units);
  }
}

// Visits every row of the plan with its byte offsets, odometer style (no
// divisions in the loop).
template <typename F> void forEachRow(const CopyPlan &p, F &&f) {
  const int outerDims = p.numDims - 1;
  int64_t idx[kMaxPlanDims] = {};
  int64_t srcOff = 0, dstOff = 0;
  const int64_t rows = p.numRows();
  for (int64_t r = 0; r < rows; ++r) {
    f(srcOff * p.unitBytes, dstOff * p.unitBytes);
    for (int d = outerDims - 1; d >= 0; --d) {
      srcOff += p.srcStrides[d];
      dstOff += p.dstStrides[d];
      if (++idx[d] < p.sizes[d])
        break;
      srcOff -= p.sizes[d] * p.srcStrides[d];
      dstOff -= p.sizes[d] * p.dstStrides[d];
      idx[d] = 0;
    }
  }
}

} // namespace

void copyCpu(const CopyPlan &plan, const void *src, void *dst) {
  if (plan.empty())
    return;
  const char *s = static_cast<const char *>(src);
  char *d = static_cast<char *>(dst);
  const int64_t run = plan.runUnits();
  const int unit = plan.unitBytes;
  forEachRow(plan, [&](int64_t so, int64_t dO) {
    copyRun(s + so, d + dO, run, unit);
  });
}

void fillZeroCpu(const CopyPlan &plan, void *dst) {
  if (plan.empty())
    return;
  char *d = static_cast<char *>(dst);
  const size_t runBytes = static_cast<size_t>(plan.runUnits()) *
                          static_cast<size_t>(plan.unitBytes);
  forEachRow(plan,
             [&](int64_t, int64_t dO) { std::memset(d + dO, 0, runBytes); });
}

bool fitsIn32Bits(const CopyPlan &p) {
  const int64_t limit = int64_t(1) << 31;
  if (p.totalUnits >= limit)
    return false;
  int64_t lastSrc = 0, lastDst = 0;
  for (int d = 0; d < p.numDims; ++d) {
    lastSrc += (p.sizes[d] - 1) * p.srcStrides[d];
    lastDst += (p.sizes[d] - 1) * p.dstStrides[d];
  }
  return lastSrc < limit && lastDst < limit;
}

CopyPlan32 toPlan32(const CopyPlan &p) {
  CopyPlan32 q;
  q.numDims = p.numDims;
  for (int d = 0; d < p.numDims; ++d) {
    q.sizes[d] = FastDivmod(static_cast<uint32_t>(p.sizes[d]));
    q.srcStrides[d] = static_cast<uint32_t>(p.srcStrides[d]);
    q.dstStrides[d] = static_cast<uint32_t>(p.dstStrides[d]);
  }
  return q;
}

} // namespace dist::rt
