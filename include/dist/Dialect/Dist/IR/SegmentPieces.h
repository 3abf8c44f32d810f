//===- SegmentPieces.h - the pieces of a segment packing --------*- C++ -*-===//
//
// dist.local.pack_segments / unpack_segments move, for every segment i and
// group member j, the rows [j*pieces[i], (j+1)*pieces[i]) of segment i's
// block between the per-segment layout (blocks one after the other) and the
// packed one (q chunks of sum(pieces) rows, pieces in segment order). One
// walk over those pieces serves their verifiers, dist-localize and the
// lowering to runtime copies.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_SEGMENTPIECES_H
#define DIST_DIALECT_DIST_IR_SEGMENTPIECES_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <algorithm>
#include <cstdint>
#include <numeric>

namespace dist {

/// Calls `copy(blockRow, packedRow, rows)` for every non-empty piece: piece
/// j of segment i is `rows` rows at `blockRow` of the per-segment layout and
/// at `packedRow` of the packed one (rows past a block's end are skipped).
inline void
forEachSegmentPiece(llvm::ArrayRef<int64_t> blocks,
                    llvm::ArrayRef<int64_t> pieces, int64_t parts,
                    llvm::function_ref<void(int64_t, int64_t, int64_t)> copy) {
  int64_t chunk = std::accumulate(pieces.begin(), pieces.end(), int64_t(0));
  int64_t blockStart = 0, pieceStart = 0;
  for (size_t i = 0; i < blocks.size() && i < pieces.size(); ++i) {
    for (int64_t j = 0; j < parts; ++j) {
      int64_t rows = std::min(pieces[i], blocks[i] - j * pieces[i]);
      if (rows > 0)
        copy(blockStart + j * pieces[i], j * chunk + pieceStart, rows);
    }
    blockStart += blocks[i];
    pieceStart += pieces[i];
  }
}

} // namespace dist

#endif // DIST_DIALECT_DIST_IR_SEGMENTPIECES_H
