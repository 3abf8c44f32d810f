//===- Move.h - The resharding moves of semantics §3 ------------*- C++ -*-===//
//
// A move is one collective (or local) step that turns one layout into
// another. applyMove is the single source of truth for the preconditions and
// effects: the search, the plan checker, the dialect verifiers and the tests
// all go through it.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PLANNER_MOVE_H
#define DIST_PLANNER_MOVE_H

#include "dist/Planner/Layout.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace dist::planner {

enum class MoveKind {
#define DIST_MOVE(Enum, Word, Local, HasTarget, HasDim, SplitsDim,             \
                  MayNameNoAxes, HasReduction)                                 \
  Enum,
#include "dist/Planner/MoveKinds.def"
};

/// Every kind, in MoveKinds.def order.
inline constexpr MoveKind kAllMoveKinds[] = {
#define DIST_MOVE(Enum, Word, Local, HasTarget, HasDim, SplitsDim,             \
                  MayNameNoAxes, HasReduction)                                 \
  MoveKind::Enum,
#include "dist/Planner/MoveKinds.def"
};

/// What MoveKinds.def says of one kind.
struct MoveKindInfo {
  const char *word;
  bool local, hasTarget, hasDim, splitsDim, mayNameNoAxes, hasReduction;
};

inline const MoveKindInfo &moveKindInfo(MoveKind kind) {
  static constexpr MoveKindInfo infos[] = {
#define DIST_MOVE(Enum, Word, Local, HasTarget, HasDim, SplitsDim,             \
                  MayNameNoAxes, HasReduction)                                 \
  {Word, Local, HasTarget, HasDim, SplitsDim, MayNameNoAxes, HasReduction},
#include "dist/Planner/MoveKinds.def"
  };
  // A value outside the enum (a corrupted plan) reads as the first row
  // rather than past the table; applyMove then rejects the move.
  unsigned index = static_cast<unsigned>(kind);
  return infos[index < std::size(infos) ? index : 0];
}

/// "all_gather", "all_slice", ...: the kind's word in plans and in the IR.
inline llvm::StringRef stringifyMoveKind(MoveKind kind) {
  return moveKindInfo(kind).word;
}
std::optional<MoveKind> parseMoveKind(llvm::StringRef text);

/// all_slice and replicate_to_partial touch only local data: they cost
/// nothing and every device can do them on its own.
inline bool isLocalMove(MoveKind kind) { return moveKindInfo(kind).local; }
/// Moves whose result is named by `target` rather than computed from axes.
inline bool moveHasTarget(MoveKind kind) {
  return moveKindInfo(kind).hasTarget;
}
/// Moves whose `dim` field is meaningful.
inline bool moveHasDim(MoveKind kind) { return moveKindInfo(kind).hasDim; }
/// Moves that add axes to a dim (`dim`, or `toDim` for all_to_all), which
/// may give it segments.
inline bool moveSplitsDim(MoveKind kind) {
  return moveKindInfo(kind).splitsDim;
}
/// Moves that may name no axis. A permute's axes are the axes whose
/// coordinate changes (permuteAxes); between layouts that differ only in
/// where size-1 axes sit, none does: every device keeps its buffer, and the
/// permute over no axes is the free relabelling that changes the type.
/// Every other collective needs a group.
inline bool moveMayNameNoAxes(MoveKind kind) {
  return moveKindInfo(kind).mayNameNoAxes;
}
/// Moves whose `reduction` field is meaningful.
inline bool moveHasReduction(MoveKind kind) {
  return moveKindInfo(kind).hasReduction;
}

struct Move {
  MoveKind kind = MoveKind::AllGather;
  /// Ordered. Several axes make one collective over their product group; for
  /// gather/slice/all_to_all/reduce_scatter the order is major -> minor
  /// within the dim. For permute: the axes whose coordinate differs between
  /// sender and receiver (see permuteAxes).
  AxisList axes;
  /// gather/slice/reduce_scatter: the dim; all_to_all: dim -> toDim.
  int64_t dim = -1, toDim = -1;
  /// reduce_scatter, all_reduce, replicate_to_partial.
  ReductionKind reduction = ReductionKind::Sum;
  /// permute and redistribute: the layout after the move.
  Layout permuteTarget;
  /// redistribute only: the target layout is on the request's target mesh
  /// (the one transfer of a cross-mesh plan, semantics §3a).
  bool crossMesh = false;
  /// all_slice, reduce_scatter (onto `dim`) and all_to_all (onto `toDim`):
  /// when that dim has no axes yet, the segments it is split into (semantics §2
  /// `segments`, e.g. a fused QKV weight's [q, k, v]); empty for a
  /// contiguous split. A dim that already has axes keeps its segments, and
  /// every collective on a segmented dim works segment by segment.
  std::vector<int64_t> segments;

  static Move allGather(llvm::ArrayRef<unsigned> axes, int64_t dim);
  static Move allSlice(llvm::ArrayRef<unsigned> axes, int64_t dim);
  static Move allToAll(llvm::ArrayRef<unsigned> axes, int64_t dim,
                       int64_t toDim);
  static Move reduceScatter(llvm::ArrayRef<unsigned> axes, int64_t dim,
                            ReductionKind kind);
  static Move allReduce(llvm::ArrayRef<unsigned> axes, ReductionKind kind);
  static Move replicateToPartial(llvm::ArrayRef<unsigned> axes,
                                 ReductionKind kind);
  /// A permute from `src` to `target`; `axes` is filled by permuteAxes.
  static Move permute(const Mesh &mesh, const Layout &src,
                      const Layout &target);
  /// A point-to-point redistribute to `target` (no axes: every device
  /// exchanges with the holders of what it lacks).
  static Move redistribute(const Layout &target, bool crossMesh = false);

