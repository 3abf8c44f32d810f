//===- SegmentedSearch.cpp - plans between layouts with segments ----------===//
//
// Requests whose source or target interleaves a dim (semantics §2 `segments`)
// are searched here, on unpacked layouts: the packed search of
// OptimalSearch.cpp has no room for segment lists, and these requests are
// few and small (a fused weight on a TP mesh).
//
// The search is Dijkstra over layouts (ties: fewer steps) with every
// collective of semantics §3 that applies, segment by segment on segmented
// dims: all_gather / all_to_all of any minor-most run of a dim's axes,
// all_slice / reduce_scatter of any ordered set of replicated / partial
// axes, all_reduce of any set of partial axes, replicate_to_partial of the
// target's partial axes; a split onto a dim without axes may give it the
// segments the source or the target has there. Unless the request allows
// collectives only, a redistribute to the target (with the state's partial
// axes) is an edge from every state.
//
// Its result is compared with plans through a few contiguous layouts (the
// ends without segments, the replicas), whose contiguous legs the packed
// search plans exactly (permutes and exchanges included); the detour
// through a full replica is one of them, so no plan is dearer than it.
// Past kMaxSegmentedStates expanded states the search stops and those
// plans are what remains.
//
//===----------------------------------------------------------------------===//

#include "Search/Search.h"

#include "dist/Planner/Redistribute.h"

#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <queue>

using namespace dist::planner;
using dist::planner::detail::costEqual;
using dist::planner::detail::costLess;
using llvm::Error;
using llvm::Expected;

namespace {

constexpr size_t kMaxSegmentedStates = 2000;
/// Slices and reduce-scatters act on at most this many axes in one step
/// (more make the same plan in more steps); meshes of up to 3 axes lose
/// nothing.
constexpr size_t kMaxStepAxes = 3;

Error fail(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
}

/// Every ordered selection of one to kMaxStepAxes of `axes`.
void orderedSubsets(
    const std::vector<unsigned> &axes,
    const std::function<void(const std::vector<unsigned> &)> &f) {
  std::vector<unsigned> current;
  std::vector<bool> used(axes.size(), false);
  std::function<void()> visit = [&] {
    if (!current.empty())
      f(current);
    if (current.size() == kMaxStepAxes)
      return;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (used[i])
        continue;
      used[i] = true;
      current.push_back(axes[i]);
      visit();
      current.pop_back();
      used[i] = false;
    }
  };
  visit();
}

/// Every non-empty subset of `axes`, in mesh order.
void subsets(const std::vector<unsigned> &axes,
             const std::function<void(const std::vector<unsigned> &)> &f) {
  for (uint64_t mask = 1; mask < (uint64_t(1) << axes.size()); ++mask) {
    std::vector<unsigned> chosen;
    for (size_t i = 0; i < axes.size(); ++i)
      if (mask >> i & 1)
        chosen.push_back(axes[i]);
    f(chosen);
  }
}

class SegmentedSearch {
public:
  SegmentedSearch(const PlanRequest &request, const CostModel &model,
                  const Layout &source, const Layout &target)
      : request(request), mesh(request.mesh), model(model), source(source),
        target(target), shape(request.globalShape) {
    // The segment lists a split may give each dim.
    segmentOptions.resize(shape.size());
    for (const Layout *layout : {&source, &target})
      for (unsigned d = 0; d < shape.size(); ++d)
        if (layout->isSegmented(d) &&
            !llvm::is_contained(segmentOptions[d], layout->segments[d]))
          segmentOptions[d].push_back(layout->segments[d]);
  }

  /// The cheapest moves, or nullopt when the search gave up (too many
  /// states) or found nothing.
  std::optional<std::vector<Move>> run(SearchStats *stats);

private:
  struct Node {
    Layout layout;
    int64_t bytes;
    double cost;
    unsigned steps;
    unsigned exchanges;
    int64_t parent;
    Move move;
    bool closed = false;
  };

  void expand(int64_t index);
  void relax(int64_t from, Move move);
  int64_t intern(const Layout &layout);

