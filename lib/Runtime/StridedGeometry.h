//===- StridedGeometry.h - Boxes of the strided all-to-all ------*- C++ -*-===//
//
// distRtAllToAllStrided describes each side as p chunks, each a box inside a
// larger tensor. This file turns such a description into one box of
// numDims + 1 dims (the chunk index outermost) and answers the questions the
// core asks of it: which bytes it touches, whether it is one contiguous
// block (then no staging is needed), whether its elements are distinct
// (recv boxes must not overlap), and how to stage it through a contiguous
// buffer. Pure index math, no MPI and no process state, so that it is
// unit-tested on its own (test/Runtime/StridedGeometryTests.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_STRIDEDGEOMETRY_H
#define DIST_LIB_RUNTIME_STRIDEDGEOMETRY_H

#include "CopyPlan.h"
#include "Types.h"

#include <cstddef>
#include <cstdint>

namespace dist::rt {

/// One side of a strided all-to-all as the backends see it: chunk j is the
/// box `sizes` at base + j * chunkStride, walked with `strides` (everything
/// in elements).
struct ChunkBoxes {
  int numDims = 0;
  const int64_t *sizes = nullptr;
  const int64_t *strides = nullptr;
  int64_t chunkStride = 0;
};

/// One side of distRtAllToAllStrided as a box of numDims + 1 dims, the
/// chunk index outermost.
struct StridedSide {
  int numDims = 0; // chunk index included
  int64_t sizes[DIST_RT_MAX_COPY_DIMS] = {};
  int64_t strides[DIST_RT_MAX_COPY_DIMS] = {};
  size_t elemBytes = 1;
  const char *base = nullptr;
  ByteExtent extent;
  /// Chunk j is the j-th block of count elements (plain all-to-all order).
  bool contiguous = false;

  const char *begin() const { return base + extent.first; }
  size_t extentBytes() const {
    return static_cast<size_t>(extent.last - extent.first);
  }
};

/// Product of a shape, or -1 for a negative size or an overflow. Unlike
/// shapeElements it never throws: the count goes into the cross-rank
/// signature, which every member must send even when its own checks fail.
int64_t shapeElementsOrNegative(int64_t numDims, const int64_t *shape);

/// The side of `p` chunks of `shape` (numDims < DIST_RT_MAX_COPY_DIMS, the
/// caller checks) walked with `strides`, chunk j at base + j * chunkStride.
/// Throws Error(INVALID_ARGUMENT) naming `name` for a negative stride. The
/// caller checks that `base` is non-null when the extent is not empty.
StridedSide stridedSide(int64_t p, int64_t numDims, const int64_t *shape,
                        const int64_t *strides, int64_t chunkStride,
                        const void *base, DType t, const char *name);

/// Whether no two elements of the box share an address: sorted by stride,
/// each dim must step past everything the smaller dims span. (Sufficient,
/// and exactly what sub-boxes of row-major tensors satisfy.)
bool boxIsInjective(const StridedSide &side);

/// The side as the backends take it; points into `side`.
ChunkBoxes chunkBoxes(const StridedSide &side);

/// The copy between a side and its contiguous staging buffer (chunks in
/// plain all-to-all order): into the stage when `toStage`, else out of it.
CopyPlan stagePlan(const StridedSide &side, bool toStage, const void *stage);

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_STRIDEDGEOMETRY_H
