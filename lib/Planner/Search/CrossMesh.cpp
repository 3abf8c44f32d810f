//===- CrossMesh.cpp - Planning a reshard onto another mesh ---------------===//
//
// A cross-mesh plan (semantics §3a) is: moves on the source mesh from the
// source to some layout S, one redistribute from S onto the target mesh giving
// some layout X, then moves on the target mesh from X to the target. S and X
// are never partial (a partial tensor cannot leave its mesh: its contributions
// are summed on the ranks that hold them), so the search is over pairs of
// non-partial layouts:
//
//   cost = d_src(source -> S) + transfer(S -> X) + d_dst(X -> target)
//
// d_src and d_dst are ordinary same-mesh plans (the exact A* with every move
// the request allows), transfer is the exact exchange. "Reduce-scatter before
// sending" is an S; "send 1/k to each replica, then all-gather on the target"
// is an X; "gather first" is S = replicated. Pairs are visited in order of
// d_src + d_dst + a bound on the transfer, and the visit stops once that sum
// reaches the best plan found: the result is optimal over all such plans.
//
// Both meshes' non-partial layouts are enumerated (axes of size 1 stay
// replicated: placing them moves nothing). Up to kMaxCandidates per mesh
// that is every such layout; past it (meshes of many axes and tensors of
// high rank), the candidates are the layouts a single all_gather or
// all_slice away from the source (after its reductions) and from the
// target, plus the fully replicated one, and the plan is the best over
// those.
//
//===----------------------------------------------------------------------===//

#include "Search/CrossMesh.h"
#include "Search/Search.h"

#include "dist/Planner/Redistribute.h"

#include <algorithm>
#include <functional>
#include <limits>

using namespace dist::planner;
using namespace dist::planner::detail;

static constexpr size_t kMaxCandidates = 4096;

/// Every non-partial layout of `rank` dims on `mesh`, with size-1 axes left
/// replicated; stops (returning false) past `limit` layouts.
static bool enumerateLayouts(const Mesh &mesh, size_t rank, size_t limit,
                             std::vector<Layout> &out) {
  std::vector<unsigned> axes;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
    if (mesh.getAxisSize(a) > 1)
      axes.push_back(a);
  // slot[i]: -1 (replicated) or the dim axis i splits; then every order of
  // the axes within each dim.
  std::vector<int> slot(axes.size(), -1);
  std::function<bool(size_t)> assign = [&](size_t i) -> bool {
    if (i == axes.size()) {
      llvm::SmallVector<AxisList, 4> dims(rank);
      for (size_t k = 0; k < axes.size(); ++k)
        if (slot[k] >= 0)
          dims[slot[k]].push_back(axes[k]);
      // Odometer over the permutations of every dim's list.
      std::function<bool(size_t)> order = [&](size_t d) -> bool {
        if (d == rank) {
          if (out.size() >= limit)
            return false;
          Layout l = Layout::replicated(rank);
          l.dimAxes = dims;
          out.push_back(std::move(l));
          return true;
        }
        std::sort(dims[d].begin(), dims[d].end());
        do {
          if (!order(d + 1))
            return false;
        } while (std::next_permutation(dims[d].begin(), dims[d].end()));
        return true;
      };
      return order(0);
    }
    for (int s = -1; s < int(rank); ++s) {
      slot[i] = s;
      if (!assign(i + 1))
        return false;
    }
    return true;
  };
  return assign(0);
}

/// The fallback candidates of a mesh: `anchor`, every layout one gather or
/// one slice of a single axis away from it, and the replicated layout.
static std::vector<Layout> neighbourhood(const Mesh &mesh, Layout anchor) {
  anchor.partialAxes.clear();
  anchor.canonicalize();
  size_t rank = anchor.getRank();
  std::vector<Layout> out = {anchor, Layout::replicated(rank)};
  for (unsigned d = 0; d < rank; ++d)
    if (!anchor.dimAxes[d].empty()) {
      Layout l = anchor;
      l.dimAxes[d].pop_back();
      out.push_back(l);
    }
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
    if (mesh.getAxisSize(a) > 1 && anchor.isReplicated(a))
      for (unsigned d = 0; d < rank; ++d) {
        Layout l = anchor;
        l.dimAxes[d].push_back(a);
        out.push_back(l);
      }
  return out;
}

/// A same-mesh sub-request of `request`: its strategy, moves, shape, peak.
static PlanRequest subRequest(const PlanRequest &request, const Mesh &mesh,
                              const CostModel &model, const Layout &from,
                              const Layout &to) {
  PlanRequest sub(mesh, request.globalShape, request.elementBytes, from, to);
  sub.strategy = request.strategy;
  sub.costModel = &model;
  sub.maxPeakBytes = request.maxPeakBytes;
  sub.moves = request.moves;
  return sub;
}

namespace {
struct Side {
  Layout layout;
  std::vector<Move> moves;
  double cost = 0;
  int64_t bytes = 0; // local bytes of `layout`
};
} // namespace

