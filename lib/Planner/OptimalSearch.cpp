//===- OptimalSearch.cpp - Exact A* over layouts --------------------------===//
//
// States are packed layouts (plus the open slice run, see SearchSpace.h);
// edges are the moves SearchSpace generates, weighted by the cost model; the
// heuristic is LowerBound, which never overestimates. A* with an admissible
// heuristic returns a cheapest path once the goal is popped; because the
// bound is not guaranteed consistent, a state whose cost improves after it
// was expanded is reopened.
//
// Ties. Plans are ranked by cost (compared with costTolerance), then by
// number of steps, then by discovery order, which is fixed by the order in
// which moves are generated. Popping continues past the first goal while
// the queue still holds entries whose f is within tolerance of the best
// cost and whose step bound is smaller, so a plan with fewer steps and
// (numerically) equal cost is not missed.
//
//===----------------------------------------------------------------------===//

#include "LowerBound.h"
#include "Search.h"
#include "SearchSpace.h"

#include "llvm/ADT/DenseMap.h"

#include <limits>
#include <queue>

using namespace dist::planner;
using namespace dist::planner::detail;

namespace llvm {
template <> struct DenseMapInfo<StateKey> {
  static StateKey getEmptyKey() { return {~uint64_t(0), ~uint32_t(0)}; }
  static StateKey getTombstoneKey() { return {~uint64_t(0), ~uint32_t(0) - 1}; }
  static unsigned getHashValue(const StateKey &k) {
    uint64_t h = k.slots * 0x9E3779B97F4A7C15ull ^ (uint64_t(k.extra) << 17);
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    return unsigned(h ^ (h >> 32));
  }
  static bool isEqual(const StateKey &a, const StateKey &b) { return a == b; }
};
} // namespace llvm

namespace {
constexpr uint32_t kNoNode = ~uint32_t(0);

struct Node {
  SearchState state;
  PackedMove move; // the move from `parent`
  uint32_t parent = kNoNode;
  uint32_t version = 0;
  double g = 0, h = 0;
  int64_t bytes = 0;
  uint16_t steps = 0;
  bool closed = false;
};

struct Entry {
  double f;
  uint32_t stepBound; // steps so far + (0 at the target layout, else 1)
  uint32_t seq;
  uint32_t node;
  uint32_t version;
  /// std::priority_queue pops the greatest; we want the smallest
  /// (f, stepBound, seq).
  bool operator<(const Entry &o) const {
    if (f != o.f)
      return f > o.f;
    if (stepBound != o.stepBound)
      return stepBound > o.stepBound;
    return seq > o.seq;
  }
};
} // namespace

llvm::Expected<std::vector<Move>>
dist::planner::detail::searchOptimal(const PlanRequest &request,
                                     const CostModel &model,
                                     SearchStats *stats) {
  const Mesh &mesh = request.mesh;
  unsigned numAxes = mesh.getNumAxes(), rank = request.globalShape.size();
  PackedLayout source = packLayout(request.source);
  PackedLayout target = packLayout(request.target);
  SearchSpace space(mesh, request.globalShape, request.elementBytes, model,
                    request.maxPeakBytes, target);
  LowerBound bound(mesh, request.globalShape, request.elementBytes, model,
                   target);

  std::vector<Node> nodes;
  llvm::DenseMap<StateKey, uint32_t> index;
  std::priority_queue<Entry> open;
  uint32_t seq = 0;
  auto push = [&](uint32_t id) {
    const Node &n = nodes[id];
    uint32_t stepBound = n.steps + (n.state.layout == target ? 0 : 1);
    open.push({n.g + n.h, stepBound, seq++, id, n.version});
  };

  Node root;
  root.state.layout = source;
  root.bytes = space.bytesOf(source);
  root.h = bound(source);
  nodes.push_back(root);
  index[keyOf(root.state)] = 0;
  push(0);

  uint32_t best = kNoNode;
  double bestCost = std::numeric_limits<double>::infinity();
  unsigned bestSteps = ~0u;
  bool overflow = false;

  while (!open.empty()) {
    Entry e = open.top();
    open.pop();
    Node &n = nodes[e.node];
    if (e.version != n.version || n.closed)
      continue;
    if (best != kNoNode) {
      if (costLess(bestCost, e.f))
        break; // nothing left can match the best cost
      if (e.stepBound >= bestSteps)
        continue; // equal cost at best, but not fewer steps
    }
    n.closed = true;
    if (stats)
      ++stats->expanded;
    if (space.isGoal(n.state)) {
      if (best == kNoNode || costLess(n.g, bestCost) ||
          (costEqual(n.g, bestCost) && n.steps < bestSteps)) {
        best = e.node;
        bestCost = n.g;
        bestSteps = n.steps;
      }
      continue;
    }
    // Copy what the loop needs: `nodes` may grow (and move) inside it.
    const SearchState state = n.state;
    const double g = n.g;
    const uint16_t steps = n.steps;
    const int64_t bytes = n.bytes;
    const uint32_t parent = e.node;
    space.forEachEdge(state, bytes, /*sliceRuns=*/true, [&](const Edge &edge) {
      if (stats)
        ++stats->generated;
      double g2 = g + edge.cost;
      uint16_t steps2 = steps + (edge.newStep ? 1 : 0);
      auto [it, inserted] = index.try_emplace(keyOf(edge.next), nodes.size());
      if (inserted) {
        if (nodes.size() >= kMaxSearchStates) {
          overflow = true;
          index.erase(it);
          return;
        }
        Node child;
        child.state = edge.next;
        child.move = edge.move;
        child.parent = parent;
        child.g = g2;
        child.steps = steps2;
        child.bytes = edge.bytesAfter;
        child.h = bound(edge.next.layout);
        nodes.push_back(child);
        push(nodes.size() - 1);
        return;
      }
      Node &child = nodes[it->second];
      if (costLess(g2, child.g) ||
          (costEqual(g2, child.g) && steps2 < child.steps)) {
        child.move = edge.move;
        child.parent = parent;
        child.g = g2;
        child.steps = steps2;
        child.bytes = edge.bytesAfter;
        child.closed = false;
        ++child.version;
        push(it->second);
      }
    });
    if (overflow)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "the optimal search gave up after " +
              llvm::Twine(kMaxSearchStates) +
              " states; use --strategy greedy for this request");
  }
  if (stats)
    stats->states = nodes.size();
  if (best == kNoNode) {
    std::string why = request.maxPeakBytes
                          ? "no sequence of moves keeps the peak within " +
                                std::to_string(*request.maxPeakBytes) +
                                " bytes per device"
                          : "no sequence of moves reaches it";
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "target layout " + printLayout(mesh, request.target) +
            " is unreachable from " + printLayout(mesh, request.source) +
            ": " + why);
  }

  // Walk back to the source, then turn packed moves into Moves; an extended
  // slice run joins the previous step's all_slice.
  std::vector<uint32_t> path;
  for (uint32_t id = best; id != 0; id = nodes[id].parent)
    path.push_back(id);
  std::vector<Move> moves;
  Layout cur = request.source;
  cur.canonicalize();
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    const Node &n = nodes[*it];
    Layout next = unpackLayout(n.state.layout, numAxes, rank);
    if (n.move.kind == MoveKind::AllSlice && n.move.continuesRun &&
        !moves.empty())
      moves.back().axes.push_back(n.move.axes[0]);
    else
      moves.push_back(n.move.toMove(mesh, cur, next));
    cur = std::move(next);
  }
  return moves;
}
