//===- SegmentPacking.cpp - collectives on interleaved dims ---------------===//

#include "SegmentPacking.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

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
    blocks.push_back((n + parts - 1) / parts);
  return blocks;
}

namespace {

/// A zero tensor shaped like `like` but with `extent` rows along `dim`.
Value zeros(OpBuilder &b, Location loc, RankedTensorType like, unsigned dim,
            int64_t extent) {
  SmallVector<int64_t> shape(like.getShape());
  shape[dim] = extent;
  Value empty =
      tensor::EmptyOp::create(b, loc, shape, like.getElementType());
  Value zero = arith::ConstantOp::create(
      b, loc, b.getZeroAttr(like.getElementType()));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

/// Copies `count` rows along `dim` from `from` (at row `src`) into `into`
/// (at row `dst`).
Value copyRows(OpBuilder &b, Location loc, Value from, Value into,
               unsigned dim, int64_t src, int64_t dst, int64_t count) {
  auto type = cast<RankedTensorType>(from.getType());
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      strides(rank, b.getIndexAttr(1)), sizes;
  for (int64_t extent : type.getShape())
    sizes.push_back(b.getIndexAttr(extent));
  sizes[dim] = b.getIndexAttr(count);
  offsets[dim] = b.getIndexAttr(src);
  Value rows = tensor::ExtractSliceOp::create(b, loc, from, offsets, sizes,
                                              strides);
  offsets[dim] = b.getIndexAttr(dst);
  return tensor::InsertSliceOp::create(b, loc, rows, into, offsets, sizes,
                                       strides);
}

int64_t sum(ArrayRef<int64_t> values) {
  return std::accumulate(values.begin(), values.end(), int64_t(0));
}

/// Calls `copy(blockRow, packedRow, rows)` for every piece: piece j of
/// segment i is `rows` rows at `blockRow` of the per-segment layout and at
/// `packedRow` of the packed one (pieces past a block's end are skipped).
void forEachPiece(ArrayRef<int64_t> blocks, ArrayRef<int64_t> pieces,
                  int64_t q,
                  llvm::function_ref<void(int64_t, int64_t, int64_t)> copy) {
  int64_t chunk = sum(pieces);
  int64_t blockStart = 0, pieceStart = 0;
  for (size_t i = 0; i < blocks.size(); ++i) {
    for (int64_t j = 0; j < q; ++j) {
      int64_t rows = std::min(pieces[i], blocks[i] - j * pieces[i]);
      if (rows > 0)
        copy(blockStart + j * pieces[i], j * chunk + pieceStart, rows);
    }
    blockStart += blocks[i];
    pieceStart += pieces[i];
  }
}

} // namespace

Value dist::packSegments(OpBuilder &b, Location loc, Value input, unsigned dim,
                         ArrayRef<int64_t> blocks, ArrayRef<int64_t> pieces,
                         int64_t q) {
  auto type = cast<RankedTensorType>(input.getType());
  Value packed = zeros(b, loc, type, dim, q * sum(pieces));
  forEachPiece(blocks, pieces, q,
               [&](int64_t blockRow, int64_t packedRow, int64_t rows) {
                 packed = copyRows(b, loc, input, packed, dim, blockRow,
                                   packedRow, rows);
               });
  return packed;
}

Value dist::unpackSegments(OpBuilder &b, Location loc, Value packed,
                           unsigned dim, ArrayRef<int64_t> pieces,
                           ArrayRef<int64_t> blocks, int64_t q) {
  auto type = cast<RankedTensorType>(packed.getType());
  Value result = zeros(b, loc, type, dim, sum(blocks));
  forEachPiece(blocks, pieces, q,
               [&](int64_t blockRow, int64_t packedRow, int64_t rows) {
                 result = copyRows(b, loc, packed, result, dim, packedRow,
                                   blockRow, rows);
               });
  return result;
}