llvm::Expected<std::vector<Move>> dist::planner::detail::searchCrossMesh(
    const PlanRequest &request, const CostModel &srcModel,
    const CostModel &dstModel, SearchStats *stats) {
  const Mesh &srcMesh = request.mesh;
  const Mesh &dstMesh = *request.targetMesh;
  const size_t rank = request.globalShape.size();
  Layout source = request.source, target = request.target;
  source.canonicalize();
  target.canonicalize();

  std::vector<Layout> srcCandidates, dstCandidates;
  if (!enumerateLayouts(srcMesh, rank, kMaxCandidates, srcCandidates))
    srcCandidates = neighbourhood(srcMesh, source);
  if (!enumerateLayouts(dstMesh, rank, kMaxCandidates, dstCandidates))
    dstCandidates = neighbourhood(dstMesh, target);

  // The plan is built from plans of the two halves: each one a search.
  auto plan = [&](const Mesh &mesh, const CostModel &model, const Layout &from,
                  const Layout &to, Side &side) -> bool {
    side.bytes =
        localBytes(mesh, to, request.globalShape, request.elementBytes);
    if (from == to)
      return true;
    PlanRequest sub = subRequest(request, mesh, model, from, to);
    llvm::Expected<Plan> p = planReshard(sub, stats);
    if (!p) {
      llvm::consumeError(p.takeError()); // unreachable or too large
      return false;
    }
    side.cost = p->cost;
    for (PlanStep &step : p->steps)
      side.moves.push_back(std::move(step.move));
    return true;
  };
  std::vector<Side> before, after;
  for (Layout &s : srcCandidates) {
    Side side;
    side.layout = std::move(s);
    if (plan(srcMesh, srcModel, source, side.layout, side))
      before.push_back(std::move(side));
  }
  for (Layout &x : dstCandidates) {
    Side side;
    side.layout = std::move(x);
    if (plan(dstMesh, dstModel, side.layout, target, side)) {
      // `bytes` of the target side is the layout right after the transfer.
      side.bytes = localBytes(dstMesh, side.layout, request.globalShape,
                              request.elementBytes);
      after.push_back(std::move(side));
    }
  }

  AxisCostParams transfer = transferParamsOf(request, srcModel, dstModel);
  TransferLinks links(transfer, transferLocalRate(srcModel, dstModel));
  bool disjoint = true;
  for (int64_t i = 0; i < dstMesh.getNumDevices() && disjoint; ++i)
    disjoint = srcMesh.coordinateOfRank(dstMesh.rankOfIndex(i)).empty();
  // With no rank in both meshes, every target device receives its whole
  // block in the transfer (the first block is the largest).
  auto transferFloor = [&](const Layout &x) {
    if (!disjoint)
      return 0.0;
    double elements = 1;
    for (unsigned d = 0; d < rank; ++d) {
      double length = 0;
      for (const BlockPiece &run :
           blockPieces(dstMesh, x, request.globalShape, d, /*shard=*/0))
        length += double(run.global.size());
      elements *= length;
    }
    return elements == 0
               ? 0.0
               : transfer.alpha +
                     elements * double(request.elementBytes) * transfer.beta;
  };

  struct Pair {
    double floor;
    size_t s, x;
  };
  std::vector<Pair> pairs;
  pairs.reserve(before.size() * after.size());
  std::vector<double> floors(after.size());
  for (size_t x = 0; x < after.size(); ++x)
    floors[x] = transferFloor(after[x].layout);
  for (size_t s = 0; s < before.size(); ++s)
    for (size_t x = 0; x < after.size(); ++x) {
      int64_t peak = before[s].bytes + after[x].bytes;
      if (request.maxPeakBytes && peak > *request.maxPeakBytes)
        continue;
      pairs.push_back({before[s].cost + after[x].cost + floors[x], s, x});
    }
  std::stable_sort(
      pairs.begin(), pairs.end(),
      [](const Pair &a, const Pair &b) { return a.floor < b.floor; });

  double bestCost = std::numeric_limits<double>::infinity();
  size_t bestSteps = ~size_t(0);
  const Pair *best = nullptr;
  for (const Pair &pair : pairs) {
    if (costLess(bestCost, pair.floor))
      break;
    const Side &s = before[pair.s], &x = after[pair.x];
    llvm::Expected<Exchange> ex =
        computeExchange(srcMesh, s.layout, dstMesh, x.layout,
                        request.globalShape, request.elementBytes,
                        /*sameMesh=*/false, links);
    if (!ex) {
      llvm::consumeError(ex.takeError());
      continue;
    }
    double cost = s.cost + ex->cost + x.cost;
    size_t steps = s.moves.size() + 1 + x.moves.size();
    if (costLess(cost, bestCost) ||
        (costEqual(cost, bestCost) && steps < bestSteps)) {
      bestCost = cost;
      bestSteps = steps;
      best = &pair;
    }
  }
  if (!best)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "no plan moves " + printLayout(srcMesh, source) + " on mesh " +
            srcMesh.str() + " to " + printLayout(dstMesh, target) +
            " on mesh " + dstMesh.str() +
            (request.maxPeakBytes ? " within max_peak_bytes = " +
                                        std::to_string(*request.maxPeakBytes)
                                  : std::string()));
  std::vector<Move> moves = before[best->s].moves;
  moves.push_back(
      Move::redistribute(after[best->x].layout, /*crossMesh=*/true));
  for (const Move &m : after[best->x].moves)
    moves.push_back(m);
  return moves;
}

double dist::planner::detail::crossMeshLowerBound(
    const Mesh &srcMesh, const Layout &source, const Mesh &dstMesh,
    const Layout &target, llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
    AxisCostParams transfer) {
  (void)source;
  (void)target;
  // A rank in both meshes could be filled by source-side moves at the
  // source's prices, which this bound does not know: it claims nothing then.
  for (int64_t i = 0; i < dstMesh.getNumDevices(); ++i)
    if (!srcMesh.coordinateOfRank(dstMesh.rankOfIndex(i)).empty())
      return 0;
  // With disjoint meshes every byte enters the target's ranks through the
  // one transfer step, and at best they share it evenly.
  double total = double(elementBytes);
  for (int64_t n : shape)
    total *= double(n);
  if (total <= 0 || transfer.beta <= 0)
    return 0;
  return transfer.alpha +
         total * transfer.beta / double(dstMesh.getNumDevices());
}