  /// Compares only the fields meaningful for the kind.
  bool operator==(const Move &other) const;
  bool operator!=(const Move &other) const { return !(*this == other); }
};

/// Applies the semantics §3 preconditions and effects at the level of layouts.
/// A violated precondition is an Error whose message is a full sentence naming
/// axes and dims, e.g. `all_gather: axis "x" is not the minor-most axis of
/// dim 0`.
///  - all_gather / all_to_all: `axes` must be exactly the minor-most suffix
///    of the dim, in order.
///  - all_slice / reduce_scatter: appended in order as the new minor-most
///    axes; slice needs them replicated, reduce_scatter partial.
///  - all_reduce / reduce_scatter: the axes must be partial and `reduction`
///    must equal the operand's partial kind.
///  - replicate_to_partial: the axes must be replicated and, if some axes are
///    already partial, `reduction` must equal their kind.
///  - permute: same per-dim shard counts, same partial axes and kind, a
///    different layout, and `axes` equal (as a set) to permuteAxes.
///  - segments: collectives on a dim with segments work per segment and keep
///    them; `segments` on a split onto a dim without axes gives it segments
///    (at least 2, each >= 1). A permute needs equal segments on both sides.
///  - redistribute: no axes, a valid different target with the same partial
///    axes and kind. A cross-mesh redistribute is not a move on one mesh:
///    applyMove refuses it (the planner checks it against both meshes).
llvm::Expected<Layout> applyMove(const Mesh &mesh, const Layout &src,
                                 const Move &move, size_t tensorRank);

/// applyMove plus the data-availability condition that depends on extents:
/// when a dim that is already split P ways gains (or loses) q more shards,
/// the new blocks must nest in the old ones (see blocksNest; on a dim with
/// segments, in every segment), and segments must sum to the extent. Otherwise
/// the data a device needs is not inside its own buffer (slice) or its group
/// (gather), and the step is not the collective semantics §3 prices. Moves on
/// evenly divisible dims always nest.
llvm::Expected<Layout> applyMove(const Mesh &mesh, const Layout &src,
                                 const Move &move,
                                 llvm::ArrayRef<int64_t> globalShape);

/// The bytes per device the collective `move` (from `src` to `after`)
/// operates on: the local buffer, except where the dim it splits ends up
/// with segments (reduce_scatter, all_to_all). The collective then runs on
/// the buffer packed into one chunk per group member, each holding that
/// member's blocks of every segment (padded), which is what it moves.
int64_t collectiveInputBytes(const Mesh &mesh, const Layout &src,
                             const Layout &after, const Move &move,
                             llvm::ArrayRef<int64_t> globalShape,
                             int64_t elementBytes);

/// The bytes one device writes in its own memory in the step `move` (from
/// `src` to `after`), which semantics §3b prices at `local.beta` each: an
/// all_slice's result; the own block a gather (its input) or an all_to_all
/// (the chunk it keeps) over more than one device copies into its result;
/// the buffer packed into one chunk per member before a split (all_slice
/// and all_to_all on segments, reduce_scatter and an uneven all_to_all
/// wherever the chunks are not already back to back) and the buffer
/// unpacked after a join (all_gather on segments or uneven blocks, the dim
/// an all_to_all joins likewise), as the compiler lowers those moves for
/// host memory; 0 for every other move. (A redistribute's are the bytes it
/// keeps from the old buffer: its Exchange's maxKeptBytes.)
int64_t localStepBytes(const Mesh &mesh, const Layout &src, const Layout &after,
                       const Move &move, llvm::ArrayRef<int64_t> globalShape,
                       int64_t elementBytes);

/// True when splitting each of the `outer` blocks of a dim of `extent`
/// elements into `inner` pieces gives exactly the blocks of a dim split
/// outer*inner ways: ceil(N/(P q)) * q == ceil(N/P), or everything lies in
/// the first outer block (ceil(N/P) >= N).
/// (Inline: move generation asks it for every candidate step.)
inline bool blocksNest(int64_t extent, int64_t outer, int64_t inner) {
  if (extent <= 0 || outer <= 0 || inner <= 0)
    return true;
  int64_t outerBlock = (extent + outer - 1) / outer;
  if (outerBlock >= extent)
    return true;
  // outer * inner cannot overflow: both divide the mesh's device count.
  int64_t innerBlock = (extent + outer * inner - 1) / (outer * inner);
  return innerBlock * inner == outerBlock;
}

/// The axes A of semantics §3's permute cost for `src` -> `dst` (equal per-dim
/// shard counts and partial axes required): an axis of size > 1 that splits
/// dim d in `src` belongs to A unless it splits d in `dst` at the same
/// stride. Senders are chosen to keep A smallest: the receiver's sender has
/// the receiver's own coordinate on every partial axis and on every axis
/// replicated in `src`; only the coordinates on `src`'s splitting axes are
/// forced, and those are unchanged exactly for the axes that keep their dim
/// and stride. Sorted by mesh axis index.
AxisList permuteAxes(const Mesh &mesh, const Layout &src, const Layout &dst);

/// The coordinate of the device that sends to `receiver` in the permute
/// `src` -> `dst` (the choice permuteAxes prices).
std::vector<int64_t> permuteSender(const Mesh &mesh, const Layout &src,
                                   const Layout &dst,
                                   llvm::ArrayRef<int64_t> receiver);

/// Human-readable: `all_to_all {"x"} dim 0 -> 1`, `all_reduce {"y"} sum`.
std::string printMove(const Mesh &mesh, const Move &move);

} // namespace dist::planner

#endif // DIST_PLANNER_MOVE_H
