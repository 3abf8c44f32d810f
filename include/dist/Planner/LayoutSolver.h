//===- LayoutSolver.h - one strategy per node, least cost -------*- C++ -*-===//
//
// The layout choice as a discrete optimisation problem, free of MLIR: every
// node (an op, or a fixed layout: an argument, a binding type, a return)
// has strategies; a strategy has a modelled compute time (seconds, from the
// device model; 0 without one), a local work (iterations per device, the
// tie-breaker) and the bytes it keeps live on a device; every edge (a value
// flowing from a producer to a consumer) costs the modelled reshard time
// from the layout the producer's strategy gives the value to the layout the
// consumer's strategy needs. Nodes are numbered in program order, so edges
// go from lower to higher numbers.
//
// Costs compare lexicographically: modelled time (communication + compute)
// first, then work.
//
// Memory (docs/partitioning.md, "Auto-sharding"): per device, the bytes of
// every argument node, plus the peak over the program order of the bytes of
// the other nodes live at that point (from the node to its last neighbour;
// a returned copy to the end) and of the buffers the reshards into that
// point's node create.
//
// Choosers:
//  - Optimal: the exact search (ExactSearch.cpp): dynamic programming over
//    the program order whose state is the layouts of the values still live;
//    it honours a memory budget exactly. When the search space is too large
//    or the time limit passes, the fallback answers and the remark gives
//    its distance to a lower bound.
//  - The fallback: the cheapest of three choices that fits the budget: the
//    same search as a beam (the cheapest and the leanest partial choices
//    kept per op, so it honours the budget too), the same search relaxed
//    (a long-lived node leaves the state when it grows too large, and its
//    later edges are priced at their cheapest; its value is the lower
//    bound), and the heuristic: dynamic programming along the use-def
//    graph (exact on trees), decoded backwards, then improved node by node
//    (iterated conditional modes), with the two baselines improved the
//    same way.
//  - Greedy: in program order, each op takes the strategy cheapest given its
//    operands' already chosen layouts (an eager runtime's dispatch).
//  - KeepLarger: each op keeps the layout of its largest operand when some
//    strategy allows it (cheapest such one), else as Greedy.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_PLANNER_LAYOUTSOLVER_H
#define DIST_PLANNER_LAYOUTSOLVER_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <vector>

