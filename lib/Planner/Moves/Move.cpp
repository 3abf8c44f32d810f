//===- Move.cpp - Preconditions and effects of the moves (semantics §3) ---===//

#include "dist/Planner/Move.h"
#include "Model/Syntax.h"
#include "dist/Support/MixedRadix.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace dist::planner;
using llvm::createStringError;
using llvm::Error;
using llvm::Expected;
using llvm::inconvertibleErrorCode;

std::optional<MoveKind> dist::planner::parseMoveKind(llvm::StringRef text) {
  for (MoveKind kind : kAllMoveKinds)
    if (stringifyMoveKind(kind) == text)
      return kind;
  return std::nullopt;
}

Move Move::allGather(llvm::ArrayRef<unsigned> axes, int64_t dim) {
  Move m;
  m.kind = MoveKind::AllGather;
  m.axes.assign(axes.begin(), axes.end());
  m.dim = dim;
  return m;
}
Move Move::allSlice(llvm::ArrayRef<unsigned> axes, int64_t dim) {
  Move m = allGather(axes, dim);
  m.kind = MoveKind::AllSlice;
  return m;
}
Move Move::allToAll(llvm::ArrayRef<unsigned> axes, int64_t dim, int64_t toDim) {
  Move m = allGather(axes, dim);
  m.kind = MoveKind::AllToAll;
  m.toDim = toDim;
  return m;
}
Move Move::reduceScatter(llvm::ArrayRef<unsigned> axes, int64_t dim,
                         ReductionKind kind) {
  Move m = allGather(axes, dim);
  m.kind = MoveKind::ReduceScatter;
  m.reduction = kind;
  return m;
}
Move Move::allReduce(llvm::ArrayRef<unsigned> axes, ReductionKind kind) {
  Move m;
  m.kind = MoveKind::AllReduce;
  m.axes.assign(axes.begin(), axes.end());
  m.reduction = kind;
  return m;
}
Move Move::replicateToPartial(llvm::ArrayRef<unsigned> axes,
                              ReductionKind kind) {
  Move m = allReduce(axes, kind);
  m.kind = MoveKind::ReplicateToPartial;
  return m;
}
Move Move::permute(const Mesh &mesh, const Layout &src, const Layout &target) {
  Move m;
  m.kind = MoveKind::Permute;
  m.permuteTarget = target;
  m.permuteTarget.canonicalize();
  m.axes = permuteAxes(mesh, src, target);
  return m;
}

Move Move::redistribute(const Layout &target, bool crossMesh) {
  Move m;
  m.kind = MoveKind::Redistribute;
  m.permuteTarget = target;
  m.permuteTarget.canonicalize();
  m.crossMesh = crossMesh;
  return m;
}

