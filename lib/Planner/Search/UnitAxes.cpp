//===- UnitAxes.cpp - Planning without the mesh's size-1 axes -------------===//
//
// An axis of size 1 gives every device the same coordinate on it, so a layout
// that splits a dim by it, or holds partial values over it, has the same
// local data as one without it: it moves nothing, yet the search would
// explore every place it can sit (eight axes, six of size 1, took
// the optimal search over two minutes). So the search runs on the mesh
// without those axes, and the plan is mapped back with zero-cost steps
// around it:
//
//   permute dropping the size-1 axes from the dims     (no coordinate changes)
//   all_reduce over the source's size-1 partial axes   (a group of one device)
//   ... the plan on the reduced mesh, its axes renamed ...
//   replicate_to_partial over the target's size-1 partial axes   (local)
//   permute placing the target's size-1 axes in its dims
//
// Each of those then folds into a neighbouring step where one step of the
// neighbour's kind does both for no more cost (an all_gather of {"b", "c"}
// with "b" of size 1 instead of a permute and an all_gather of {"c"}), so
// that plans keep the fewest steps. No plan costs less: dropping the size-1
// axes from every step of any plan gives a plan on the reduced mesh that
// costs no more, since a step's group size and slowest link never grow.
//
//===----------------------------------------------------------------------===//

#include "Search/Search.h"

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Redistribute.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <set>

using namespace dist::planner;
using llvm::Expected;

namespace {
/// The request's cost model seen through the reduced mesh: axis i of the
/// reduced mesh is axis toFull[i] of the original.
class ReducedCostModel final : public CostModel {
public:
  ReducedCostModel(Mesh reduced, const CostModel &full,
                   std::vector<unsigned> toFull)
      : CostModel(std::move(reduced)), full(full), toFull(std::move(toFull)) {}

  llvm::StringRef getName() const override { return full.getName(); }
  double collectiveCost(MoveKind kind, llvm::ArrayRef<unsigned> axes,
                        int64_t bytesBefore) const override {
    return full.collectiveCost(kind, map(axes), bytesBefore);
  }
  AxisCostParams
  pointToPointLink(llvm::ArrayRef<unsigned> axes) const override {
    return full.pointToPointLink(map(axes));
  }
  AxisCostParams slowestLink() const override { return full.slowestLink(); }
  double axisSecondsPerByte(unsigned axis) const override {
    return full.axisSecondsPerByte(toFull[axis]);
  }
  double minLatency() const override { return full.minLatency(); }
  double minSecondsPerByte() const override { return full.minSecondsPerByte(); }
  double localSecondsPerByte() const override {
    return full.localSecondsPerByte();
  }
  double axisLatencyBound(unsigned axis) const override {
    return full.axisLatencyBound(toFull[axis]);
  }
  double groupLatencyExcess(llvm::ArrayRef<unsigned> axes) const override {
    return full.groupLatencyExcess(map(axes));
  }
  bool allReducePaysLatencyTwice() const override {
    return full.allReducePaysLatencyTwice();
  }
  bool sequentialReduceScatterIsCheaper() const override {
    return full.sequentialReduceScatterIsCheaper();
  }
  bool permuteCostIsUniform() const override {
    return full.permuteCostIsUniform();
  }
  bool sameKindStepsCommute() const override {
    return full.sameKindStepsCommute();
  }
  bool axesInterchangeable(unsigned a, unsigned b) const override {
    return full.axesInterchangeable(toFull[a], toFull[b]);
  }
  bool groupCostIgnoresAxisOrder() const override {
    return full.groupCostIgnoresAxisOrder();
  }
  void appendFingerprint(std::string &out) const override {
    full.appendFingerprint(out);
  }

private:
  std::vector<unsigned> map(llvm::ArrayRef<unsigned> axes) const {
    std::vector<unsigned> out;
    for (unsigned a : axes)
      out.push_back(toFull[a]);
    return out;
  }
  const CostModel &full;
  std::vector<unsigned> toFull;
};

/// Axis renaming between the mesh and the mesh without its size-1 axes.
struct AxisMap {
  std::vector<unsigned> toFull; // reduced axis -> mesh axis
  std::vector<int> toReduced;   // mesh axis -> reduced axis, -1: size 1

