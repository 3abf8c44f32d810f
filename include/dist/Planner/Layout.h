//===- Layout.h - Sharding layouts of semantics §2 --------------*- C++ -*-===//
//
// A layout says, for every tensor dim, which mesh axes split it (major to
// minor), which axes hold partial values (and how they reduce), and leaves
// every other axis replicating. This file owns the exact block semantics:
// which global indices a device holds and the padded local shape.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PLANNER_LAYOUT_H
#define DIST_PLANNER_LAYOUT_H

#include "dist/Planner/Mesh.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dist::planner {

enum class ReductionKind { Sum, Max, Min, Prod, Avg };

/// "sum", "max", "min", "prod", "avg".
std::optional<ReductionKind> parseReductionKind(llvm::StringRef text);
llvm::StringRef stringifyReductionKind(ReductionKind kind);

/// Mesh axes, in an order that means something (major to minor along a
/// dim, or sorted). Inline storage: real meshes split a dim over a few
/// axes, and the planner copies layouts on every step it prices.
using AxisList = llvm::SmallVector<unsigned, 4>;

struct Layout {
  /// Per tensor dim: the mesh axis indices that split it, major -> minor.
  llvm::SmallVector<AxisList, 4> dimAxes;
  /// Axes whose local values are partial; kept sorted by mesh axis index.
  AxisList partialAxes;
  ReductionKind partialKind = ReductionKind::Sum;
  /// Per tensor dim, the lengths of the sub-tensors an interleaved dim is
  /// made of (semantics §2 `segments`: a fused QKV weight's [q, k, v]); each is
  /// split by the dim's axes on its own. Empty (the whole vector, or one
  /// dim's list): a contiguous dim. Canonical: a list only where the dim has
  /// axes and more than one segment, and the vector empty when no dim has
  /// one.
  std::vector<std::vector<int64_t>> segments;

  /// A layout of the given rank with every axis replicating.
  static Layout replicated(size_t rank) {
    Layout layout;
    layout.dimAxes.resize(rank);
    return layout;
  }

  /// Structural equality; the partial kind only matters when some axis is
  /// partial, and the order of `partialAxes` does not matter.
  bool operator==(const Layout &other) const;
  bool operator!=(const Layout &other) const { return !(*this == other); }

  size_t getRank() const { return dimAxes.size(); }
  /// Whether `dim` is interleaved (has segments; canonical form assumed).
  bool isSegmented(unsigned dim) const {
    return dim < segments.size() && !segments[dim].empty();
  }
  bool hasSegments() const;
  bool hasPartial() const { return !partialAxes.empty(); }
  bool isPartial(unsigned axis) const;
  /// The tensor dim that `axis` splits, if any.
  std::optional<unsigned> dimOf(unsigned axis) const;
  /// True when `axis` neither splits a dim nor is partial.
  bool isReplicated(unsigned axis) const {
    return !isPartial(axis) && !dimOf(axis);
  }
  /// P_d: product of the sizes of the axes splitting `dim`.
  int64_t shardCount(const Mesh &mesh, unsigned dim) const;
  /// Sorts `partialAxes` (the canonical form every API returns).
  void canonicalize();
};

/// Checks that every axis index is in range, that no axis appears twice in
/// the whole layout, that the layout has `tensorRank` dims, and that every
/// segment list is non-empty with segments of at least 1.
llvm::Error verifyLayout(const Mesh &mesh, const Layout &layout,
                         size_t tensorRank);
/// The checks that need the global shape: each dim's segments sum to its
/// extent.
llvm::Error verifyLayoutShape(const Layout &layout,
                              llvm::ArrayRef<int64_t> globalShape);

/// Parses the sharding attribute's body after the mesh, e.g.
/// `[{"x"}, {"y", "z"}, {}], partial = sum {"w"}` or
/// `[{"tp"} segments [4096, 1024, 1024], {}]`, and verifies it against the
/// mesh (the rank is the number of `{...}` groups).
llvm::Expected<Layout> parseLayout(const Mesh &mesh, llvm::StringRef body);

