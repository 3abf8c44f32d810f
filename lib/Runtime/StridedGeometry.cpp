//===- StridedGeometry.cpp - Boxes of the strided all-to-all --------------===//

#include "StridedGeometry.h"

#include <string>
#include <utility>

namespace dist::rt {

int64_t shapeElementsOrNegative(int64_t numDims, const int64_t *shape) {
  int64_t n = 1;
  for (int64_t d = 0; d < numDims; ++d)
    if (shape[d] < 0 || __builtin_mul_overflow(n, shape[d], &n))
      return -1;
  return n;
}

StridedSide stridedSide(int64_t p, int64_t numDims, const int64_t *shape,
                        const int64_t *strides, int64_t chunkStride,
                        const void *base, DType t, const char *name) {
  StridedSide side;
  side.numDims = static_cast<int>(numDims) + 1;
  side.sizes[0] = p;
  side.strides[0] = chunkStride;
  for (int64_t d = 0; d < numDims; ++d) {
    side.sizes[d + 1] = shape[d];
    side.strides[d + 1] = strides[d];
  }
  for (int d = 0; d < side.numDims; ++d)
    if (side.strides[d] < 0)
      throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
                  std::string(name) + " stride " + std::to_string(d) +
                      " is negative (" + std::to_string(side.strides[d]) + ")");
  side.elemBytes = dtypeSize(t);
  side.base = static_cast<const char *>(base);
  side.extent =
      stridedExtent(side.numDims, side.sizes, side.strides, side.elemBytes);
  // Row-major over the whole [p, chunk...] box, size-1 dims aside.
  int64_t expected = 1;
  side.contiguous = true;
  for (int d = side.numDims - 1; d >= 0; --d) {
    if (side.sizes[d] == 1)
      continue;
    side.contiguous = side.contiguous && side.strides[d] == expected;
    expected *= side.sizes[d];
  }
  return side;
}

bool boxIsInjective(const StridedSide &side) {
  int order[DIST_RT_MAX_COPY_DIMS];
  int n = 0;
  for (int d = 0; d < side.numDims; ++d) {
    if (side.sizes[d] == 0)
      return true; // empty
    if (side.sizes[d] > 1)
      order[n++] = d;
  }
  // Insertion sort by stride: at most DIST_RT_MAX_COPY_DIMS entries.
  for (int i = 1; i < n; ++i)
    for (int j = i;
         j > 0 && side.strides[order[j]] < side.strides[order[j - 1]]; --j)
      std::swap(order[j], order[j - 1]);
  int64_t span = 1; // elements covered by the dims so far
  for (int i = 0; i < n; ++i) {
    int d = order[i];
    if (side.strides[d] < span)
      return false;
    span = side.strides[d] * (side.sizes[d] - 1) + span;
  }
  return true;
}

ChunkBoxes chunkBoxes(const StridedSide &side) {
  ChunkBoxes boxes;
  boxes.numDims = side.numDims - 1;
  boxes.sizes = side.sizes + 1;
  boxes.strides = side.strides + 1;
  boxes.chunkStride = side.strides[0];
  return boxes;
}

CopyPlan stagePlan(const StridedSide &side, bool toStage, const void *stage) {
  int64_t packed[DIST_RT_MAX_COPY_DIMS];
  int64_t stride = 1;
  for (int d = side.numDims - 1; d >= 0; --d) {
    packed[d] = stride;
    stride *= side.sizes[d];
  }
  return toStage ? makeCopyPlan(side.numDims, side.sizes, side.strides, packed,
                                side.elemBytes, side.base, stage)
                 : makeCopyPlan(side.numDims, side.sizes, packed, side.strides,
                                side.elemBytes, stage, side.base);
}

} // namespace dist::rt