  const PlanRequest &request;
  const Mesh &mesh;
  const CostModel &model;
  const Layout &source, &target;
  std::vector<int64_t> shape;
  std::vector<std::vector<std::vector<int64_t>>> segmentOptions;

  std::vector<Node> nodes;
  llvm::StringMap<int64_t> index;
  using Entry = std::tuple<double, unsigned, unsigned, int64_t>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> open;
  uint64_t generated = 0;
};

int64_t SegmentedSearch::intern(const Layout &layout) {
  std::string key = printLayout(mesh, layout);
  auto [it, inserted] = index.try_emplace(key, int64_t(nodes.size()));
  if (inserted) {
    Node node{layout,
              localBytes(mesh, layout, shape, request.elementBytes),
              std::numeric_limits<double>::infinity(),
              0,
              0,
              -1,
              Move()};
    nodes.push_back(std::move(node));
  }
  return it->second;
}

void SegmentedSearch::relax(int64_t from, Move move) {
  ++generated;
  const Layout &layout = nodes[from].layout;
  Expected<Layout> next = applyMove(mesh, layout, move, shape);
  if (!next) {
    llvm::consumeError(next.takeError());
    return;
  }
  double cost;
  if (move.kind == MoveKind::Redistribute) {
    SameMeshLinks links(model);
    Expected<Exchange> exchange =
        computeExchange(mesh, layout, mesh, *next, shape, request.elementBytes,
                        /*sameMesh=*/true, links);
    if (!exchange) {
      llvm::consumeError(exchange.takeError());
      return;
    }
    cost = exchange->cost;
  } else {
    cost = model.stepCost(
        move,
        collectiveInputBytes(mesh, layout, *next, move, shape,
                             request.elementBytes),
        localStepBytes(mesh, layout, *next, move, shape, request.elementBytes));
  }
  int64_t to = intern(*next);
  Node &source = nodes[from];
  Node &dest = nodes[to];
  if (request.maxPeakBytes && source.bytes + dest.bytes > *request.maxPeakBytes)
    return;
  double total = source.cost + cost;
  unsigned steps = source.steps + 1;
  // Ties: fewer steps, then fewer exchanges (a collective is the simpler
  // and better-tuned operation).
  unsigned exchanges =
      source.exchanges + (move.kind == MoveKind::Redistribute ? 1 : 0);
  bool reached = !std::isinf(dest.cost);
  if (dest.closed || (reached && (costLess(dest.cost, total) ||
                                  (costEqual(dest.cost, total) &&
                                   std::tie(dest.steps, dest.exchanges) <=
                                       std::tie(steps, exchanges)))))
    return;
  dest.cost = total;
  dest.steps = steps;
  dest.exchanges = exchanges;
  dest.parent = from;
  dest.move = std::move(move);
  open.emplace(total, steps, exchanges, to);
}

void SegmentedSearch::expand(int64_t at) {
  // Copied: relax() may grow `nodes`.
  Layout layout = nodes[at].layout;
  unsigned rank = shape.size();
  std::vector<unsigned> replicated, partial;
  for (unsigned axis = 0; axis < mesh.getNumAxes(); ++axis) {
    if (layout.isPartial(axis))
      partial.push_back(axis);
    else if (layout.isReplicated(axis))
      replicated.push_back(axis);
  }
  // The segment lists a split onto `dim` may give it.
  auto withSegments = [&](Move move, unsigned dim) {
    relax(at, move);
    if (!layout.dimAxes[dim].empty())
      return;
    for (const std::vector<int64_t> &segments : segmentOptions[dim]) {
      Move segmented = move;
      segmented.segments = segments;
      relax(at, std::move(segmented));
    }
  };
  for (unsigned d = 0; d < rank; ++d) {
    const AxisList &axes = layout.dimAxes[d];
    for (size_t j = 1; j <= axes.size(); ++j) {
      std::vector<unsigned> suffix(axes.end() - j, axes.end());
      relax(at, Move::allGather(suffix, d));
      for (unsigned e = 0; e < rank; ++e)
        if (e != d)
          withSegments(Move::allToAll(suffix, d, e), e);
    }
  }
  orderedSubsets(replicated, [&](const std::vector<unsigned> &axes) {
    for (unsigned d = 0; d < rank; ++d)
      withSegments(Move::allSlice(axes, d), d);
  });
  orderedSubsets(partial, [&](const std::vector<unsigned> &axes) {
    for (unsigned d = 0; d < rank; ++d)
      withSegments(Move::reduceScatter(axes, d, layout.partialKind), d);
  });
  subsets(partial, [&](const std::vector<unsigned> &axes) {
    relax(at, Move::allReduce(axes, layout.partialKind));
  });
  std::vector<unsigned> becomePartial;
  for (unsigned axis : target.partialAxes)
    if (layout.isReplicated(axis))
      becomePartial.push_back(axis);
  if (!layout.hasPartial() || layout.partialKind == target.partialKind)
    subsets(becomePartial, [&](const std::vector<unsigned> &axes) {
      relax(at, Move::replicateToPartial(axes, target.partialKind));
    });
  if (request.moves == MoveSet::All) {
    Layout to = target;
    to.partialAxes = layout.partialAxes;
    to.partialKind = layout.partialKind;
    to.canonicalize();
    if (to != layout)
      relax(at, Move::redistribute(to));
  }
}