  Layout project(const Layout &layout) const {
    Layout out = layout;
    auto keep = [&](AxisList &axes) {
      AxisList kept;
      for (unsigned a : axes)
        if (toReduced[a] >= 0)
          kept.push_back(unsigned(toReduced[a]));
      axes = std::move(kept);
    };
    for (AxisList &axes : out.dimAxes)
      keep(axes);
    keep(out.partialAxes);
    out.canonicalize();
    return out;
  }
  Layout lift(const Layout &layout) const {
    Layout out = layout;
    for (AxisList &axes : out.dimAxes)
      for (unsigned &a : axes)
        a = toFull[a];
    for (unsigned &a : out.partialAxes)
      a = toFull[a];
    out.canonicalize();
    return out;
  }
  Move lift(Move move) const {
    for (unsigned &a : move.axes)
      a = toFull[a];
    if (moveHasTarget(move.kind))
      move.permuteTarget = lift(move.permuteTarget);
    return move;
  }
};

/// The one move of `kind` that takes `from` to `to`, when there is one:
/// the axes follow from the two layouts (what a dim lost or gained, which
/// partial axes went or came).
std::optional<Move> directMove(const Mesh &mesh, MoveKind kind,
                               const Layout &from, const Layout &to) {
  auto isPrefix = [](llvm::ArrayRef<unsigned> a, llvm::ArrayRef<unsigned> b) {
    return a.size() <= b.size() && std::equal(a.begin(), a.end(), b.begin());
  };
  auto minus = [](llvm::ArrayRef<unsigned> a, llvm::ArrayRef<unsigned> b) {
    AxisList out;
    for (unsigned x : a)
      if (!llvm::is_contained(b, x))
        out.push_back(x);
    return out;
  };
  std::vector<unsigned> shrunk, grown; // dims that lost or gained axes
  for (unsigned d = 0; d < from.getRank(); ++d) {
    if (from.dimAxes[d] == to.dimAxes[d])
      continue;
    if (isPrefix(to.dimAxes[d], from.dimAxes[d]))
      shrunk.push_back(d);
    else if (isPrefix(from.dimAxes[d], to.dimAxes[d]))
      grown.push_back(d);
    else if (kind != MoveKind::Permute && kind != MoveKind::Redistribute)
      return std::nullopt;
  }
  // What the one dim that shrank lost, and the one that grew gained (both
  // at the minor end).
  std::vector<unsigned> lost, gained;
  if (shrunk.size() == 1)
    lost.assign(from.dimAxes[shrunk[0]].begin() + to.dimAxes[shrunk[0]].size(),
                from.dimAxes[shrunk[0]].end());
  if (grown.size() == 1)
    gained.assign(to.dimAxes[grown[0]].begin() + from.dimAxes[grown[0]].size(),
                  to.dimAxes[grown[0]].end());
  const bool onlyShrunk = shrunk.size() == 1 && grown.empty();
  const bool onlyGrown = grown.size() == 1 && shrunk.empty();
  switch (kind) {
  case MoveKind::AllGather:
    if (!onlyShrunk)
      return std::nullopt;
    return Move::allGather(lost, shrunk[0]);
  case MoveKind::AllSlice:
    if (!onlyGrown)
      return std::nullopt;
    return Move::allSlice(gained, grown[0]);
  case MoveKind::AllToAll:
    if (shrunk.size() != 1 || grown.size() != 1)
      return std::nullopt;
    return Move::allToAll(lost, shrunk[0], grown[0]);
  case MoveKind::ReduceScatter:
    if (!onlyGrown)
      return std::nullopt;
    return Move::reduceScatter(gained, grown[0], from.partialKind);
  case MoveKind::AllReduce:
    return Move::allReduce(minus(from.partialAxes, to.partialAxes),
                           from.partialKind);
  case MoveKind::ReplicateToPartial:
    return Move::replicateToPartial(minus(to.partialAxes, from.partialAxes),
                                    to.partialKind);
  case MoveKind::Permute:
    return Move::permute(mesh, from, to);
  case MoveKind::Redistribute:
    return Move::redistribute(to);
  }
  return std::nullopt;
}
} // namespace