namespace dist::planner::layout {

/// How layouts are chosen (docs/partitioning.md), in the reshard planner's
/// words (planner::Strategy): the optimal choice for the whole program at
/// once (the exact search, or the fallback with its gap past the limits),
/// greedily op by op in program order (an eager runtime's dispatch), or each
/// op keeping its largest operand's layout (Shardy's rule). The last two are
/// baselines for the benchmark.
enum class LayoutChooser { Optimal, Greedy, KeepLarger };
using Chooser = LayoutChooser;
/// The words of the choosers: each one's name first ("optimal", "greedy",
/// "keep-larger"), then the older names "joint" (optimal) and "per-op"
/// (greedy), which are still taken.
struct LayoutChooserWord {
  LayoutChooser chooser;
  const char *word;
  const char *description;
};
llvm::ArrayRef<LayoutChooserWord> layoutChooserWords();
llvm::StringRef stringifyLayoutChooser(LayoutChooser chooser);
std::optional<LayoutChooser> parseLayoutChooser(llvm::StringRef text);

struct Cost {
  double time = 0, work = 0;
  Cost &operator+=(const Cost &o) {
    time += o.time;
    work += o.work;
    return *this;
  }
  friend Cost operator+(Cost a, const Cost &b) { return a += b; }
  /// Time first (equal within rounding), then work. Inline: the exact
  /// search compares costs in its innermost loop.
  bool operator<(const Cost &o) const {
    if (std::isinf(time) || std::isinf(o.time))
      return time < o.time;
    // Sums of the same reshard costs in another order differ in the last
    // bits; such plans are equally good, and work decides.
    double tolerance = 1e-9 * std::max(std::fabs(time), std::fabs(o.time));
    if (std::fabs(time - o.time) > tolerance)
      return time < o.time;
    return work < o.work;
  }
};

/// What one node's strategies cost and hold.
struct NodeSpec {
  /// Per strategy: iterations per device (the tie-breaker).
  std::vector<double> work;
  /// Per strategy: modelled compute seconds (empty: none).
  std::vector<double> seconds;
  /// Per strategy: bytes the node keeps live on one device (empty: none).
  std::vector<double> bytes;
  /// An argument: live for the whole function.
  bool argument = false;
  /// A returned copy (a result's move, placed right after its value is
  /// produced): live from the next position to the end of the function.
  /// At its own position the value it is moved from counts, and the copy
  /// as the destination of its incoming move (the edge's moved bytes) when
  /// there is a move; without one the copy is that value, held on.
  bool heldToEnd = false;
};

struct SolveOptions {
  Chooser chooser = Chooser::Optimal;
  /// Per-device memory budget in bytes (none: unlimited).
  std::optional<double> budget;
  /// Limits of the exact search; past either, the fallback answers.
  double timeLimitSeconds = 5;
  size_t maxStatesPerStep = size_t(1) << 21;
  /// The fallback: the partial choices the widest beam keeps per op, and
  /// the partial choices all beams together may make (the beam starts
  /// narrow and doubles within both; counting work rather than time keeps
  /// the choice the same from run to run); the states per op of the
  /// relaxed search that bounds the optimum from below.
  size_t beamWidth = size_t(1) << 14;
  size_t beamWork = size_t(1) << 24;
  size_t relaxedStatesPerStep = size_t(1) << 16;
  /// Past maxStatesPerStep, the exact search by cases: how many nodes it
  /// fixes at most, one inside the other (each level multiplies the cases
  /// by that node's strategies; 0: none).
  unsigned caseLevels = 2;
};

struct Solution {
  std::vector<unsigned> choice;
  Cost total;
  /// The parts of total.time, and the peak bytes per device.
  double comm = 0, compute = 0, peakBytes = 0;
  /// Whether the choice is proven optimal (the exact search finished).
  bool optimal = false;
  /// A lower bound on the optimal time (== total.time when optimal).
  double lowerBound = 0;
  /// Why the exact search did not answer (empty when it did).
  std::string fallbackReason;
  /// Under a budget: whether the choice fits it.
  bool fits = true;
};

/// Why a search stopped when it ran out of time.
std::string timeLimitPassed(double seconds);

class LayoutProblem {
public:
  unsigned addNode(NodeSpec spec);
  /// Adds an edge; strategy sf of `from` gives layout fromLayout[sf],
  /// strategy st of `to` needs layout toLayout[st], and moving layout i to
  /// layout j costs table[i * numToLayouts + j] seconds (infinity: not
  /// possible). `bytes` is the value's global size, for KeepLarger;
  /// `movedBytes[j]` (empty: none) what the moved copy in layout j holds
  /// on a device, live at `to`.
  ///
  /// Lazy pricing: entries with `bounded[i]` set hold only a lower bound,
  /// and `price(i)` gives entry i's exact cost. solve() prices exactly the
  /// entries its choice uses and solves again until the choice uses exact
  /// entries only; that choice is then optimal for the exact tables too
  /// (it costs exactly what its tables say, and every other choice at
  /// least what they say).
  void addEdge(unsigned from, unsigned to, std::vector<unsigned> fromLayout,
               std::vector<unsigned> toLayout, unsigned numToLayouts,
               std::vector<double> table, double bytes,
               std::vector<double> movedBytes = {},
               std::vector<uint8_t> bounded = {},
               std::function<double(size_t)> price = nullptr,
               std::function<std::string(size_t)> request = nullptr);

  /// Runs body(0..count-1), possibly on several threads (lazy entries
  /// priced all at once; default: in turn).
  using ParallelFor = std::function<void(
      size_t count, const std::function<void(size_t)> &body)>;
  void setParallelFor(ParallelFor parallel) {
    parallelFor = std::move(parallel);
  }

  unsigned numNodes() const { return nodes.size(); }
  unsigned numStrategies(unsigned node) const {
    return nodes[node].spec.work.size();
  }

