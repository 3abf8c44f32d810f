//===- SegmentPacking.cpp - collectives on interleaved dims ---------------===//

#include "SegmentPacking.h"

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Support/MixedRadix.h"

#include <numeric>

using namespace mlir;
using namespace dist;

std::optional<std::vector<int64_t>>
dist::segmentsAlong(const planner::Layout &source,
                    const planner::Layout &result, unsigned dim) {
  if (source.isSegmented(dim))
    return source.segments[dim];
  if (result.isSegmented(dim))
    return result.segments[dim];
  return std::nullopt;
}

std::vector<int64_t> dist::segmentBlocks(const planner::Mesh &mesh,
                                         const planner::Layout &layout,
                                         unsigned dim,
                                         ArrayRef<int64_t> segments) {
  int64_t parts = layout.shardCount(mesh, dim);
  std::vector<int64_t> blocks;
  for (int64_t n : segments)
    blocks.push_back(dist::mixed_radix::blockSize(n, parts));
  return blocks;
}

RankedTensorType dist::withExtent(RankedTensorType type, unsigned dim,
                                  int64_t extent) {
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] = extent;
  return RankedTensorType::get(shape, type.getElementType());
}

namespace {
int64_t sum(ArrayRef<int64_t> values) {
  return std::accumulate(values.begin(), values.end(), int64_t(0));
}
} // namespace

Value dist::packSegments(OpBuilder &b, Location loc, Value input, unsigned dim,
                         ArrayRef<int64_t> blocks, ArrayRef<int64_t> pieces,
                         int64_t q) {
  auto type = cast<RankedTensorType>(input.getType());
  return LocalPackSegmentsOp::create(b, loc,
                                     withExtent(type, dim, q * sum(pieces)),
                                     input, dim, blocks, pieces, q);
}

Value dist::unpackSegments(OpBuilder &b, Location loc, Value packed,
                           unsigned dim, ArrayRef<int64_t> pieces,
                           ArrayRef<int64_t> blocks, int64_t q) {
  auto type = cast<RankedTensorType>(packed.getType());
  return LocalUnpackSegmentsOp::create(b, loc,
                                       withExtent(type, dim, sum(blocks)),
                                       packed, dim, blocks, pieces, q);
}
