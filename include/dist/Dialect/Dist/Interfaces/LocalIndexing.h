//===- LocalIndexing.h - global positions in per-device code ----*- C++ -*-===//
//
// A device holds block s_d of every split dim (docs/semantics.md, "The
// layout"): contiguous, global indices [s_d * B_d, (s_d + 1) * B_d), or for
// an interleaved dim its block of every segment in turn. Per-device code
// that depends on positions (linalg.index, a slice's offsets, a padded
// reduction's mask) needs the global index of a local one, or how many of
// its local positions are real elements. These builders emit that
// arithmetic once, from the same block rule the planner uses.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_INTERFACES_LOCALINDEXING_H
#define DIST_DIALECT_DIST_INTERFACES_LOCALINDEXING_H

#include "dist/Dialect/Dist/Interfaces/PartitionableOpInterface.h"

#include "mlir/IR/Builders.h"

#include <vector>

namespace dist {

/// How one tensor dim (or one loop of an op) is split over a mesh.
struct DimSplit {
  mlir::FlatSymbolRefAttr mesh;
  /// The axes that split it, major to minor (StringAttrs).
  llvm::SmallVector<mlir::Attribute> axes;
  /// P: the product of their sizes (1: not split, or split by size-1 axes).
  int64_t parts = 1;
  /// N: the global extent.
  int64_t extent = 0;
  /// The segments of an interleaved dim (empty: contiguous).
  std::vector<int64_t> segments;

  /// Dim `dim` of a tensor of `shape` in the layout `info` describes.
  static DimSplit of(const ShardedTypeInfo &info, llvm::ArrayRef<int64_t> shape,
                     unsigned dim);

  bool isSplit() const { return parts > 1; }
  /// B = ceil(N / P) of a contiguous dim; for an interleaved one, the
  /// per-segment blocks are ceil(n_i / P).
  int64_t block() const;
  /// Per segment (or one entry for a contiguous dim): ceil(n_i / P).
  std::vector<int64_t> segmentBlocks() const;
  /// The local extent: the sum of the segment blocks.
  int64_t localExtent() const;
  /// True when no device's block holds padding.
  bool isEven() const;
};

/// This device's shard index s along the split's axes.
mlir::Value buildShardIndex(mlir::OpBuilder &b, mlir::Location loc,
                            const DimSplit &split);

/// The global index of local position `local` (an index value) of the
/// device with shard index `shard`. Padding positions map past their
/// segment's end, never onto another element.
mlir::Value buildGlobalIndex(mlir::OpBuilder &b, mlir::Location loc,
                             const DimSplit &split, mlir::Value shard,
                             mlir::Value local);

/// For a contiguous split: how many of this device's B local positions
/// hold elements, clamp(N - s * B, 0, B).
mlir::Value buildValidCount(mlir::OpBuilder &b, mlir::Location loc,
                            const DimSplit &split, mlir::Value shard);

} // namespace dist

#endif // DIST_DIALECT_DIST_INTERFACES_LOCALINDEXING_H