std::optional<std::vector<Move>> SegmentedSearch::run(SearchStats *stats) {
  int64_t start = intern(source);
  nodes[start].cost = 0;
  open.emplace(0.0, 0u, 0u, start);
  size_t expanded = 0;
  std::optional<std::vector<Move>> result;
  while (!open.empty()) {
    auto [cost, steps, exchanges, at] = open.top();
    open.pop();
    if (nodes[at].closed || cost != nodes[at].cost ||
        steps != nodes[at].steps || exchanges != nodes[at].exchanges)
      continue;
    nodes[at].closed = true;
    if (nodes[at].layout == target) {
      std::vector<Move> moves;
      for (int64_t i = at; nodes[i].parent >= 0; i = nodes[i].parent)
        moves.push_back(nodes[i].move);
      std::reverse(moves.begin(), moves.end());
      result = std::move(moves);
      break;
    }
    if (++expanded > kMaxSegmentedStates)
      break;
    expand(at);
  }
  if (stats) {
    stats->expanded += expanded;
    stats->generated += generated;
    stats->states += nodes.size();
  }
  return result;
}

/// A candidate plan, priced by replaying it.
struct Candidate {
  std::vector<Move> moves;
  Plan plan;
};

/// Whether `a` beats `b`: cheaper, then fewer steps, then fewer exchanges.
bool better(const Candidate &a, const Candidate &b) {
  if (!costEqual(a.plan.cost, b.plan.cost))
    return costLess(a.plan.cost, b.plan.cost);
  if (a.moves.size() != b.moves.size())
    return a.moves.size() < b.moves.size();
  auto exchanges = [](const std::vector<Move> &moves) {
    return llvm::count_if(
        moves, [](const Move &m) { return m.kind == MoveKind::Redistribute; });
  };
  return exchanges(a.moves) < exchanges(b.moves);
}

/// Keeps `moves` in `best` when they replay from request.source to
/// request.target and beat it.
void consider(const PlanRequest &request, std::vector<Move> moves,
              std::optional<Candidate> &best) {
  Candidate candidate{std::move(moves), Plan()};
  for (const Move &m : candidate.moves) {
    PlanStep step;
    step.move = m;
    candidate.plan.steps.push_back(std::move(step));
  }
  if (Error e = replayPlan(request, candidate.plan)) {
    llvm::consumeError(std::move(e));
    return;
  }
  if (!best || better(candidate, *best))
    best = std::move(candidate);
}

/// The direct plans between two layouts, at least one of them segmented:
/// the search above, and one redistribute when the partial axes agree.
std::optional<Candidate> directPlan(const PlanRequest &request,
                                    const CostModel &model,
                                    SearchStats *stats) {
  std::optional<Candidate> best;
  if (std::optional<std::vector<Move>> searched =
          SegmentedSearch(request, model, request.source, request.target)
              .run(stats))
    consider(request, std::move(*searched), best);
  const Layout &source = request.source, &target = request.target;
  if (request.moves == MoveSet::All &&
      source.partialAxes == target.partialAxes &&
      (!source.hasPartial() || source.partialKind == target.partialKind)) {
    Layout to = target;
    to.partialKind = source.partialKind;
    consider(request, {Move::redistribute(to)}, best);
  }
  return best;
}

