//===- LocalIndexing.cpp - global positions in per-device code -----------===//

#include "dist/Dialect/Dist/Interfaces/LocalIndexing.h"
#include "dist/Support/MixedRadix.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace dist;

DimSplit DimSplit::of(const ShardedTypeInfo &info, ArrayRef<int64_t> shape,
                      unsigned dim) {
  DimSplit split;
  MeshOp meshOp = info.meshOp; // MLIR's op handles are not const
  split.mesh = FlatSymbolRefAttr::get(meshOp.getSymNameAttr());
  split.extent = shape[dim];
  for (unsigned axis : info.layout.dimAxes[dim])
    split.axes.push_back(
        StringAttr::get(meshOp.getContext(), info.mesh->getAxis(axis).name));
  split.parts = info.layout.shardCount(*info.mesh, dim);
  if (info.layout.isSegmented(dim))
    split.segments = info.layout.segments[dim];
  return split;
}

int64_t DimSplit::block() const {
  return dist::mixed_radix::blockSize(extent, parts);
}

std::vector<int64_t> DimSplit::segmentBlocks() const {
  if (segments.empty())
    return {block()};
  std::vector<int64_t> blocks;
  for (int64_t n : segments)
    blocks.push_back(dist::mixed_radix::blockSize(n, parts));
  return blocks;
}

int64_t DimSplit::localExtent() const {
  int64_t total = 0;
  for (int64_t b : segmentBlocks())
    total += b;
  return total;
}

bool DimSplit::isEven() const {
  if (segments.empty())
    return extent % parts == 0;
  return llvm::all_of(segments, [&](int64_t n) { return n % parts == 0; });
}

Value dist::buildShardIndex(OpBuilder &b, Location loc, const DimSplit &split) {
  return LocalShardIndexOp::create(b, loc, b.getIndexType(), split.mesh,
                                   b.getArrayAttr(split.axes));
}

Value dist::buildGlobalIndex(OpBuilder &b, Location loc, const DimSplit &split,
                             Value shard, Value local) {
  if (!split.isSplit())
    return local;
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  // Segment i (a contiguous dim is one segment) sits at local positions
  // [lo_i, lo_i + B_i) and holds global start_i + s * B_i + (local - lo_i).
  std::vector<int64_t> blocks = split.segmentBlocks();
  SmallVector<int64_t> localStarts, shifts;
  for (int64_t i = 0, lo = 0, start = 0; i < int64_t(blocks.size()); ++i) {
    localStarts.push_back(lo);
    shifts.push_back(start - lo);
    lo += blocks[i];
    start += split.segments.empty() ? 0 : split.segments[i];
  }
  auto globalIn = [&](size_t i) -> Value {
    Value offset = arith::MulIOp::create(b, loc, shard, constant(blocks[i]));
    if (shifts[i] != 0)
      offset = arith::AddIOp::create(b, loc, offset, constant(shifts[i]));
    return arith::AddIOp::create(b, loc, local, offset);
  };
  // The last segment whose local start is at most `local`.
  Value result = globalIn(blocks.size() - 1);
  for (size_t i = blocks.size() - 1; i-- > 0;) {
    Value before = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                         local, constant(localStarts[i + 1]));
    result = arith::SelectOp::create(b, loc, before, globalIn(i), result);
  }
  return result;
}

Value dist::buildValidCount(OpBuilder &b, Location loc, const DimSplit &split,
                            Value shard) {
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  int64_t block = split.block();
  Value start = arith::MulIOp::create(b, loc, shard, constant(block));
  Value left = arith::SubIOp::create(b, loc, constant(split.extent), start);
  Value upper = arith::MinSIOp::create(b, loc, left, constant(block));
  return arith::MaxSIOp::create(b, loc, upper, constant(0));
}
