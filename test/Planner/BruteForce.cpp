//===- BruteForce.cpp - Exhaustive plan search for small cases ------------===//

#include "BruteForce.h"

#include "dist/Planner/Redistribute.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <queue>

using namespace dist::planner;
using namespace dist::planner::test;

std::vector<Layout> dist::planner::test::allLayouts(const Mesh &mesh,
                                                    unsigned rank) {
  unsigned numAxes = mesh.getNumAxes();
  std::vector<Layout> result;
  // place[a]: -2 replicated, -1 partial, d >= 0 in dim d.
  std::vector<int> place(numAxes, -2);
  auto emit = [&]() {
    Layout base = Layout::replicated(rank);
    for (unsigned a = 0; a < numAxes; ++a) {
      if (place[a] == -1)
        base.partialAxes.push_back(a);
      else if (place[a] >= 0)
        base.dimAxes[place[a]].push_back(a);
    }
    // Every order within every dim.
    std::vector<Layout> ordered = {base};
    for (unsigned d = 0; d < rank; ++d) {
      std::vector<Layout> next;
      for (const Layout &l : ordered) {
        AxisList axes = l.dimAxes[d];
        std::sort(axes.begin(), axes.end());
        do {
          Layout c = l;
          c.dimAxes[d] = axes;
          next.push_back(c);
        } while (std::next_permutation(axes.begin(), axes.end()));
      }
      ordered = std::move(next);
    }
    for (Layout &l : ordered) {
      if (!l.hasPartial()) {
        result.push_back(l);
        continue;
      }
      for (ReductionKind kind :
           {ReductionKind::Sum, ReductionKind::Max, ReductionKind::Min,
            ReductionKind::Prod, ReductionKind::Avg}) {
        l.partialKind = kind;
        result.push_back(l);
      }
    }
  };
  auto rec = [&](auto &&self, unsigned a) -> void {
    if (a == numAxes) {
      emit();
      return;
    }
    for (int p = -2; p < int(rank); ++p) {
      place[a] = p;
      self(self, a + 1);
    }
  };
  rec(rec, 0);
  return result;
}

namespace {
/// Every ordered sequence of distinct elements of `pool` (length >= 1).
void orderedGroups(const std::vector<unsigned> &pool,
                   std::vector<std::vector<unsigned>> &out) {
  std::vector<unsigned> seq;
  std::vector<bool> used(pool.size(), false);
  auto rec = [&](auto &&self) -> void {
    for (size_t i = 0; i < pool.size(); ++i) {
      if (used[i])
        continue;
      used[i] = true;
      seq.push_back(pool[i]);
      out.push_back(seq);
      self(self);
      seq.pop_back();
      used[i] = false;
    }
  };
  rec(rec);
}

std::vector<std::vector<unsigned>> subsets(const std::vector<unsigned> &pool) {
  std::vector<std::vector<unsigned>> out;
  for (unsigned mask = 1; mask < (1u << pool.size()); ++mask) {
    std::vector<unsigned> s;
    for (size_t i = 0; i < pool.size(); ++i)
      if (mask >> i & 1)
        s.push_back(pool[i]);
    out.push_back(s);
  }
  return out;
}

/// Moves to try from `l` (applyMove decides which are valid).
std::vector<Move> candidateMoves(const Mesh &mesh, const Layout &l,
                                 const std::vector<Layout> &sameClass) {
  unsigned rank = l.getRank();
  std::vector<unsigned> replicated, partial;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    if (l.isPartial(a))
      partial.push_back(a);
    else if (l.isReplicated(a))
      replicated.push_back(a);
  }
  std::vector<Move> moves;
  for (unsigned d = 0; d < rank; ++d) {
    const auto &axes = l.dimAxes[d];
    for (size_t k = 1; k <= axes.size(); ++k) {
      std::vector<unsigned> suffix(axes.end() - k, axes.end());
      moves.push_back(Move::allGather(suffix, d));
      for (unsigned e = 0; e < rank; ++e)
        if (e != d)
          moves.push_back(Move::allToAll(suffix, d, e));
    }
  }
  std::vector<std::vector<unsigned>> groups;
  orderedGroups(replicated, groups);
  for (const auto &g : groups)
    for (unsigned d = 0; d < rank; ++d)
      moves.push_back(Move::allSlice(g, d));
  groups.clear();
  orderedGroups(partial, groups);
  for (const auto &g : groups)
    for (unsigned d = 0; d < rank; ++d)
      moves.push_back(Move::reduceScatter(g, d, l.partialKind));
  for (const auto &s : subsets(partial))
    moves.push_back(Move::allReduce(s, l.partialKind));
  for (const auto &s : subsets(replicated))
    for (ReductionKind kind :
         {ReductionKind::Sum, ReductionKind::Max, ReductionKind::Min,
          ReductionKind::Prod, ReductionKind::Avg})
      moves.push_back(Move::replicateToPartial(s, kind));
  for (const Layout &t : sameClass)
    if (t != l)
      moves.push_back(Move::permute(mesh, l, t));
  return moves;
}

std::string classKey(const Mesh &mesh, const Layout &l) {
  std::string key;
  for (unsigned d = 0; d < l.getRank(); ++d)
    key += std::to_string(l.shardCount(mesh, d)) + ",";
  key += "|";
  for (unsigned a : l.partialAxes)
    key += std::to_string(a) + ",";
  if (l.hasPartial())
    key += stringifyReductionKind(l.partialKind).str();
  return key;
}
} // namespace