  /// One strategy per node, with its cost, peak memory and proof status.
  /// Not const: lazily priced entries become exact.
  Solution solve(const SolveOptions &options);
  /// The smallest peak bytes any choice needs (exact when `exact` is set on
  /// return; otherwise the peak of the least-memory strategy per node).
  double minimumPeakBytes(const SolveOptions &options, bool &exact) const;
  /// The cost of a given choice, with its parts filled into `solution`.
  Solution evaluate(const std::vector<unsigned> &choice) const;

private:
  struct Edge {
    unsigned from, to;
    std::vector<unsigned> fromLayout, toLayout;
    unsigned numToLayouts;
    std::vector<double> table;
    double bytes;
    std::vector<double> movedBytes;
    std::vector<uint8_t> bounded;
    std::function<double(size_t)> price;
    /// Names the reshard entry i prices: entries of equal names (on any
    /// edge) are one plan of the planner's.
    std::function<std::string(size_t)> request;
    size_t index(unsigned sf, unsigned st) const {
      return fromLayout[sf] * numToLayouts + toLayout[st];
    }
    double cost(unsigned sf, unsigned st) const { return table[index(sf, st)]; }
    /// The bytes the move into strategy st of `to` creates (0: none, or a
    /// free one: the same layout, or a local slice).
    double moved(unsigned sf, unsigned st) const {
      if (movedBytes.empty() || cost(sf, st) == 0)
        return 0;
      return movedBytes[toLayout[st]];
    }
  };
  struct Node {
    NodeSpec spec;
    std::vector<unsigned> in, out; // edge indices
    Cost unary(unsigned s) const {
      return {spec.seconds.empty() ? 0 : spec.seconds[s], spec.work[s]};
    }
    double bytes(unsigned s) const {
      return spec.bytes.empty() ? 0 : spec.bytes[s];
    }
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;
  /// While set, the searches consider only strategy fixed[n] of each node
  /// with fixed[n] >= 0 (the fallback's second look, LayoutSolver.cpp).
  mutable std::vector<int> fixed;
  bool allowed(unsigned node, unsigned s) const {
    return fixed.empty() || fixed[node] < 0 || unsigned(fixed[node]) == s;
  }
  /// One solve on the tables as they are (solve() refines them).
  Solution solveOnce(const SolveOptions &options) const;
  /// Prices exactly the bounded entries `choice` uses; whether any entry
  /// changed.
  bool priceExactly(const std::vector<unsigned> &choice);
  /// Prices exactly every bounded entry; whether any changed.
  bool priceAll();
  /// The distinct plans (Edge::request) the bounded entries left need.
  size_t plansToPriceAll() const;
  /// priceAll() is used when it needs at most this many plans: past it
  /// planning them all takes far longer than the search it serves (a
  /// fuzzed 6-op program on a 2x2x2 mesh with interleaved layouts needed
  /// 49,500 plans of about 1.7 ms each: 43 s, where 8 unrolled Llama
  /// layers on 2 x 4 need 5,400 of 0.2 ms), and the choices of rounds are
  /// priced instead (solve()).
  static constexpr size_t kMaxPlansPricedAtOnce = 8192;
  /// `solution`'s choice with its entries priced exactly, at its exact
  /// cost (the bound and the reason kept).
  Solution pricedExactly(const Solution &solution, const SolveOptions &options);
  ParallelFor parallelFor;
  /// The time limit is counted in work, not read from a clock, as a MIP
  /// solver's deterministic time is: the searches add the elementary steps
  /// they take (a strategy tried against its incoming edges, a label
  /// compared, a node replayed for memory), and kWorkPerSecond of them
  /// make one second of the limit, about a second of one core of the
  /// machine the constant was measured on (docs/partitioning.md, "The
  /// exact choice"). So the same problem gets the same choice on every
  /// machine, at every load and in a sanitizer's build: dist-run and
  /// dist-opt agree on the plan, and a fallback is reproducible. Pricing
  /// (the planner's work) does not count.
  static constexpr double kWorkPerSecond = 4e8;
  mutable double workDone = 0;
  /// Seconds of the limit spent so far (monotonic).
  double clock() const { return workDone / kWorkPerSecond; }
  /// Whether more than the limit has been spent since `start` (saying so
  /// in `why`).
  bool pastTimeLimit(double start, const SolveOptions &options,
                     std::string &why) const;
  /// The heuristic's choice, once computed (the exact search bounds with
  /// it, and the fallback offers it).
  mutable std::optional<std::vector<unsigned>> heuristicChoice;

  /// The order memory is measured in (and the exact search runs in):
  /// program order, each argument placed right before its first use.
  struct Order {
    std::vector<unsigned> nodeAt, pos, lastPos;
  };
  Order memoryOrder() const;
  double peakBytes(const std::vector<unsigned> &choice) const;

