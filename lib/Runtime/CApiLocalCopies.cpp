//===- CApiLocalCopies.cpp - C ABI: local data movement -------------------===//
//
// Strided copies, zero fills and all-to-all chunk packing on this rank's
// backend memory: each call is normalised into a CopyPlan (CopyPlan.h),
// checked, and run by the backend (loops on the host, kernels on a GPU).
//
//===----------------------------------------------------------------------===//

#include "ArgumentChecks.h"
#include "CopyPlan.h"
#include "Errors.h"
#include "State.h"

#include "dist/Runtime/DistRuntime.h"

using namespace dist::rt;

namespace {

int32_t packOrUnpack(const char *op, bool unpack, int64_t numDims,
                     const int64_t *shape, int64_t dim, int64_t parts,
                     const void *src, void *dst, int32_t dtype, void *stream) {
  return guard(op, [&] {
    requireInit();
    DType t = toDType(dtype);
    Stream s = S.backend->resolveStream(stream);
    CopyPlan plan = makePackPlan(numDims, shape, dim, parts, dtypeSize(t), src,
                                 dst, unpack);
    if (plan.empty())
      return;
    size_t bytes =
        bytesOf(static_cast<size_t>(shapeElements(numDims, shape)), 1, t);
    checkBuffer(src, bytes, "source");
    checkBuffer(dst, bytes, "destination");
    if (overlaps(src, bytes, dst, bytes))
      invalid("source and destination overlap");
    S.backend->copy(plan, src, dst, s);
  });
}

} // namespace

extern "C" {

int32_t distRtCopyStrided(int64_t numDims, const int64_t *sizes,
                          const void *src, const int64_t *srcStrides, void *dst,
                          const int64_t *dstStrides, int32_t dtype,
                          void *stream) {
  return guard("copy_strided", [&] {
    requireInit();
    DType t = toDType(dtype);
    Stream s = S.backend->resolveStream(stream);
    if (numDims > 0 && !srcStrides)
      invalid("srcStrides is null");
    CopyPlan plan = makeCopyPlan(numDims, sizes, srcStrides, dstStrides,
                                 dtypeSize(t), src, dst);
    if (plan.empty())
      return;
    checkBuffer(src, 1, "source");
    checkBuffer(dst, 1, "destination");
    ByteExtent se = stridedExtent(numDims, sizes, srcStrides, dtypeSize(t));
    ByteExtent de = stridedExtent(numDims, sizes, dstStrides, dtypeSize(t));
    if (overlaps(static_cast<const char *>(src) + se.first,
                 static_cast<size_t>(se.last - se.first),
                 static_cast<char *>(dst) + de.first,
                 static_cast<size_t>(de.last - de.first)))
      invalid("source and destination ranges overlap");
    S.backend->copy(plan, src, dst, s);
  });
}

int32_t distRtFillZero(int64_t numDims, const int64_t *sizes, void *dst,
                       const int64_t *dstStrides, int32_t dtype, void *stream) {
  return guard("fill_zero", [&] {
    requireInit();
    DType t = toDType(dtype);
    Stream s = S.backend->resolveStream(stream);
    CopyPlan plan = makeCopyPlan(numDims, sizes, nullptr, dstStrides,
                                 dtypeSize(t), nullptr, dst);
    if (plan.empty())
      return;
    checkBuffer(dst, 1, "destination");
    S.backend->fillZero(plan, dst, s);
  });
}

int32_t distRtPackChunks(int64_t numDims, const int64_t *shape, int64_t dim,
                         int64_t parts, const void *src, void *dst,
                         int32_t dtype, void *stream) {
  return packOrUnpack("pack_chunks", false, numDims, shape, dim, parts, src,
                      dst, dtype, stream);
}

int32_t distRtUnpackChunks(int64_t numDims, const int64_t *shape, int64_t dim,
                           int64_t parts, const void *src, void *dst,
                           int32_t dtype, void *stream) {
  return packOrUnpack("unpack_chunks", true, numDims, shape, dim, parts, src,
                      dst, dtype, stream);
}

} // extern "C"
