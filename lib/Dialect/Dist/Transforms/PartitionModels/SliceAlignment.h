//===- SliceAlignment.h - when a slice is local -----------------*- C++ -*-===//
//
// A slice [o, o + n) of dim d (extract_slice, insert_slice) is local when
// every device's block of the slice lies in its block of the whole, at the
// same local position on every device. With the dim split over P parts
// (docs/semantics.md, "The layout"):
//
//  - an interleaved dim, and the slice covers whole segments i..j: the
//    slice's layout is segments n_i..n_j with the same axes, at local
//    offset B_0 + ... + B_{i-1} (a fused QKV weight's Q, K or V);
//  - a contiguous dim and a prefix (o = 0) with the same block size
//    ceil(n / P) = ceil(N / P): the slice drops only elements past n. Only
//    when reading (extract_slice): a device's block of the prefix is padded
//    where its block of the whole holds elements past n, and writing it
//    (insert_slice) would overwrite them;
//  - otherwise the whole dim can be *viewed* as segments [o, n, N - o - n]
//    (zero-size ones left out): in that layout the slice is segment 2. The
//    partitioner may reshard into it, at the price the planner gives.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_SLICEALIGNMENT_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_SLICEALIGNMENT_H

#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include <optional>
#include <vector>

namespace dist::partition {

/// One dim of a layout: its axes and segments (empty: contiguous).
struct DimLayout {
  planner::AxisList axes;
  std::vector<int64_t> segments;
  bool operator==(const DimLayout &o) const {
    return axes == o.axes && segments == o.segments;
  }
};

DimLayout dimLayoutOf(const planner::Layout &layout, unsigned dim);
void setDimLayout(planner::Layout &layout, unsigned dim, DimLayout value);

/// The slice [offset, offset + size) of a dim of `extent` laid out as
/// `whole`: its own layout and where it sits in the local block.
struct AlignedSlice {
  DimLayout slice;
  int64_t localOffset = 0;
  int64_t localSize = 0;
};

/// The slice's layout and local position when it is local (see above);
/// `writes`: the slice is written into the whole (insert_slice).
std::optional<AlignedSlice> alignSlice(const planner::Mesh &mesh,
                                       const DimLayout &whole, int64_t extent,
                                       int64_t offset, int64_t size,
                                       bool writes);

/// The layout of the whole dim under which the slice is local and laid out
/// as `slice`: the prefix or the segment view.
DimLayout wholeForSlice(const planner::Mesh &mesh, const DimLayout &slice,
                        int64_t extent, int64_t offset, int64_t size,
                        bool writes);

/// Per segment (one entry for a contiguous dim): the local block
/// ceil(n_i / P).
std::vector<int64_t> localBlocks(const planner::Mesh &mesh,
                                 const DimLayout &dim, int64_t extent);

} // namespace dist::partition

#endif
