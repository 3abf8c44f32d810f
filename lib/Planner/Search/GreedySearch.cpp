//===- GreedySearch.cpp - The classic similarity walk (baseline) ----------===//
//
// From the current layout, generate every layout one move away, keep the
// one most similar to the target (ties: cheaper move, then generation
// order), and take it if it is more similar than the current layout (hill
// climbing); stop at the target, when no move improves, or at a step limit.
// This is the baseline the optimal search is measured against; it looks at
// one move at a time and ignores what later moves will cost.
//
// Similarity (higher is better), summed over mesh axes:
//   2  the axis is where the target wants it: replicated in both; partial
//      in both with the target's kind; or splitting the same dim at the
//      same position with every more-major axis of that dim also in place
//      (only a common prefix of a dim's axis list is final);
//   1  the axis is replicated but the target wants it elsewhere (a local
//      slice or replicate_to_partial away from its place);
//   0  otherwise (it must still be gathered, moved or reduced).
//
// If the walk stalls (no move improves the similarity) or hits the limit,
// it finishes through the fully replicated layout: all_reduce the partial
// axes, gather every dim, then replicate_to_partial and slice into the
// target. That route always exists, so greedy fails only when a peak limit
// forbids it.
//
//===----------------------------------------------------------------------===//

#include "Search/Search.h"
#include "Search/SearchSpace.h"

#include "llvm/ADT/DenseSet.h"

using namespace dist::planner;
using namespace dist::planner::detail;

static int similarity(const PackedLayout &cur, const PackedLayout &target,
                      unsigned numAxes, unsigned rank, const DimView &tv) {
  // Length of the common prefix of each dim's axis list.
  unsigned prefix[kMaxSearchRank];
  for (unsigned d = 0; d < rank; ++d) {
    prefix[d] = 0;
    while (prefix[d] < tv.len[d] &&
           cur.slot[tv.axes[d][prefix[d]]] == dimSlot(d, prefix[d]))
      ++prefix[d];
  }
  int score = 0;
  for (unsigned a = 0; a < numAxes; ++a) {
    uint8_t want = target.slot[a], have = cur.slot[a];
    if (want == kReplicatedSlot) {
      score += have == kReplicatedSlot ? 2 : 0;
    } else if (want == kPartialSlot) {
      score += have == kPartialSlot && cur.kind == target.kind ? 2
               : have == kReplicatedSlot                       ? 1
                                                               : 0;
    } else {
      bool placed = have == want && slotPos(want) < prefix[slotDim(want)];
      score += placed ? 2 : have == kReplicatedSlot ? 1 : 0;
    }
  }
  return score;
}

/// The route through the replicated layout, as Layout-level moves.
static std::vector<Move> replicatedRoute(const Layout &from, const Layout &to) {
  std::vector<Move> moves;
  if (from.hasPartial())
    moves.push_back(Move::allReduce(from.partialAxes, from.partialKind));
  for (unsigned d = 0; d < from.dimAxes.size(); ++d)
    if (!from.dimAxes[d].empty())
      moves.push_back(Move::allGather(from.dimAxes[d], d));
  if (to.hasPartial())
    moves.push_back(Move::replicateToPartial(to.partialAxes, to.partialKind));
  for (unsigned d = 0; d < to.dimAxes.size(); ++d)
    if (!to.dimAxes[d].empty())
      moves.push_back(Move::allSlice(to.dimAxes[d], d));
  return moves;
}

llvm::Expected<std::vector<Move>> dist::planner::detail::searchGreedy(
    const PlanRequest &request, const CostModel &model, SearchStats *stats) {
  const Mesh &mesh = request.mesh;
  unsigned numAxes = mesh.getNumAxes(), rank = request.globalShape.size();
  PackedLayout target = packLayout(request.target);
  SearchSpace space(mesh, request.globalShape, request.elementBytes, model,
                    request.maxPeakBytes, target);
  DimView tv;
  space.view(target, tv);

  SearchState cur;
  cur.layout = packLayout(request.source);
  int64_t bytes = space.bytesOf(cur.layout);
  llvm::DenseSet<std::pair<uint64_t, unsigned>> visitedSlots;
  auto visitKey = [](const PackedLayout &l) {
    return std::make_pair(l.slotBits(), unsigned(l.kind));
  };
  visitedSlots.insert(visitKey(cur.layout));

  std::vector<Move> moves;
  Layout curLayout = request.source;
  curLayout.canonicalize();
  const unsigned limit = 2 * (numAxes + rank) + 8;
  for (unsigned step = 0; step < limit && cur.layout != target; ++step) {
    if (stats)
      ++stats->expanded;
    bool found = false;
    Edge best;
    int bestScore = 0;
    space.forEachEdge(
        cur, bytes, /*sliceRuns=*/false, /*permutes=*/true, OrderMark(),
        [&](const Edge &edge) {
          if (stats)
            ++stats->generated;
          if (visitedSlots.count(visitKey(edge.next.layout)))
            return;
          int score = similarity(edge.next.layout, target, numAxes, rank, tv);
          if (!found || score > bestScore ||
              (score == bestScore && costLess(edge.cost, best.cost))) {
            found = true;
            best = edge;
            bestScore = score;
          }
        });
    if (!found ||
        bestScore <= similarity(cur.layout, target, numAxes, rank, tv))
      break;
    Layout next = unpackLayout(best.next.layout, numAxes, rank);
    Move move = best.move.toMove(mesh, curLayout, next);
    // Consecutive slices onto one dim, or consecutive replicate_to_partial
    // steps, are one multi-axis step (same cost, fewer steps).
    bool merged = false;
    if (!moves.empty() && moves.back().kind == move.kind) {
      Move &last = moves.back();
      if ((move.kind == MoveKind::AllSlice && last.dim == move.dim) ||
          move.kind == MoveKind::ReplicateToPartial) {
        last.axes.insert(last.axes.end(), move.axes.begin(), move.axes.end());
        merged = true;
      }
    }
    if (!merged)
      moves.push_back(std::move(move));
    cur.layout = best.next.layout;
    bytes = best.bytesAfter;
    curLayout = std::move(next);
    visitedSlots.insert(visitKey(cur.layout));
  }
  if (cur.layout != target) {
    std::vector<Move> route = replicatedRoute(curLayout, request.target);
    moves.insert(moves.end(), route.begin(), route.end());
  }
  if (stats)
    stats->states += visitedSlots.size();
  return moves;
}
