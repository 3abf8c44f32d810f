//===- BlockSemantics.cpp - Which global block each device holds ----------===//
//
// semantics §2: for dim d split by axes a_1..a_k (major -> minor), P_d is the
// product of their sizes, the device's shard index is the mixed-radix number
// formed by its coordinates on those axes, and it holds the block of
// B_d = ceil(N_d / P_d) indices starting at s_d * B_d, clipped to N_d.
//
//===----------------------------------------------------------------------===//

#include "dist/Planner/Layout.h"
#include "dist/Support/MixedRadix.h"

#include "llvm/Support/MathExtras.h"

using namespace dist::planner;

llvm::Error dist::planner::verifyShape(llvm::ArrayRef<int64_t> globalShape,
                                       int64_t elementBytes) {
  auto fail = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  if (elementBytes < 1)
    return fail("element size must be at least 1 byte");
  auto tooLarge = [&]() {
    std::string shape;
    for (size_t d = 0; d < globalShape.size(); ++d)
      shape += (d ? "x" : "") + std::to_string(globalShape[d]);
    return fail("tensor " + shape + " of " + llvm::Twine(elementBytes) +
                "-byte elements is too large: the planner takes at most 2^53 "
                "bytes (8 PiB)");
  };
  if (elementBytes > kMaxTensorBytes)
    return tooLarge();
  int64_t total = elementBytes;
  for (size_t d = 0; d < globalShape.size(); ++d) {
    if (globalShape[d] < 0)
      return fail("tensor dim " + llvm::Twine(d) + " has negative extent " +
                  llvm::Twine(globalShape[d]));
    // MulOverflow catches a product past 63 bits, the comparison the rest.
    if (llvm::MulOverflow(total, std::max<int64_t>(globalShape[d], 1), total) ||
        total > kMaxTensorBytes)
      return tooLarge();
  }
  return llvm::Error::success();
}

int64_t dist::planner::shardIndex(const Mesh &mesh, const Layout &layout,
                                  unsigned dim, llvm::ArrayRef<int64_t> coord) {
  if (dim >= layout.dimAxes.size())
    return 0;
  // An axis the mesh does not have (an invalid layout not yet rejected)
  // counts as a digit 0 of radix 1, i.e. is skipped; a short coordinate
  // reads as 0 on the missing axes.
  const AxisList &axes = layout.dimAxes[dim];
  auto known = [&](size_t i) { return axes[i] < mesh.getNumAxes(); };
  return dist::mixed_radix::compose(
      axes.size(),
      [&](size_t i) -> int64_t {
        return known(i) && axes[i] < coord.size() ? coord[axes[i]] : 0;
      },
      [&](size_t i) -> int64_t {
        return known(i) ? mesh.getAxisSize(axes[i]) : 1;
      });
}

using dist::mixed_radix::blockSize;

/// The local extent along `d`: the block, or on an interleaved dim one
/// block of every segment.
static int64_t localExtent(const Mesh &mesh, const Layout &layout,
                           llvm::ArrayRef<int64_t> shape, size_t d) {
  int64_t parts = layout.shardCount(mesh, d);
  if (!layout.isSegmented(d))
    return blockSize(shape[d], parts);
  int64_t extent = 0;
  for (int64_t n : layout.segments[d])
    extent += blockSize(n, parts);
  return extent;
}

std::vector<int64_t> dist::planner::localShape(const Mesh &mesh,
                                               const Layout &layout,
                                               llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> local(shape.size());
  for (size_t d = 0; d < local.size(); ++d)
    local[d] = localExtent(mesh, layout, shape, d);
  return local;
}

std::vector<BlockPiece>
dist::planner::blockPieces(const Mesh &mesh, const Layout &layout,
                           llvm::ArrayRef<int64_t> shape, unsigned dim,
                           int64_t shard) {
  int64_t parts = layout.shardCount(mesh, dim);
  std::vector<BlockPiece> pieces;
  auto add = [&](int64_t offset, int64_t n, int64_t local) {
    int64_t b = blockSize(n, parts);
    pieces.push_back({{offset + std::min(shard * b, n),
                       offset + std::min((shard + 1) * b, n)},
                      local});
    return b;
  };
  if (!layout.isSegmented(dim)) {
    add(0, shape[dim], 0);
    return pieces;
  }
  int64_t offset = 0, local = 0;
  for (int64_t n : layout.segments[dim]) {
    local += add(offset, n, local);
    offset += n;
  }
  return pieces;
}

int64_t dist::planner::globalIndexAlong(const Mesh &mesh, const Layout &layout,
                                        llvm::ArrayRef<int64_t> shape,
                                        unsigned dim, int64_t shard,
                                        int64_t local) {
  int64_t parts = layout.shardCount(mesh, dim);
  if (!layout.isSegmented(dim)) {
    int64_t g = shard * blockSize(shape[dim], parts) + local;
    return g < shape[dim] ? g : -1;
  }
  int64_t offset = 0;
  for (int64_t n : layout.segments[dim]) {
    int64_t b = blockSize(n, parts);
    if (local < b) {
      int64_t i = shard * b + local;
      return i < n ? offset + i : -1;
    }
    local -= b;
    offset += n;
  }
  return -1;
}

BlockAt dist::planner::blockAt(const Mesh &mesh, const Layout &layout,
                               llvm::ArrayRef<int64_t> shape, unsigned dim,
                               int64_t global) {
  int64_t parts = layout.shardCount(mesh, dim);
  if (!layout.isSegmented(dim)) {
    int64_t b = std::max<int64_t>(1, blockSize(shape[dim], parts));
    int64_t s = global / b;
    return {s, std::min((s + 1) * b, shape[dim])};
  }
  int64_t offset = 0;
  for (int64_t n : layout.segments[dim]) {
    if (global < offset + n) {
      int64_t b = std::max<int64_t>(1, blockSize(n, parts));
      int64_t s = (global - offset) / b;
      return {s, offset + std::min((s + 1) * b, n)};
    }
    offset += n;
  }
  return {0, shape[dim]};
}

int64_t dist::planner::localBytes(const Mesh &mesh, const Layout &layout,
                                  llvm::ArrayRef<int64_t> shape,
                                  int64_t elementBytes) {
  int64_t bytes = elementBytes;
  for (size_t d = 0; d < shape.size(); ++d)
    bytes *= localExtent(mesh, layout, shape, d);
  return bytes;
}

std::vector<DimRange>
dist::planner::deviceBlock(const Mesh &mesh, const Layout &layout,
                           llvm::ArrayRef<int64_t> shape,
                           llvm::ArrayRef<int64_t> coord) {
  std::vector<DimRange> block(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t n = shape[d];
    int64_t b = blockSize(n, layout.shardCount(mesh, d));
    int64_t s = shardIndex(mesh, layout, d, coord);
    block[d].begin = std::min(s * b, n);
    block[d].end = std::min((s + 1) * b, n);
  }
  return block;
}