/// Plans between layouts at least one of which has segments: the direct
/// plans, and (above `kMaxDetourDepth` nesting levels no more) plans through
/// a few contiguous layouts, whose legs are planned the same way.
class SegmentedPlanner {
public:
  SegmentedPlanner(const PlanRequest &request, const CostModel &model,
                   SearchStats *stats)
      : request(request), model(model), stats(stats) {}

  std::optional<Candidate> plan(const Layout &from, const Layout &to,
                                unsigned depth) {
    PlanRequest sub = request;
    sub.source = from;
    sub.target = to;
    std::optional<Candidate> best = directPlan(sub, model, stats);
    if (depth >= kMaxDetourDepth)
      return best;
    // Through contiguous layouts the packed search plans exactly (permutes
    // and exchanges included): the ends without segments, the replica with
    // the target's partial values, and the full replica. The detour through
    // a replica is one of them, so no plan is dearer than it.
    std::vector<Layout> mids;
    auto addMid = [&](Layout mid) {
      mid.segments.clear();
      mid.canonicalize();
      if (mid != from && mid != to && !llvm::is_contained(mids, mid))
        mids.push_back(std::move(mid));
    };
    addMid(from);
    addMid(to);
    Layout replicated = Layout::replicated(to.getRank());
    addMid(replicated);
    replicated.partialAxes = to.partialAxes;
    replicated.partialKind = to.partialKind;
    addMid(replicated);
    for (const Layout &mid : mids) {
      std::optional<std::vector<Move>> head = leg(from, mid, depth + 1);
      if (!head)
        continue;
      std::optional<std::vector<Move>> tail = leg(mid, to, depth + 1);
      if (!tail)
        continue;
      head->insert(head->end(), tail->begin(), tail->end());
      consider(sub, std::move(*head), best);
    }
    return best;
  }

private:
  static constexpr unsigned kMaxDetourDepth = 2;

  /// One leg's moves: the packed search when neither end has segments.
  /// Memoized: the same legs recur through different intermediates.
  std::optional<std::vector<Move>> leg(const Layout &from, const Layout &to,
                                       unsigned depth) {
    if (from == to)
      return std::vector<Move>();
    std::string key = std::to_string(depth) + printLayout(request.mesh, from) +
                      "->" + printLayout(request.mesh, to);
    if (auto it = legs.find(key); it != legs.end())
      return it->second;
    std::optional<std::vector<Move>> moves;
    if (!from.hasSegments() && !to.hasSegments()) {
      PlanRequest sub = request;
      sub.source = from;
      sub.target = to;
      Expected<Plan> plan = planReshard(sub, stats);
      if (plan) {
        moves.emplace();
        for (PlanStep &step : plan->steps)
          moves->push_back(std::move(step.move));
      } else {
        llvm::consumeError(plan.takeError());
      }
    } else if (std::optional<Candidate> best = plan(from, to, depth)) {
      moves = std::move(best->moves);
    }
    legs[key] = moves;
    return moves;
  }

  const PlanRequest &request;
  const CostModel &model;
  SearchStats *stats;
  std::map<std::string, std::optional<std::vector<Move>>> legs;
};

} // namespace

Expected<std::vector<Move>> dist::planner::detail::searchSegmented(
    const PlanRequest &request, const CostModel &model, const Layout &source,
    const Layout &target, SearchStats *stats) {
  if (source == target)
    return std::vector<Move>();
  std::optional<Candidate> best =
      SegmentedPlanner(request, model, stats).plan(source, target, 0);
  if (!best)
    return fail("no plan from " + printLayout(request.mesh, source) + " to " +
                printLayout(request.mesh, target) +
                (request.moves == MoveSet::Collective ? " with collectives only"
                                                      : std::string()));
  return std::move(best->moves);
}