/// Prints `[{}, {"y", "x"}]`, followed by `, partial = sum {"w"}` when some
/// axis is partial. Round-trips through parseLayout.
std::string printLayout(const Mesh &mesh, const Layout &layout);

/// The largest tensor the planner takes, in bytes (8 PiB, far beyond any
/// device): byte counts up to it are exact in the doubles costs are
/// computed in, and leave the 64-bit byte arithmetic (a step's bytes before
/// plus after, a block's end rounded up to whole blocks) a factor of 1024
/// of headroom, so that it never overflows.
constexpr int64_t kMaxTensorBytes = int64_t(1) << 53;

/// Checks a global shape: every extent >= 0, and the product of the extents
/// (a zero extent counted as 1, so that an empty tensor cannot hide a huge
/// dim) times `elementBytes` is at most kMaxTensorBytes ("too large"
/// otherwise).
llvm::Error verifyShape(llvm::ArrayRef<int64_t> globalShape,
                        int64_t elementBytes = 1);

/// Shard index s_d of the device at `coord` along `dim`:
/// sum_i c[a_i] * prod_{j>i} size(a_j) over the dim's axes a_1..a_k.
int64_t shardIndex(const Mesh &mesh, const Layout &layout, unsigned dim,
                   llvm::ArrayRef<int64_t> coord);

/// The padded local shape: per dim B_d = ceil(N_d / P_d), or for an
/// interleaved dim the sum over its segments of ceil(n_i / P_d). Identical on
/// every device. The layout must be valid for the shape's rank.
std::vector<int64_t> localShape(const Mesh &mesh, const Layout &layout,
                                llvm::ArrayRef<int64_t> globalShape);

/// Bytes of one device's local (padded) buffer.
int64_t localBytes(const Mesh &mesh, const Layout &layout,
                   llvm::ArrayRef<int64_t> globalShape, int64_t elementBytes);

/// Half-open range of global indices along one dim. Both ends are clipped to
/// N_d, so a device whose block lies past the end has begin == end (its
/// buffer is all padding).
struct DimRange {
  int64_t begin, end;
  int64_t size() const { return end - begin; }
  bool operator==(const DimRange &o) const {
    return begin == o.begin && end == o.end;
  }
};

/// The global block the device at `coord` holds, per dim:
/// [min(s_d * B_d, N_d), min((s_d + 1) * B_d, N_d)). Contiguous dims only:
/// an interleaved dim holds several ranges (blockPieces).
std::vector<DimRange> deviceBlock(const Mesh &mesh, const Layout &layout,
                                  llvm::ArrayRef<int64_t> globalShape,
                                  llvm::ArrayRef<int64_t> coord);

/// One contiguous run of global indices a device holds along a dim, and
/// where it starts in the device's local buffer.
struct BlockPiece {
  DimRange global;
  int64_t localOffset = 0;
};
/// Along `dim`, the runs the device with shard index `shard` holds: one for
/// a contiguous dim (possibly empty), one per segment for an interleaved one
/// (segment i's block, at the sum of the earlier segments' padded blocks).
std::vector<BlockPiece> blockPieces(const Mesh &mesh, const Layout &layout,
                                    llvm::ArrayRef<int64_t> globalShape,
                                    unsigned dim, int64_t shard);
/// Along `dim`, the global index at local position `local` of the device
/// with shard index `shard`, or -1 for padding.
int64_t globalIndexAlong(const Mesh &mesh, const Layout &layout,
                         llvm::ArrayRef<int64_t> globalShape, unsigned dim,
                         int64_t shard, int64_t local);
/// The source block a global index lies in along `dim` (its shard index,
/// which is the index within its segment) and where that block ends.
struct BlockAt {
  int64_t shard;
  int64_t end;
};
BlockAt blockAt(const Mesh &mesh, const Layout &layout,
                llvm::ArrayRef<int64_t> globalShape, unsigned dim,
                int64_t global);

} // namespace dist::planner

#endif // DIST_PLANNER_LAYOUT_H