std::optional<BruteForceResult>
dist::planner::test::bruteForcePlan(const PlanRequest &request,
                                    const CostModel &model,
                                    RedistributeTargets targets) {
  const Mesh &mesh = request.mesh;
  unsigned rank = request.globalShape.size();
  std::vector<Layout> layouts = allLayouts(mesh, rank);
  std::map<std::string, size_t> indexOf;
  std::map<std::string, std::vector<Layout>> classes;
  for (size_t i = 0; i < layouts.size(); ++i) {
    indexOf[printLayout(mesh, layouts[i])] = i;
    classes[classKey(mesh, layouts[i])].push_back(layouts[i]);
  }
  auto tol = [](double a, double b) {
    return 1e-12 * std::max(std::fabs(a), std::fabs(b)) + 1e-24;
  };
  // (cost, steps) with the planner's tolerance on cost.
  auto better = [&](double c1, unsigned s1, double c2, unsigned s2) {
    if (c1 < c2 - tol(c1, c2))
      return true;
    return std::fabs(c1 - c2) <= tol(c1, c2) && s1 < s2;
  };
  // With the planner's redistribute targets, a state also records whether
  // a redistribute may still come (only partial reductions before it; see
  // OptimalSearch.cpp): node = 2 * layout + closed.
  const bool planner =
      request.moves == MoveSet::All && targets == RedistributeTargets::Planner;
  size_t n = layouts.size() * 2;
  std::vector<double> cost(n, INFINITY);
  std::vector<unsigned> steps(n, ~0u);
  std::vector<bool> done(n, false);
  std::vector<size_t> parent(n, n);
  std::vector<std::string> via(n);
  Layout source = request.source, target = request.target;
  source.canonicalize();
  target.canonicalize();
  size_t s = 2 * indexOf.at(printLayout(mesh, source)) + (planner ? 0 : 1);
  size_t t = indexOf.at(printLayout(mesh, target));
  int64_t sourceBytes =
      localBytes(mesh, source, request.globalShape, request.elementBytes);
  if (request.maxPeakBytes && sourceBytes > *request.maxPeakBytes)
    return std::nullopt;
  cost[s] = 0;
  steps[s] = 0;
  SameMeshLinks links(model);
  // Plain O(V^2) Dijkstra: with the tolerance, "smallest" is not a strict
  // weak order, and V is small.
  while (true) {
    size_t u = n;
    for (size_t i = 0; i < n; ++i)
      if (!done[i] && cost[i] != INFINITY &&
          (u == n || better(cost[i], steps[i], cost[u], steps[u])))
        u = i;
    if (u == n)
      break;
    done[u] = true;
    if (u / 2 == t) {
      BruteForceResult result{cost[u], steps[u], {}};
      for (size_t v = u; v != s; v = parent[v])
        result.moves.insert(result.moves.begin(), via[v]);
      return result;
    }
    const Layout &l = layouts[u / 2];
    const bool closed = u % 2 == 1;
    int64_t before =
        localBytes(mesh, l, request.globalShape, request.elementBytes);
    std::vector<Move> moves =
        candidateMoves(mesh, l, classes[classKey(mesh, l)]);
    // Point-to-point: a redistribute to every other layout with the same
    // partial axes and kind, or to the planner's candidates.
    if (request.moves == MoveSet::All && targets == RedistributeTargets::Every)
      for (const Layout &other : layouts)
        if (other.partialAxes == l.partialAxes &&
            (!l.hasPartial() || other.partialKind == l.partialKind) &&
            other != l)
          moves.push_back(Move::redistribute(other));
    if (planner && !closed)
      for (const Layout &to : redistributeCandidates(mesh, l, target))
        moves.push_back(Move::redistribute(to));
    for (const Move &move : moves) {
      llvm::Expected<Layout> next =
          applyMove(mesh, l, move, request.globalShape);
      if (!next) {
        llvm::consumeError(next.takeError());
        continue;
      }
      int64_t after =
          localBytes(mesh, *next, request.globalShape, request.elementBytes);
      if (request.maxPeakBytes && before + after > *request.maxPeakBytes)
        continue;
      bool keepsOpen = !closed && (move.kind == MoveKind::ReduceScatter ||
                                   move.kind == MoveKind::AllReduce);
      size_t v = 2 * indexOf.at(printLayout(mesh, *next)) +
                 (planner && keepsOpen ? 0 : 1);
      double stepCost = model.stepCost(move, before,
                                       localStepBytes(mesh, l, *next, move,
                                                      request.globalShape,
                                                      request.elementBytes));
      if (move.kind == MoveKind::Redistribute) {
        llvm::Expected<Exchange> ex =
            computeExchange(mesh, l, mesh, *next, request.globalShape,
                            request.elementBytes, /*sameMesh=*/true, links);
        if (!ex) {
          llvm::consumeError(ex.takeError());
          continue;
        }
        stepCost = ex->cost;
      }
      double c = cost[u] + stepCost;
      if (!done[v] && better(c, steps[u] + 1, cost[v], steps[v])) {
        cost[v] = c;
        steps[v] = steps[u] + 1;
        parent[v] = u;
        via[v] = printMove(mesh, move) + " -> " + printLayout(mesh, *next);
      }
    }
  }
  return std::nullopt;
}