/// The layout from which `move` (a collective or local step) would reach
/// `after`, taking its partial kind from `from` (the layout it started at):
/// `after` with the move's effect undone.
static std::optional<Layout> undo(const Move &move, const Layout &after,
                                  const Layout &from) {
  Layout x = after;
  auto dropTail = [&](int64_t d) {
    AxisList &axes = x.dimAxes[d];
    if (axes.size() < move.axes.size() ||
        !std::equal(move.axes.begin(), move.axes.end(),
                    axes.end() - move.axes.size()))
      return false;
    axes.resize(axes.size() - move.axes.size());
    return true;
  };
  auto removePartial = [&]() {
    for (unsigned a : move.axes)
      llvm::erase(x.partialAxes, a);
  };
  auto addPartial = [&]() {
    x.partialAxes.insert(x.partialAxes.end(), move.axes.begin(),
                         move.axes.end());
  };
  switch (move.kind) {
  case MoveKind::AllGather:
    x.dimAxes[move.dim].insert(x.dimAxes[move.dim].end(), move.axes.begin(),
                               move.axes.end());
    break;
  case MoveKind::AllSlice:
    if (!dropTail(move.dim))
      return std::nullopt;
    break;
  case MoveKind::AllToAll:
    if (!dropTail(move.toDim))
      return std::nullopt;
    x.dimAxes[move.dim].insert(x.dimAxes[move.dim].end(), move.axes.begin(),
                               move.axes.end());
    break;
  case MoveKind::ReduceScatter:
    if (!dropTail(move.dim))
      return std::nullopt;
    addPartial();
    break;
  case MoveKind::AllReduce:
    addPartial();
    break;
  case MoveKind::ReplicateToPartial:
    removePartial();
    break;
  default:
    return std::nullopt;
  }
  x.partialKind = from.partialKind;
  x.canonicalize();
  return x;
}