bool Move::operator==(const Move &other) const {
  if (kind != other.kind || axes != other.axes)
    return false;
  if (moveHasDim(kind) && dim != other.dim)
    return false;
  if (kind == MoveKind::AllToAll && toDim != other.toDim)
    return false;
  if (moveHasReduction(kind) && reduction != other.reduction)
    return false;
  if (moveHasTarget(kind) && permuteTarget != other.permuteTarget)
    return false;
  if (kind == MoveKind::Redistribute && crossMesh != other.crossMesh)
    return false;
  if (moveSplitsDim(kind) && segments != other.segments)
    return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Permute senders
//===----------------------------------------------------------------------===//

/// Stride of `axis` inside `dims[dim]`: the product of the sizes of the axes
/// after it.
static int64_t strideIn(const Mesh &mesh, llvm::ArrayRef<unsigned> axes,
                        unsigned axis) {
  int64_t stride = 1;
  for (size_t i = axes.size(); i-- > 0;) {
    if (axes[i] == axis)
      return stride;
    // An index outside the mesh (an invalid layout) counts as size 1 here;
    // applyMove rejects such layouts with a message.
    if (axes[i] < mesh.getNumAxes())
      stride *= mesh.getAxisSize(axes[i]);
  }
  return -1;
}

AxisList dist::planner::permuteAxes(const Mesh &mesh, const Layout &src,
                                    const Layout &dst) {
  AxisList result;
  for (unsigned d = 0; d < src.dimAxes.size(); ++d) {
    for (unsigned axis : src.dimAxes[d]) {
      if (axis >= mesh.getNumAxes() || mesh.getAxisSize(axis) == 1)
        continue;
      bool kept =
          d < dst.dimAxes.size() && strideIn(mesh, dst.dimAxes[d], axis) ==
                                        strideIn(mesh, src.dimAxes[d], axis);
      if (!kept)
        result.push_back(axis);
    }
  }
  std::sort(result.begin(), result.end());
  return result;
}

std::vector<int64_t>
dist::planner::permuteSender(const Mesh &mesh, const Layout &src,
                             const Layout &dst,
                             llvm::ArrayRef<int64_t> receiver) {
  std::vector<int64_t> sender(receiver.begin(), receiver.end());
  // An invalid layout (an axis the mesh or the coordinate lacks) has no
  // sensible sender: the receiver keeps its own buffer.
  auto valid = [&](const Layout &layout) {
    for (const AxisList &axes : layout.dimAxes)
      for (unsigned axis : axes)
        if (axis >= mesh.getNumAxes() || axis >= sender.size())
          return false;
    return true;
  };
  if (!valid(src) || !valid(dst))
    return sender;
  // The rule runtime and planner share (dist/Support/MixedRadix.h).
  size_t dims = std::min(src.dimAxes.size(), dst.dimAxes.size());
  dist::mixed_radix::permuteSenderInPlace(
      sender, dims,
      [&](size_t d) -> const AxisList & { return src.dimAxes[d]; },
      [&](size_t d) -> const AxisList & { return dst.dimAxes[d]; },
      [&](unsigned axis) { return mesh.getAxisSize(axis); });
  return sender;
}

//===----------------------------------------------------------------------===//
// applyMove
//===----------------------------------------------------------------------===//

namespace {
/// Builds the error sentences; every message starts with the move's name.
struct MoveChecker {
  const Mesh &mesh;
  const Move &move;

  Error fail(const llvm::Twine &msg) const {
    return createStringError(inconvertibleErrorCode(),
                             stringifyMoveKind(move.kind) + ": " + msg);
  }
  std::string name(unsigned axis) const {
    return detail::quoteName(mesh.getAxis(axis).name);
  }
  std::string set(llvm::ArrayRef<unsigned> axes) const {
    std::string out = "{";
    for (size_t i = 0; i < axes.size(); ++i)
      out += (i ? ", " : "") + name(axes[i]);
    return out + "}";
  }
  /// "axis "x"" or "axes {"x", "y"}".
  std::string axesPhrase() const {
    return move.axes.size() == 1 ? "axis " + name(move.axes[0])
                                 : "axes " + set(move.axes);
  }

  Error checkDim(int64_t dim, size_t rank, llvm::StringRef field) const {
    if (dim < 0 || dim >= int64_t(rank))
      return fail(field + " " + llvm::Twine(dim) +
                  " is out of range for a tensor of rank " + llvm::Twine(rank));
    return Error::success();
  }

  Error checkAxes(bool allowEmpty) const {
    if (move.axes.empty() && !allowEmpty)
      return fail("the move names no mesh axis");
    for (size_t i = 0; i < move.axes.size(); ++i) {
      unsigned axis = move.axes[i];
      if (axis >= mesh.getNumAxes())
        return fail("mesh axis #" + llvm::Twine(axis) +
                    " does not exist (the mesh has " +
                    llvm::Twine(mesh.getNumAxes()) + " axes)");
      for (size_t j = 0; j < i; ++j)
        if (move.axes[j] == axis)
          return fail("axis " + name(axis) + " is listed twice");
    }
    return Error::success();
  }

  /// `axes` must be exactly the minor-most suffix of `dimAxes`, in order.
  Error checkSuffix(llvm::ArrayRef<unsigned> dimAxes, int64_t dim) const {
    size_t k = move.axes.size();
    bool ok = k <= dimAxes.size() &&
              std::equal(move.axes.begin(), move.axes.end(), dimAxes.end() - k);
    if (ok)
      return Error::success();
    if (k == 1) {
      if (std::find(dimAxes.begin(), dimAxes.end(), move.axes[0]) ==
          dimAxes.end())
        return fail("axis " + name(move.axes[0]) + " does not split dim " +
                    llvm::Twine(dim));
      return fail("axis " + name(move.axes[0]) +
                  " is not the minor-most axis of dim " + llvm::Twine(dim) +
                  " (dim " + llvm::Twine(dim) + " is split by " + set(dimAxes) +
                  ")");
    }
    return fail("axes " + set(move.axes) +
                " are not the minor-most axes of dim " + llvm::Twine(dim) +
                " in that order (dim " + llvm::Twine(dim) + " is split by " +
                set(dimAxes) + ")");
  }

  Error checkReplicated(const Layout &src) const {
    for (unsigned axis : move.axes) {
      if (src.isPartial(axis))
        return fail("axis " + name(axis) + " is partial, not replicated");
      if (std::optional<unsigned> d = src.dimOf(axis))
        return fail("axis " + name(axis) + " already splits dim " +
                    llvm::Twine(*d));
    }
    return Error::success();
  }

  Error checkPartial(const Layout &src) const {
    for (unsigned axis : move.axes)
      if (!src.isPartial(axis))
        return fail("axis " + name(axis) + " is not partial");
    if (move.reduction != src.partialKind)
      return fail("reduction " + stringifyReductionKind(move.reduction) +
                  " does not match the operand's partial kind " +
                  stringifyReductionKind(src.partialKind));
    return Error::success();
  }
};
} // namespace

static void removeAxes(AxisList &from, llvm::ArrayRef<unsigned> axes) {
  from.erase(
      std::remove_if(from.begin(), from.end(),
                     [&](unsigned a) { return llvm::is_contained(axes, a); }),
      from.end());
}

Expected<Layout> dist::planner::applyMove(const Mesh &mesh, const Layout &src,
                                          const Move &move, size_t rank) {
  MoveChecker check{mesh, move};
  if (Error e = verifyLayout(mesh, src, rank))
    return check.fail("the operand layout is invalid: " +
                      llvm::toString(std::move(e)));
  if (move.kind == MoveKind::Redistribute) {
    if (move.crossMesh)
      return check.fail("a redistribute onto another mesh is not a move on "
                        "one mesh");
    if (!move.axes.empty())
      return check.fail("a redistribute takes no axes");
  } else if (Error e = check.checkAxes(moveMayNameNoAxes(move.kind))) {
    return std::move(e);
  }
  if (moveHasDim(move.kind))
    if (Error e = check.checkDim(move.dim, rank, "dim"))
      return std::move(e);

  Layout result = src;
  result.canonicalize();
  // The segments a split gives a dim without axes (a dim with axes keeps
  // its own; collectives on it work segment by segment).
  int64_t splitDim = move.kind == MoveKind::AllToAll ? move.toDim : move.dim;
  if (!move.segments.empty()) {
    if (!moveSplitsDim(move.kind))
      return check.fail("only all_slice, reduce_scatter and all_to_all give "
                        "a dim segments");
    if (move.segments.size() < 2)
      return check.fail("segments need at least 2 entries");
    for (int64_t n : move.segments)
      if (n < 1)
        return check.fail("segments must be >= 1, got " + llvm::Twine(n));
    if (!src.dimAxes[splitDim].empty())
      return check.fail("dim " + llvm::Twine(splitDim) +
                        " is already split; it keeps its own segments");
  }
  auto giveSegments = [&](Layout &layout) {
    if (move.segments.empty())
      return;
    layout.segments.resize(layout.getRank());
    layout.segments[splitDim] = move.segments;
  };
  switch (move.kind) {
  case MoveKind::AllGather: {
    if (Error e = check.checkSuffix(src.dimAxes[move.dim], move.dim))
      return std::move(e);
    auto &axes = result.dimAxes[move.dim];
    axes.resize(axes.size() - move.axes.size());
    result.canonicalize();
    return result;
  }
  case MoveKind::AllSlice: {
    if (Error e = check.checkReplicated(src))
      return std::move(e);
    auto &axes = result.dimAxes[move.dim];
    axes.insert(axes.end(), move.axes.begin(), move.axes.end());
    giveSegments(result);
    return result;
  }
  case MoveKind::AllToAll: {
    if (Error e = check.checkDim(move.toDim, rank, "to_dim"))
      return std::move(e);
    if (move.toDim == move.dim)
      return check.fail("dim and to_dim are both " + llvm::Twine(move.dim) +
                        "; an all_to_all must move axes to another dim");
    if (Error e = check.checkSuffix(src.dimAxes[move.dim], move.dim))
      return std::move(e);
    auto &from = result.dimAxes[move.dim];
    from.resize(from.size() - move.axes.size());
    auto &to = result.dimAxes[move.toDim];
    to.insert(to.end(), move.axes.begin(), move.axes.end());
    giveSegments(result);
    result.canonicalize();
    return result;
  }
  case MoveKind::ReduceScatter: {
    if (Error e = check.checkPartial(src))
      return std::move(e);
    removeAxes(result.partialAxes, move.axes);
    auto &axes = result.dimAxes[move.dim];
    axes.insert(axes.end(), move.axes.begin(), move.axes.end());
    giveSegments(result);
    return result;
  }
  case MoveKind::AllReduce: {
    if (Error e = check.checkPartial(src))
      return std::move(e);
    removeAxes(result.partialAxes, move.axes);
    return result;
  }
  case MoveKind::ReplicateToPartial: {
    if (Error e = check.checkReplicated(src))
      return std::move(e);
    if (src.hasPartial() && move.reduction != src.partialKind)
      return check.fail("reduction " + stringifyReductionKind(move.reduction) +
                        " does not match the existing partial kind " +
                        stringifyReductionKind(src.partialKind) +
                        " of the operand");
    result.partialAxes.insert(result.partialAxes.end(), move.axes.begin(),
                              move.axes.end());
    result.partialKind = move.reduction;
    result.canonicalize();
    return result;
  }
  case MoveKind::Permute: {
    const Layout &target = move.permuteTarget;
    if (Error e = verifyLayout(mesh, target, rank))
      return check.fail("the target layout is invalid: " +
                        llvm::toString(std::move(e)));
    for (unsigned d = 0; d < rank; ++d) {
      int64_t from = src.shardCount(mesh, d), to = target.shardCount(mesh, d);
      if (from != to)
        return check.fail("dim " + llvm::Twine(d) + " has " +
                          llvm::Twine(from) + " shards in the operand but " +
                          llvm::Twine(to) +
                          " in the target; a permute keeps every dim's "
                          "shard count");
    }
    Layout canonicalTarget = target;
    canonicalTarget.canonicalize();
    if (canonicalTarget.segments != result.segments)
      return check.fail("a permute keeps every dim's segments; the operand "
                        "and the target differ in them (use redistribute)");
    if (canonicalTarget.partialAxes != result.partialAxes)
      return check.fail("the partial axes " + check.set(result.partialAxes) +
                        " of the operand differ from the target's " +
                        check.set(canonicalTarget.partialAxes));
    if (src.hasPartial() && target.partialKind != src.partialKind)
      return check.fail("the target's partial kind " +
                        stringifyReductionKind(target.partialKind) +
                        " differs from the operand's " +
                        stringifyReductionKind(src.partialKind));
    if (canonicalTarget == result)
      return check.fail("the target layout equals the operand layout");
    AxisList expected = permuteAxes(mesh, src, target);
    AxisList given = move.axes;
    std::sort(given.begin(), given.end());
    if (given != expected)
      return check.fail("axes " + check.set(move.axes) +
                        " are not the axes whose coordinate changes between "
                        "sender and receiver, which are " +
                        check.set(expected));
    canonicalTarget.partialKind = src.partialKind;
    return canonicalTarget;
  }
  case MoveKind::Redistribute: {
    Layout target = move.permuteTarget;
    if (Error e = verifyLayout(mesh, target, rank))
      return check.fail("the target layout is invalid: " +
                        llvm::toString(std::move(e)));
    target.canonicalize();
    if (target.partialAxes != result.partialAxes)
      return check.fail("the partial axes " + check.set(result.partialAxes) +
                        " of the operand differ from the target's " +
                        check.set(target.partialAxes));
    if (src.hasPartial() && target.partialKind != src.partialKind)
      return check.fail("the target's partial kind " +
                        stringifyReductionKind(target.partialKind) +
                        " differs from the operand's " +
                        stringifyReductionKind(src.partialKind));
    target.partialKind = src.partialKind;
    if (target == result)
      return check.fail("the target layout equals the operand layout");
    return target;
  }
  }
  return check.fail("unknown move kind");
}

Expected<Layout> dist::planner::applyMove(const Mesh &mesh, const Layout &src,
                                          const Move &move,
                                          llvm::ArrayRef<int64_t> shape) {
  if (Error e = verifyShape(shape))
    return createStringError(inconvertibleErrorCode(),
                             stringifyMoveKind(move.kind) + ": " +
                                 llvm::toString(std::move(e)));
  Expected<Layout> result = applyMove(mesh, src, move, shape.size());
  if (!result)
    return result.takeError();
  MoveChecker check{mesh, move};
  int64_t group = 1;
  for (unsigned axis : move.axes)
    group *= mesh.getAxisSize(axis);
  // `coarse` is the layout with fewer shards along `dim`.
  if (Error e = verifyLayoutShape(src, shape))
    return check.fail("the operand layout does not fit the shape: " +
                      llvm::toString(std::move(e)));
  if (Error e = verifyLayoutShape(*result, shape))
    return check.fail(llvm::toString(std::move(e)));
  // `coarse` is the layout with fewer shards along `dim`; on a dim with
  // segments every segment must nest on its own.
  auto nest = [&](const Layout &coarse, int64_t dim) -> Error {
    int64_t outer = coarse.shardCount(mesh, dim);
    const Layout &segmented = result->isSegmented(dim) ? *result : src;
    std::vector<int64_t> runs{shape[dim]};
    if (segmented.isSegmented(dim))
      runs = segmented.segments[dim];
    auto bad = llvm::find_if(
        runs, [&](int64_t run) { return !blocksNest(run, outer, group); });
    if (bad == runs.end())
      return Error::success();
    int64_t n = *bad;
    return check.fail(
        "along dim " + llvm::Twine(dim) + " (" +
        (runs.size() > 1 ? "a segment of " : "extent ") + llvm::Twine(n) +
        ") the " + llvm::Twine(outer) + " blocks of " +
        llvm::Twine((n + outer - 1) / outer) + " are not unions of the " +
        llvm::Twine(outer * group) + " blocks of " +
        llvm::Twine((n + outer * group - 1) / (outer * group)) + ", so " +
        check.axesPhrase() +
        " alone cannot carry the data (uneven extents do not nest)");
  };
  switch (move.kind) {
  case MoveKind::AllGather:
    if (Error e = nest(*result, move.dim))
      return std::move(e);
    break;
  case MoveKind::AllSlice:
  case MoveKind::ReduceScatter:
    if (Error e = nest(src, move.dim))
      return std::move(e);
    break;
  case MoveKind::AllToAll:
    if (Error e = nest(*result, move.dim))
      return std::move(e);
    if (Error e = nest(src, move.toDim))
      return std::move(e);
    break;
  default:
    break;
  }
  return result;
}

/// The bytes of `src`'s buffer packed for a split of `dim` by the group of
/// `move` (one chunk per member, each `after`'s block of every segment).
static int64_t packedSplitBytes(const Mesh &mesh, const Layout &src,
                                const Layout &after, const Move &move,
                                llvm::ArrayRef<int64_t> shape, unsigned dim,
                                int64_t elementBytes) {
  int64_t group = 1;
  for (unsigned axis : move.axes)
    group *= mesh.getAxisSize(axis);
  std::vector<int64_t> packed = localShape(mesh, src, shape);
  packed[dim] = group * localShape(mesh, after, shape)[dim];
  int64_t count = elementBytes;
  for (int64_t extent : packed)
    count *= extent;
  return count;
}

int64_t dist::planner::collectiveInputBytes(const Mesh &mesh, const Layout &src,
                                            const Layout &after,
                                            const Move &move,
                                            llvm::ArrayRef<int64_t> shape,
                                            int64_t elementBytes) {
  int64_t bytes = localBytes(mesh, src, shape, elementBytes);
  if (move.kind != MoveKind::ReduceScatter && move.kind != MoveKind::AllToAll)
    return bytes;
  int64_t dim = move.kind == MoveKind::AllToAll ? move.toDim : move.dim;
  if (dim < 0 || !after.isSegmented(unsigned(dim)))
    return bytes;
  return packedSplitBytes(mesh, src, after, move, shape, unsigned(dim),
                          elementBytes);
}

/// Whether every dim of `shape` before `dim` has extent 1: a buffer of
/// that shape split along `dim` then holds its chunks back to back.
static bool leadingDimsAreOne(llvm::ArrayRef<int64_t> shape, int64_t dim) {
  return llvm::all_of(shape.take_front(dim), [](int64_t e) { return e == 1; });
}

int64_t dist::planner::localStepBytes(const Mesh &mesh, const Layout &src,
                                      const Layout &after, const Move &move,
                                      llvm::ArrayRef<int64_t> shape,
                                      int64_t elementBytes) {
  auto segmented = [&](int64_t dim) {
    return dim >= 0 &&
           (src.isSegmented(unsigned(dim)) || after.isSegmented(unsigned(dim)));
  };
  auto packed = [&](int64_t dim) {
    return packedSplitBytes(mesh, src, after, move, shape, unsigned(dim),
                            elementBytes);
  };
  auto unpacked = [&] { return localBytes(mesh, after, shape, elementBytes); };
  int64_t group = 1;
  for (unsigned axis : move.axes)
    group *= mesh.getAxisSize(axis);
  // A gather or all_to_all over more than one device copies the device's
  // own chunk from its send buffer into its place in the result (semantics
  // §3b): a gather its whole input, an all_to_all the chunk it keeps.
  auto ownChunk = [&]() -> int64_t {
    if (group == 1)
      return 0;
    if (move.kind == MoveKind::AllGather)
      return localBytes(mesh, src, shape, elementBytes);
    return packedSplitBytes(mesh, src, after, move, shape, unsigned(move.toDim),
                            elementBytes) /
           group;
  };
  switch (move.kind) {
  case MoveKind::AllSlice:
    return (segmented(move.dim) ? packed(move.dim) : 0) + unpacked();
  case MoveKind::ReduceScatter: {
    // The collective takes one chunk per member, back to back: unless the
    // chunks already are (no dim before `dim` longer than 1, and the blocks
    // tile the dim exactly), the input is packed into them first.
    std::vector<int64_t> in = localShape(mesh, src, shape);
    std::vector<int64_t> out = localShape(mesh, after, shape);
    bool chunkMajor = group * out[move.dim] == in[move.dim] &&
                      leadingDimsAreOne(out, move.dim);
    return segmented(move.dim) || !chunkMajor ? packed(move.dim) : 0;
  }
  case MoveKind::AllGather: {
    if (segmented(move.dim))
      return ownChunk() + unpacked();
    // Blocks that do not tile the result's dim exactly (the last one
    // padded) arrive in a buffer of chunks and are unpacked from it.
    bool even = group * localShape(mesh, src, shape)[move.dim] ==
                localShape(mesh, after, shape)[move.dim];
    return ownChunk() + (even ? 0 : unpacked());
  }
  case MoveKind::AllToAll: {
    if (segmented(move.toDim) || segmented(move.dim))
      return ownChunk() + (segmented(move.toDim) ? packed(move.toDim) : 0) +
             (segmented(move.dim) ? unpacked() : 0);
    // Chunks are the input with `toDim` cut to the result's extent. When
    // both dims split evenly they are read and written in place; otherwise
    // they are packed (unless already back to back) and unpacked (unless
    // the result is them, back to back).
    std::vector<int64_t> in = localShape(mesh, src, shape);
    std::vector<int64_t> out = localShape(mesh, after, shape);
    std::vector<int64_t> chunk = in;
    chunk[move.toDim] = out[move.toDim];
    bool evenTo = group * chunk[move.toDim] == in[move.toDim];
    bool evenFrom = group * chunk[move.dim] == out[move.dim];
    if (evenTo && evenFrom)
      return ownChunk();
    int64_t extra = 0;
    if (!(evenTo && leadingDimsAreOne(chunk, move.toDim)))
      extra += packed(move.toDim);
    if (!(evenFrom && leadingDimsAreOne(chunk, move.dim)))
      extra += unpacked();
    return ownChunk() + extra;
  }
  case MoveKind::AllReduce:
  case MoveKind::ReplicateToPartial:
  case MoveKind::Permute:
  case MoveKind::Redistribute:
    return 0;
  }
  return 0;
}

std::string dist::planner::printMove(const Mesh &mesh, const Move &move) {
  std::string out = stringifyMoveKind(move.kind).str() + " {";
  for (size_t i = 0; i < move.axes.size(); ++i) {
    out += i ? ", " : "";
    out += move.axes[i] < mesh.getNumAxes()
               ? detail::quoteName(mesh.getAxis(move.axes[i]).name)
               : "#" + std::to_string(move.axes[i]);
  }
  out += "}";
  if (moveHasDim(move.kind))
    out += " dim " + std::to_string(move.dim);
  if (move.kind == MoveKind::AllToAll)
    out += " -> " + std::to_string(move.toDim);
  if (!move.segments.empty()) {
    out += " segments [";
    for (size_t i = 0; i < move.segments.size(); ++i)
      out += (i ? ", " : "") + std::to_string(move.segments[i]);
    out += "]";
  }
  if (moveHasReduction(move.kind))
    out += " " + stringifyReductionKind(move.reduction).str();
  if (move.kind == MoveKind::Permute ||
      (move.kind == MoveKind::Redistribute && !move.crossMesh))
    out += " to " + printLayout(mesh, move.permuteTarget);
  if (move.kind == MoveKind::Redistribute && move.crossMesh)
    out += " to the target mesh";
  return out;
}
