//===- SegmentPacking.h - collectives on interleaved dims -------*- C++ -*-===//
//
// On a dim with segments (semantics §2) a device's buffer holds its block of
// each segment in turn. A collective over q devices works segment by segment,
// which is the plain collective on a buffer *packed* into q chunks, chunk j
// holding piece j of every segment:
//
//   blocks:  [ s0 (B0 rows) | s1 (B1 rows) ]          (one device)
//   packed:  [ s0[0:b0] s1[0:b1] | s0[b0:2b0] s1[b1:2b1] | ... ]   (q chunks)
//
// A slice or reduce-scatter runs on the packed buffer (member j keeps chunk
// j); a gather or all-to-all delivers the members' buffers side by side,
// which unpacking turns back into per-segment blocks. Rows past a segment's
// block are zero, as padding is everywhere else. The packing is the local
// ops dist.local.pack_segments / unpack_segments, which lower to the
// runtime's strided copies (on the device's stream with target=gpu).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_CONVERSION_DISTTOLOCAL_SEGMENTPACKING_H
#define DIST_LIB_CONVERSION_DISTTOLOCAL_SEGMENTPACKING_H

#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <vector>

namespace dist {

/// The segments of `dim` on either side of a move (the source's, else the
/// result's), if it has any.
std::optional<std::vector<int64_t>> segmentsAlong(const planner::Layout &source,
                                                  const planner::Layout &result,
                                                  unsigned dim);

/// Per segment, the rows of one device's block under `layout` (ceil(n_i /
/// P_d); the whole segment when the dim has no axes).
std::vector<int64_t> segmentBlocks(const planner::Mesh &mesh,
                                   const planner::Layout &layout, unsigned dim,
                                   llvm::ArrayRef<int64_t> segments);

/// `type` with `extent` rows along `dim` (the shape a packed, gathered or
/// exchanged buffer takes).
mlir::RankedTensorType withExtent(mlir::RankedTensorType type, unsigned dim,
                                  int64_t extent);

/// `input` holds per-segment blocks of `blocks` rows along `dim`; returns q
/// chunks of sum(pieces) rows, chunk j holding rows [j*pieces_i,
/// (j+1)*pieces_i) of every segment's block (zero past the block).
mlir::Value packSegments(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value input, unsigned dim,
                         llvm::ArrayRef<int64_t> blocks,
                         llvm::ArrayRef<int64_t> pieces, int64_t q);

/// The inverse: `packed` holds q chunks of sum(pieces) rows along `dim`;
/// returns per-segment blocks of `blocks` rows, block i the concatenation of
/// piece i of every chunk, cut to blocks_i rows.
mlir::Value unpackSegments(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value packed, unsigned dim,
                           llvm::ArrayRef<int64_t> pieces,
                           llvm::ArrayRef<int64_t> blocks, int64_t q);

} // namespace dist

#endif