/// Folds the steps that touch only size-1 axes into a neighbour of the
/// plan where one step does both for no more cost: a step of the
/// neighbour's kind or another (on the cost model of semantics §3 the group's
/// size does not change, nor its slowest link unless a size-1 axis has a slower
/// one), or a neighbouring redistribute. So plans keep few steps.
static std::vector<Move> foldUnitSteps(const Mesh &mesh, const CostModel &model,
                                       const PlanRequest &request,
                                       std::vector<Move> moves,
                                       const Layout &source) {
  auto onlyUnitAxes = [&](const Move &m) {
    return m.kind != MoveKind::Redistribute &&
           llvm::all_of(m.axes,
                        [&](unsigned a) { return mesh.getAxisSize(a) == 1; });
  };
  auto bytesOf = [&](const Layout &layout) {
    return localBytes(mesh, layout, request.globalShape, request.elementBytes);
  };
  ExchangeCostEvaluator exchanges(model, request.globalShape,
                                  request.elementBytes);
  // The cost of `m` from `from`, or nullopt when it does not lead to `to`.
  auto costTo = [&](const Move &m, const Layout &from,
                    const Layout &to) -> std::optional<double> {
    Expected<Layout> next = applyMove(mesh, from, m, request.globalShape);
    if (!next) {
      llvm::consumeError(next.takeError());
      return std::nullopt;
    }
    if (*next != to)
      return std::nullopt;
    if (m.kind != MoveKind::Redistribute)
      return model.stepCost(m, bytesOf(from),
                            localStepBytes(mesh, from, to, m,
                                           request.globalShape,
                                           request.elementBytes));
    ExchangeCostEvaluator::Result ex;
    if (!exchanges.evaluate(from, to, ex))
      return std::nullopt;
    return ex.cost;
  };
  std::set<size_t> swappedAt;
  bool changed = true;
  while (changed) {
    changed = false;
    std::vector<Layout> before{source};
    for (const Move &m : moves) {
      Expected<Layout> next =
          applyMove(mesh, before.back(), m, request.globalShape);
      if (!next) {
        llvm::consumeError(next.takeError());
        return moves; // the caller's replay reports it
      }
      before.push_back(*next);
    }
    for (size_t i = 0; i + 1 < moves.size() && !changed; ++i) {
      const Move &a = moves[i], &b = moves[i + 1];
      bool aUnit = onlyUnitAxes(a), bUnit = onlyUnitAxes(b);
      if (!aUnit && !bUnit)
        continue;
      const Layout &from = before[i], &mid = before[i + 1], &to = before[i + 2];
      std::optional<Move> merged;
      if (from != to) {
        std::optional<double> aCost = costTo(a, from, mid);
        std::optional<double> bCost = costTo(b, mid, to);
        if (!aCost || !bCost)
          continue;
        // The neighbours' kinds first, then any other (an all_reduce of a
        // size-1 axis and a permute placing it in a dim make one
        // reduce_scatter).
        std::vector<MoveKind> kinds = {aUnit ? b.kind : a.kind,
                                       aUnit ? a.kind : b.kind};
        for (MoveKind kind :
             {MoveKind::ReduceScatter, MoveKind::AllReduce, MoveKind::AllGather,
              MoveKind::AllSlice, MoveKind::AllToAll,
              MoveKind::ReplicateToPartial, MoveKind::Permute})
          if (!llvm::is_contained(kinds, kind))
            kinds.push_back(kind);
        std::vector<Move> candidates;
        for (MoveKind kind : kinds)
          if (kind != MoveKind::Redistribute)
            if (std::optional<Move> m = directMove(mesh, kind, from, to))
              candidates.push_back(std::move(*m));
        // A redistribute absorbs a neighbour's size-1 axes; none is made
        // where the plan has none, as the search plans at most one, after
        // the reductions only, and must stay comparable with greedy's.
        if (a.kind == MoveKind::Redistribute ||
            b.kind == MoveKind::Redistribute)
          candidates.push_back(Move::redistribute(to));
        for (Move &m : candidates) {
          std::optional<double> cost = costTo(m, from, to);
          if (cost && !detail::costLess(*aCost + *bCost, *cost)) {
            merged = std::move(m);
            break;
          }
        }
        if (!merged)
          continue;
      }
      moves.erase(moves.begin() + i, moves.begin() + i + 2);
      if (merged)
        moves.insert(moves.begin() + i, *merged);
      changed = true;
    }
    // Nothing merges: move a step on size-1 axes one place earlier where
    // both orders reach the same layout at the same costs, so that it meets
    // other neighbours (each such step moves forward at most once per
    // position, so this ends).
    for (size_t i = moves.size(); i-- > 1 && !changed;) {
      const Move &m = moves[i - 1], &g = moves[i];
      if (!onlyUnitAxes(g) || onlyUnitAxes(m) || swappedAt.count(i))
        continue;
      const Layout &from = before[i - 1], &to = before[i + 1];
      std::optional<double> mCost = costTo(m, from, before[i]);
      std::optional<double> gCost = costTo(g, before[i], to);
      Expected<Layout> mid = applyMove(mesh, from, g, request.globalShape);
      if (!mid) {
        llvm::consumeError(mid.takeError());
        continue;
      }
      std::optional<double> gFirst = costTo(g, from, *mid);
      std::optional<double> mSecond = costTo(m, *mid, to);
      if (!mCost || !gCost || !gFirst || !mSecond ||
          detail::costLess(*mCost + *gCost, *gFirst + *mSecond))
        continue;
      std::swap(moves[i - 1], moves[i]);
      swappedAt.insert(i);
      changed = true;
    }
    // A permute that changes no coordinate moves earlier with a new target:
    // the layout `m` reaches `to` from.
    for (size_t i = moves.size(); i-- > 1 && !changed;) {
      const Move &m = moves[i - 1], &g = moves[i];
      if (!(g.kind == MoveKind::Permute && g.axes.empty()) ||
          moveHasTarget(m.kind) || swappedAt.count(i))
        continue;
      const Layout &from = before[i - 1], &to = before[i + 1];
      std::optional<Layout> x = undo(m, to, from);
      if (!x || *x == from)
        continue;
      Move relabel = Move::permute(mesh, from, *x);
      std::optional<Move> m2 = directMove(mesh, m.kind, *x, to);
      std::optional<double> mCost = costTo(m, from, before[i]);
      std::optional<double> rCost = costTo(relabel, from, *x);
      std::optional<double> m2Cost = m2 ? costTo(*m2, *x, to) : std::nullopt;
      if (!mCost || !rCost || !m2Cost || *rCost != 0 ||
          detail::costLess(*mCost, *m2Cost))
        continue;
      moves[i - 1] = relabel;
      moves[i] = *m2;
      swappedAt.insert(i);
      changed = true;
    }
  }
  return moves;
}

