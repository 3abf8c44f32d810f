//===- SliceAlignment.cpp - when a slice of a sharded dim is local --------===//

#include "SliceAlignment.h"
#include "dist/Support/MixedRadix.h"

#include "llvm/Support/MathExtras.h"

#include <numeric>

using namespace dist;
using namespace dist::partition;

DimLayout partition::dimLayoutOf(const planner::Layout &layout, unsigned dim) {
  DimLayout out;
  out.axes = layout.dimAxes[dim];
  if (layout.isSegmented(dim))
    out.segments = layout.segments[dim];
  return out;
}

void partition::setDimLayout(planner::Layout &layout, unsigned dim,
                             DimLayout value) {
  layout.dimAxes[dim] = std::move(value.axes);
  if (!value.segments.empty()) {
    layout.segments.resize(layout.dimAxes.size());
    layout.segments[dim] = std::move(value.segments);
  } else if (dim < layout.segments.size()) {
    layout.segments[dim].clear();
  }
  layout.canonicalize();
}

static int64_t partsOf(const planner::Mesh &mesh, const DimLayout &dim) {
  int64_t parts = 1;
  for (unsigned axis : dim.axes)
    parts *= mesh.getAxisSize(axis);
  return parts;
}

std::vector<int64_t> partition::localBlocks(const planner::Mesh &mesh,
                                            const DimLayout &dim,
                                            int64_t extent) {
  int64_t parts = partsOf(mesh, dim);
  if (dim.segments.empty())
    return {dist::mixed_radix::blockSize(extent, parts)};
  std::vector<int64_t> blocks;
  for (int64_t n : dim.segments)
    blocks.push_back(dist::mixed_radix::blockSize(n, parts));
  return blocks;
}

std::optional<AlignedSlice> partition::alignSlice(const planner::Mesh &mesh,
                                                  const DimLayout &whole,
                                                  int64_t extent,
                                                  int64_t offset, int64_t size,
                                                  bool writes) {
  int64_t parts = partsOf(mesh, whole);
  if (parts == 1) {
    // Every device holds the whole dim (size-1 axes move nothing).
    AlignedSlice out{DimLayout{whole.axes, {}}, offset, size};
    return out;
  }
  if (!whole.segments.empty()) {
    std::vector<int64_t> blocks = localBlocks(mesh, whole, extent);
    int64_t start = 0;
    std::optional<size_t> first;
    AlignedSlice out;
    out.slice.axes = whole.axes;
    for (size_t i = 0; i < whole.segments.size(); ++i) {
      if (start == offset)
        first = i;
      if (first) {
        out.slice.segments.push_back(whole.segments[i]);
        out.localSize += blocks[i];
      } else {
        out.localOffset += blocks[i];
      }
      start += whole.segments[i];
      if (first && start == offset + size) {
        if (out.slice.segments.size() == 1)
          out.slice.segments.clear();
        return out;
      }
      if (start > offset + size)
        return std::nullopt;
    }
    return std::nullopt;
  }
  using dist::mixed_radix::blockSize;
  if (offset == 0 &&
      (size == extent ||
       (!writes && blockSize(size, parts) == blockSize(extent, parts))))
    return AlignedSlice{DimLayout{whole.axes, {}}, 0,
                        dist::mixed_radix::blockSize(size, parts)};
  return std::nullopt;
}

DimLayout partition::wholeForSlice(const planner::Mesh &mesh,
                                   const DimLayout &slice, int64_t extent,
                                   int64_t offset, int64_t size, bool writes) {
  int64_t parts = partsOf(mesh, slice);
  if (parts == 1 || (offset == 0 && slice.segments.empty() &&
                     alignSlice(mesh, DimLayout{slice.axes, {}}, extent, offset,
                                size, writes)))
    return DimLayout{slice.axes, {}};
  DimLayout whole{slice.axes, {}};
  if (offset > 0)
    whole.segments.push_back(offset);
  if (slice.segments.empty())
    whole.segments.push_back(size);
  else
    whole.segments.insert(whole.segments.end(), slice.segments.begin(),
                          slice.segments.end());
  if (extent - offset - size > 0)
    whole.segments.push_back(extent - offset - size);
  if (whole.segments.size() == 1)
    whole.segments.clear();
  return whole;
}