  enum class Objective { Time, Peak };
  /// Exact: the optimum. Beam: keeps options.beamWidth partial choices per
  /// op (the cheapest, and under a budget also the leanest). Relaxed
  /// (time, no memory): the optimum of a relaxation, a lower bound.
  /// Sizes (no memory): only whether the exact search's states per op stay
  /// within the limit (an empty choice when they do).
  enum class Search { Exact, Beam, Relaxed, Sizes };
  /// What a beam or relaxed search found out besides its choice.
  struct SearchReport {
    /// Relaxed: the relaxation's optimum (the choice is merely possible).
    double value = 0;
    /// Beam: whether some partial choice was left out (else the beam was
    /// the exact search).
    bool pruned = false;
    /// Beam: the partial choices made (over all ops).
    size_t made = 0;
    /// Exact and Sizes past the states limit: the frontier of the first
    /// step that passes it, the node that lives longest first.
    std::vector<unsigned> crowded;
    /// Sizes within the limit: the states of all steps together.
    double states = 0;
  };
  /// The search; nullopt (with `why`) past its limits or when no choice
  /// fits the budget (`why` empty then). `upper`: the time of a choice
  /// known to fit; a partial choice that cannot beat it is dropped.
  std::optional<std::vector<unsigned>>
  searchExact(Objective objective, const SolveOptions &options,
              std::string &why, Search search = Search::Exact,
              SearchReport *report = nullptr,
              double upper = std::numeric_limits<double>::infinity()) const;
  /// The exact search (time, no memory) by cases, when its states pass the
  /// limit: the longest-lived node of the crowded step takes each of its
  /// strategies in turn (fixed[]), each case is searched exactly (by cases
  /// again, `depth` levels deep), and the cheapest case's choice is the
  /// optimum; a case that cannot beat the best so far is cut short (branch
  /// and bound). nullopt with `why` when a case passes a limit.
  std::optional<std::vector<unsigned>>
  searchByCases(const SolveOptions &options, std::string &why,
                unsigned depth) const;
  /// Per position of `order`: a lower bound on what the nodes from there
  /// on add (each one's cheapest strategy and incoming edges).
  std::vector<double> costToGo(const Order &order) const;
  /// Beams of doubling width (LayoutSolver.cpp): the cheapest choices that
  /// fit the budget (Time), or the leanest (Peak).
  std::vector<std::vector<unsigned>>
  beams(const SolveOptions &options,
        Objective objective = Objective::Time) const;
  /// Iterated conditional modes that keep the choice within the budget.
  void improveWithin(std::vector<unsigned> &choice, double budget,
                     double timeLimitSeconds) const;
  /// The fallback past the exact search's limits: the cheapest choice that
  /// fits the budget among `candidates`, the heuristic's and the relaxed
  /// search's (the cheapest in memory when none fits), and a lower bound
  /// on the optimum.
  std::vector<unsigned> fallback(const SolveOptions &options,
                                 std::vector<std::vector<unsigned>> candidates,
                                 double &bound) const;
  /// The exact search's frontier slots and steps (ExactSearch.cpp).
  struct Slot;
  struct Step;
  /// A node's classes shrink as its later neighbours are decided: epoch j
  /// of node i is the time after its first j later neighbours (by
  /// position), when only the edges to the others still matter. Strategies
  /// of one class are alike for the rest of the search.
  struct StateClasses {
    /// Per node, the distinct positions of its later neighbours.
    std::vector<std::vector<unsigned>> laterPositions;
    /// classOf[node][epoch][strategy]; representative[node][epoch][class].
    std::vector<std::vector<std::vector<uint32_t>>> classOf;
    std::vector<std::vector<std::vector<unsigned>>> representative;
  };
  /// With `memory`, a strategy's bytes tell classes apart too.
  StateClasses stateClasses(const Order &order, bool memory) const;
  /// How deciding node k at position p reshapes the frontier.
  /// An incoming edge from a node the relaxation dropped has no slot.
  Step planStep(const std::vector<Slot> &frontier, unsigned k, unsigned p,
                const Order &order,
                const std::vector<std::vector<unsigned>> &laterPositions,
                const std::vector<bool> &dropped) const;
  /// The search without memory (exact or relaxed): one label per state,
  /// dense tables.
  std::optional<std::vector<unsigned>>
  searchDense(const Order &order, const StateClasses &classes,
              const SolveOptions &options, Search search, double start,
              std::string &why, SearchReport *report, double upper) const;
  /// Whether every step's dense table stays within maxStatesPerStep (its
  /// size follows from the classes alone); else `why` and the crowded
  /// nodes in `report`.
  bool denseTablesFit(const Order &order, const StateClasses &classes,
                      const SolveOptions &options, std::string &why,
                      SearchReport *report) const;
  /// The choice a search's back pointers lead to from `entry` at the last
  /// position: history[p][entry] = {entry at p - 1, strategy at p}.
  static std::vector<unsigned> decodeChoice(
      const Order &order,
      const std::vector<std::vector<std::pair<uint32_t, uint32_t>>> &history,
      uint32_t entry);
  std::vector<unsigned> heuristic() const;
  double lowerBound() const;

  std::vector<unsigned> dynamicProgramming() const;
  std::vector<unsigned> perOp() const;
  std::vector<unsigned> keepLarger() const;
  void improve(std::vector<unsigned> &choice) const;
  /// The cost node n adds with strategy s, given the others' choices;
  /// `onlyDecided` ignores edges to nodes numbered after n (not yet chosen).
  Cost localCost(unsigned n, unsigned s, const std::vector<unsigned> &choice,
                 bool onlyDecided) const;
};

} // namespace dist::planner::layout

#endif