/// The step that does `move` (a step of the plan on the reduced mesh, its
/// axes renamed to the mesh's) from `cur`, a layout that may also hold
/// size-1 axes, leaving them where they are where it can: an all_gather or
/// all_to_all takes the size-1 axes after its first axis along with it (the
/// step must take a suffix of the dim), a permute or redistribute goes to
/// `preferred` (the target's placement) when it can. Cost no more than
/// `move`'s; std::nullopt when no such step exists.
static std::optional<Move> rideAlong(const Mesh &mesh, const CostModel &model,
                                     llvm::ArrayRef<int64_t> shape,
                                     const Move &move, const Layout &cur,
                                     const Layout &expectedProjection,
                                     const AxisMap &map, int64_t bytes,
                                     const Layout &preferred) {
  std::vector<Move> candidates;
  switch (move.kind) {
  case MoveKind::AllGather:
  case MoveKind::AllToAll: {
    const AxisList &axes = cur.dimAxes[move.dim];
    auto first = std::find(axes.begin(), axes.end(), move.axes.front());
    if (first == axes.end())
      return std::nullopt;
    Move m = move;
    m.axes.assign(first, axes.end());
    candidates.push_back(m);
    break;
  }
  case MoveKind::AllReduce: {
    // Reducing the size-1 partial axes too saves a step later.
    Move m = move;
    for (unsigned a : cur.partialAxes)
      if (map.toReduced[a] < 0)
        m.axes.push_back(a);
    candidates.push_back(m);
    candidates.push_back(move);
    break;
  }
  case MoveKind::Permute:
  case MoveKind::Redistribute: {
    // The size-1 partial axes stay partial (both moves keep the set).
    auto withUnitPartials = [&](Layout layout) {
      layout.partialAxes.erase(
          std::remove_if(layout.partialAxes.begin(), layout.partialAxes.end(),
                         [&](unsigned a) { return map.toReduced[a] < 0; }),
          layout.partialAxes.end());
      for (unsigned a : cur.partialAxes)
        if (map.toReduced[a] < 0)
          layout.partialAxes.push_back(a);
      if (cur.hasPartial())
        layout.partialKind = cur.partialKind;
      layout.canonicalize();
      return layout;
    };
    for (const Layout &to :
         {withUnitPartials(preferred), withUnitPartials(move.permuteTarget)}) {
      if (to == cur)
        continue;
      candidates.push_back(move.kind == MoveKind::Permute
                               ? Move::permute(mesh, cur, to)
                               : Move::redistribute(to));
    }
    break;
  }
  default:
    candidates.push_back(move);
  }
  // Size-1 axes change no block, so the local bytes (semantics §3b) of a
  // candidate are the move's: comparing what crosses the links suffices.
  double budget = model.stepCost(move, bytes, /*localBytes=*/0);
  for (const Move &m : candidates) {
    Expected<Layout> next = applyMove(mesh, cur, m, shape);
    if (!next) {
      llvm::consumeError(next.takeError());
      continue;
    }
    if (map.project(*next) != expectedProjection)
      continue;
    // A redistribute's price is its exchange, which size-1 axes leave alone.
    if (m.kind != MoveKind::Redistribute &&
        detail::costLess(budget, model.stepCost(m, bytes, /*localBytes=*/0)))
      continue;
    return m;
  }
  return std::nullopt;
}

std::optional<Expected<std::vector<Move>>>
dist::planner::detail::searchWithoutUnitAxes(const PlanRequest &request,
                                             const CostModel &model,
                                             SearchStats *stats,
                                             SearchFunction search,
                                             bool exact) {
  const Mesh &mesh = request.mesh;
  // Most meshes have no size-1 axis: nothing to set up for them.
  bool anyUnit = false;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
    anyUnit |= mesh.getAxisSize(a) == 1;
  if (!anyUnit)
    return std::nullopt;
  AxisMap map;
  std::vector<MeshAxis> kept;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    if (mesh.getAxisSize(a) == 1) {
      map.toReduced.push_back(-1);
      continue;
    }
    map.toReduced.push_back(int(map.toFull.size()));
    map.toFull.push_back(a);
    kept.push_back(mesh.getAxis(a));
  }
  if (kept.size() == mesh.getNumAxes())
    return std::nullopt;

  Layout source = request.source, target = request.target;
  source.canonicalize();
  target.canonicalize();
  if (source.hasSegments() || target.hasSegments())
    return std::nullopt;
  auto unitAxes = [&](llvm::ArrayRef<unsigned> axes) {
    std::vector<unsigned> out;
    for (unsigned a : axes)
      if (map.toReduced[a] < 0)
        out.push_back(a);
    return out;
  };
  const int64_t bytes =
      localBytes(mesh, source, request.globalShape, request.elementBytes);
  // Size-1 partial axes may have to be reduced on their own (a group of one
  // device: free in the cost model of semantics §3); a model that charges for
  // that plans on the full mesh.
  std::vector<unsigned> allUnits;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
    if (map.toReduced[a] < 0)
      allUnits.push_back(a);
  if (model.collectiveCost(MoveKind::AllReduce, allUnits, bytes) != 0)
    return std::nullopt;

  // The search proper, on the mesh without size-1 axes (none left: nothing
  // is split or partial there, so nothing to do).
  Layout reducedSource = map.project(source);
  Layout reducedTarget = map.project(target);
  std::vector<Move> reducedMoves;
  std::optional<Mesh> reducedMesh;
  if (!kept.empty() && reducedSource != reducedTarget) {
    Expected<Mesh> created =
        Mesh::create(kept, std::vector<int64_t>(mesh.getDevices().begin(),
                                                mesh.getDevices().end()));
    if (!created)
      return Expected<std::vector<Move>>(created.takeError());
    reducedMesh = std::move(*created);
    ReducedCostModel reducedModel(*reducedMesh, model, map.toFull);
    PlanRequest reduced(*reducedMesh, request.globalShape, request.elementBytes,
                        reducedSource, reducedTarget);
    reduced.strategy = request.strategy;
    reduced.costModel = &reducedModel;
    reduced.maxPeakBytes = request.maxPeakBytes;
    reduced.moves = request.moves;
    Expected<std::vector<Move>> inner = search(reduced, reducedModel, stats);
    if (!inner) {
      // Name the request the user made, not the reduced one.
      std::string why = llvm::toString(inner.takeError());
      return Expected<std::vector<Move>>(
          llvm::createStringError(llvm::inconvertibleErrorCode(),
                                  why + " (planned on " + reducedMesh->str() +
                                      ", the mesh without its size-1 axes)"));
    }
    reducedMoves = std::move(*inner);
  }

  // Replay the reduced plan on the mesh, the size-1 axes riding along where
  // a step can take them at no extra cost, else dropped by a permute that
  // changes no coordinate just before the step.
  std::vector<Move> moves;
  Layout cur = source;
  Layout reducedCur = reducedSource;
  for (size_t i = 0; i < reducedMoves.size(); ++i) {
    Expected<Layout> reducedNext = applyMove(
        *reducedMesh, reducedCur, reducedMoves[i], request.globalShape);
    if (!reducedNext)
      return Expected<std::vector<Move>>(reducedNext.takeError());
    Move lifted = map.lift(reducedMoves[i]);
    const Layout &preferred =
        i + 1 == reducedMoves.size() ? target : map.lift(*reducedNext);
    std::optional<Move> step =
        rideAlong(mesh, model, request.globalShape, lifted, cur, *reducedNext,
                  map, bytes, preferred);
    if (!step) {
      // Reduce the size-1 partial axes and drop the size-1 axes from the
      // dims: then the reduced plan's step applies as it is.
      if (std::vector<unsigned> unit = unitAxes(cur.partialAxes);
          !unit.empty()) {
        moves.push_back(Move::allReduce(unit, cur.partialKind));
        cur = cantFail(applyMove(mesh, cur, moves.back(), request.globalShape));
      }
      if (Layout dropped = map.lift(reducedCur); dropped != cur) {
        moves.push_back(Move::permute(mesh, cur, dropped));
        cur = dropped;
      }
      step = lifted;
    }
    Expected<Layout> next = applyMove(mesh, cur, *step, request.globalShape);
    if (!next)
      return Expected<std::vector<Move>>(next.takeError());
    moves.push_back(std::move(*step));
    cur = std::move(*next);
    reducedCur = std::move(*reducedNext);
  }

  // Epilogue: the size-1 partial axes the target does not have, those it
  // has, then the size-1 axes' places in the dims.
  std::vector<unsigned> curUnits = unitAxes(cur.partialAxes);
  std::vector<unsigned> targetUnits = unitAxes(target.partialAxes);
  bool kindChanges = cur.hasPartial() && target.hasPartial() &&
                     cur.partialKind != target.partialKind;
  std::vector<unsigned> reduce, add;
  for (unsigned a : curUnits)
    if (kindChanges || !llvm::is_contained(targetUnits, a))
      reduce.push_back(a);
  for (unsigned a : targetUnits)
    if (kindChanges || !llvm::is_contained(curUnits, a))
      add.push_back(a);
  if (!reduce.empty()) {
    moves.push_back(Move::allReduce(reduce, cur.partialKind));
    cur = cantFail(applyMove(mesh, cur, moves.back(), request.globalShape));
  }
  if (!add.empty()) {
    // The axes to make partial must be replicated first: move the size-1
    // axes to the target's places in the dims (which leave them out).
    Layout placed = target;
    placed.partialAxes = cur.partialAxes;
    placed.partialKind = cur.partialKind;
    if (placed != cur) {
      moves.push_back(Move::permute(mesh, cur, placed));
      cur = placed;
    }
    moves.push_back(Move::replicateToPartial(add, target.partialKind));
    cur = cantFail(applyMove(mesh, cur, moves.back(), request.globalShape));
  }
  if (cur != target)
    moves.push_back(Move::permute(mesh, cur, target));
  moves = foldUnitSteps(mesh, model, request, std::move(moves), source);
  // Every plan has at least as many steps as the reduced one (dropping the
  // size-1 axes from a plan's steps leaves a plan on the reduced mesh), so a
  // plan of that many steps is exact. Otherwise a step on size-1 axes alone
  // remains, and a cleverer placement might save it: the full mesh is
  // searched again within a small state limit, and its plan wins when that
  // search settles. (Past the limit the plan is still the cheapest, maybe a
  // free step longer than need be.)
  if (exact && moves.size() > reducedMoves.size()) {
    OptimalSearchOptions recheck = OptimalSearchOptions::threadDefaults();
    recheck.maxStates = kUnitAxesRecheckStates;
    recheck.maxEdges = kUnitAxesRecheckMoves;
    Expected<std::vector<Move>> full =
        searchOptimalWithin(request, model, stats, recheck);
    if (full)
      return full;
    llvm::consumeError(full.takeError());
  }
  return Expected<std::vector<Move>>(std::move(moves));
}
