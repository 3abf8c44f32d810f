//===- ExactSearch.cpp - the exact layout choice --------------------------===//
//
// Dynamic programming over the memory order (LayoutSolver.h): after the
// node at position p is decided, the future depends on the past only
// through the *frontier*, the decided nodes that still have an edge to an
// undecided one. Two strategies of a node that give the same layout on each
// of its edges to later nodes (and, when memory counts, hold the same
// bytes) are interchangeable for the future: they form one *class*. A state
// is one class per frontier node; for each state the search keeps the
// cheapest way to reach it. Every edge is priced exactly once, when its
// later end is decided, from the state (its earlier end) and the new node's
// strategy, so the cheapest label of the final (empty) state is the optimum
// (docs/partitioning.md, "The exact choice", has the proof).
//
// Memory: the bytes live at position p are those of the frontier plus the
// new node and the copies its incoming moves create, all known from the
// state and the strategy, so a budget prunes exactly. Arguments count for
// the whole function and returned copies from their move to the end: a
// label carries the arguments' bytes so far, the returned copies' bytes so
// far and the peak of the rest so far, and a state keeps every label no
// other label beats on cost, those bytes and peak (a Pareto set; a single
// label when memory does not count).
//
// Past its limits the same search serves the fallback in two ways (see
// LayoutProblem::fallback): as a beam, keeping only the cheapest (and the
// leanest) partial choices per op, and relaxed: when the states of an op
// would pass a limit, the longest-lived frontier node leaves the state and
// its edges to later nodes are priced at their cheapest entry for the
// later node's strategy, as if each such edge could pick the node's
// strategy on its own. Every choice keeps its cost or gets cheaper under
// that relaxation, so its optimum, found exactly, bounds the true optimum
// from below.
//
//===----------------------------------------------------------------------===//

#include "dist/Planner/LayoutSolver.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <unordered_map>

using namespace dist::planner::layout;

namespace {

/// An incoming edge whose earlier end the relaxation dropped.
constexpr unsigned kNoSlot = ~0u;

/// The memory-aware search's steps in units of the work clock
/// (LayoutSolver.h), measured against a dense step (an edge priced): a
/// state looked up by its hashed key (with the allocation of a new state
/// and its release at the end of the step: about 0.4 to 1.1 us on the
/// development machine, the more the larger the step, 320 units = 0.8 us),
/// and a label made and stored.
constexpr double kWorkPerLookup = 320, kWorkPerLabel = 10;

struct Label {
  Cost cost;
  double argBytes = 0, maxLive = 0;
  /// The returned copies made so far, live from here to the end.
  double heldBytes = 0;
  /// This label's entry in its step's history.
  uint32_t entry = 0;
};

struct State {
  std::vector<uint32_t> classes; // per tracked frontier node
  std::vector<Label> labels;     // a Pareto set
};

/// Whether `a` is at least as good as `b` in every respect.
bool dominates(const Label &a, const Label &b) {
  return !(b.cost < a.cost) && a.argBytes <= b.argBytes &&
         a.maxLive <= b.maxLive && a.heldBytes <= b.heldBytes;
}

std::string keyOf(const std::vector<uint32_t> &classes) {
  std::string key(classes.size() * sizeof(uint32_t), '\0');
  if (!classes.empty())
    std::memcpy(key.data(), classes.data(), key.size());
  return key;
}

/// Whether the later neighbour number `epoch` of a node sits at position
/// `p` (deciding it moves the node to its next epoch).
bool reachesNextEpoch(const std::vector<unsigned> &laterPositions,
                      unsigned epoch, unsigned p) {
  return epoch < laterPositions.size() && laterPositions[epoch] == p;
}

/// Whether the search has run past its time limit (saying so in `why`).
/// The beam: keeps `width` labels over all states, the cheapest and, when
/// `lean`, half of them the ones holding the fewest bytes (so that a later
/// budget can still be met); all of them by bytes when `onlyLean` (the
/// least-memory search).
void keepBest(std::vector<State> &states, size_t width, bool lean,
              bool onlyLean) {
  struct Ref {
    uint32_t state, label;
  };
  std::vector<Ref> refs;
  for (uint32_t s = 0; s < states.size(); ++s)
    for (uint32_t l = 0; l < states[s].labels.size(); ++l)
      refs.push_back({s, l});
  if (refs.size() <= width)
    return;
  auto label = [&](Ref r) -> const Label & {
    return states[r.state].labels[r.label];
  };
  // Plain lexicographic keys: the algorithms need a strict weak order.
  auto byCost = [&](Ref a, Ref b) {
    return std::make_pair(label(a).cost.time, label(a).cost.work) <
           std::make_pair(label(b).cost.time, label(b).cost.work);
  };
  auto held = [&](Ref r) {
    const Label &l = label(r);
    return l.argBytes + std::max(l.maxLive, l.heldBytes);
  };
  auto byBytes = [&](Ref a, Ref b) {
    return std::make_pair(held(a), label(a).cost.time) <
           std::make_pair(held(b), label(b).cost.time);
  };
  size_t cheapest = onlyLean ? 0 : lean ? (width + 1) / 2 : width;
  std::nth_element(refs.begin(), refs.begin() + cheapest, refs.end(), byCost);
  if ((lean || onlyLean) && width > cheapest)
    std::nth_element(refs.begin() + cheapest,
                     refs.begin() + std::min(refs.size(), width), refs.end(),
                     byBytes);
  refs.resize(std::min(refs.size(), width));
  std::vector<std::vector<Label>> kept(states.size());
  for (Ref r : refs)
    kept[r.state].push_back(label(r));
  for (uint32_t s = 0; s < states.size(); ++s)
    states[s].labels = std::move(kept[s]);
  states.erase(std::remove_if(states.begin(), states.end(),
                              [](const State &s) { return s.labels.empty(); }),
               states.end());
}

} // namespace

bool LayoutProblem::pastTimeLimit(double start, const SolveOptions &options,
                                  std::string &why) const {
  if (clock() - start <= options.timeLimitSeconds)
    return false;
  why = timeLimitPassed(options.timeLimitSeconds);
  return true;
}

std::string dist::planner::layout::timeLimitPassed(double seconds) {
  return "the time limit of " + llvm::formatv("{0}", seconds).str() +
         " s passed";
}

/// A decided node with a later neighbour, at its epoch; a state holds one
/// class per slot.
struct LayoutProblem::Slot {
  unsigned node, epoch;
};

/// How deciding the node at position p reshapes the frontier.
struct LayoutProblem::Step {
  /// The slot each incoming edge's earlier end sits in.
  std::vector<unsigned> fromSlot;
  /// The slots kept, with their next epoch (one on when they neighbour the
  /// new node), in the next frontier's order.
  std::vector<std::pair<unsigned, unsigned>> kept;
  /// Whether the new node joins the frontier (last).
  bool keepNew = false;
  std::vector<Slot> nextFrontier;
};

LayoutProblem::Step LayoutProblem::planStep(
    const std::vector<Slot> &frontier, unsigned k, unsigned p,
    const Order &order,
    const std::vector<std::vector<unsigned>> &laterPositions,
    const std::vector<bool> &dropped) const {
  Step step;
  for (unsigned e : nodes[k].in) {
    if (dropped[edges[e].from]) {
      step.fromSlot.push_back(kNoSlot);
      continue;
    }
    unsigned slot = 0;
    while (frontier[slot].node != edges[e].from)
      ++slot;
    step.fromSlot.push_back(slot);
  }
  for (unsigned slot = 0; slot < frontier.size(); ++slot) {
    auto [a, epoch] = frontier[slot];
    if (order.lastPos[a] <= p)
      continue;
    unsigned nextEpoch = epoch + reachesNextEpoch(laterPositions[a], epoch, p);
    step.kept.push_back({slot, nextEpoch});
    step.nextFrontier.push_back({a, nextEpoch});
  }
  step.keepNew = order.lastPos[k] > p;
  if (step.keepNew)
    step.nextFrontier.push_back({k, 0});
  return step;
}

std::vector<double> LayoutProblem::costToGo(const Order &order) const {
  const unsigned n = nodes.size();
  std::vector<double> toGo(n + 1, 0.0);
  for (unsigned p = n; p-- > 0;) {
    const Node &node = nodes[order.nodeAt[p]];
    double cheapest = std::numeric_limits<double>::infinity();
    for (unsigned s = 0; s < node.spec.work.size(); ++s)
      cheapest = std::min(cheapest, node.unary(s).time);
    for (unsigned e : node.in)
      cheapest +=
          *std::min_element(edges[e].table.begin(), edges[e].table.end());
    toGo[p] = toGo[p + 1] + cheapest;
  }
  return toGo;
}

std::optional<std::vector<unsigned>>
LayoutProblem::searchDense(const Order &order, const StateClasses &classes,
                           const SolveOptions &options, Search search,
                           double start, std::string &why, SearchReport *report,
                           double upper) const {
  const std::vector<std::vector<unsigned>> &laterPositions =
      classes.laterPositions;
  const auto &classOf = classes.classOf;
  const auto &representative = classes.representative;
  const unsigned n = nodes.size();
  const bool relaxed = search == Search::Relaxed;
  const Cost unreached{std::numeric_limits<double>::infinity(), 0};
  std::vector<Slot> frontier;
  std::vector<Cost> table{Cost()};
  // Branch and bound: a state whose cost plus a lower bound on what the
  // undecided nodes must still add exceeds a known choice's cost cannot
  // lead to the optimum. The bound: each undecided node's cheapest unary
  // and each of its incoming edges' cheapest entry (a bound under the
  // relaxation too, whose optimum is at most the known choice's cost).
  upper = std::min(upper, evaluate(heuristic()).total.time);
  // The relaxation: nodes dropped from the state, and per edge from one
  // of them its cheapest entry for each strategy of its later end.
  std::vector<bool> dropped(n, false);
  std::vector<std::vector<double>> cheapestFrom(edges.size());
  auto drop = [&](unsigned node) {
    dropped[node] = true;
    for (unsigned e : nodes[node].out) {
      const Edge &edge = edges[e];
      cheapestFrom[e].assign(numStrategies(edge.to),
                             std::numeric_limits<double>::infinity());
      for (unsigned st = 0; st < numStrategies(edge.to); ++st)
        for (unsigned sf = 0; sf < numStrategies(node); ++sf)
          cheapestFrom[e][st] =
              std::min(cheapestFrom[e][st], edge.cost(sf, st));
    }
  };
  std::vector<double> toGo = costToGo(order);
  // The exact search's table sizes follow from the classes alone: when one
  // passes the limit, say so before any work.
  if (!relaxed) {
    if (!denseTablesFit(order, classes, options, why, report))
      return std::nullopt;
    if (search == Search::Sizes)
      return std::vector<unsigned>();
  }
  auto hopeless = [&](double time, unsigned p) {
    return !std::isinf(upper) && time + toGo[p] > upper * (1 + 1e-9) + 1e-300;
  };
  // history[p][state] = {state at p - 1, strategy of the node at p}.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> history(n);
  auto radix = [&](const Slot &slot) {
    return representative[slot.node][slot.epoch].size();
  };

  for (unsigned p = 0; p < n; ++p) {
    unsigned k = order.nodeAt[p];
    const Node &node = nodes[k];
    Step step = planStep(frontier, k, p, order, laterPositions, dropped);
    if (relaxed) {
      // Drop the longest-lived slots (the larger first among equals) until
      // the states fit.
      auto states = [&] {
        double size = 1;
        for (const Slot &slot : step.nextFrontier)
          size *= radix(slot);
        return size;
      };
      while (states() > options.relaxedStatesPerStep) {
        unsigned victim = 0;
        for (unsigned i = 1; i < step.nextFrontier.size(); ++i) {
          const Slot &a = step.nextFrontier[i], &b = step.nextFrontier[victim];
          if (std::make_pair(order.lastPos[a.node], radix(a)) >
              std::make_pair(order.lastPos[b.node], radix(b)))
            victim = i;
        }
        drop(step.nextFrontier[victim].node);
        if (step.keepNew && victim + 1 == step.nextFrontier.size())
          step.keepNew = false;
        else
          step.kept.erase(step.kept.begin() + victim);
        step.nextFrontier.erase(step.nextFrontier.begin() + victim);
      }
    }
    const std::vector<unsigned> &fromSlot = step.fromSlot;
    const auto &kept = step.kept;
    bool keepNew = step.keepNew;
    std::vector<Slot> &nextFrontier = step.nextFrontier;
    // Strides: the first slot varies fastest.
    std::vector<size_t> nextStride(nextFrontier.size());
    size_t size = 1, limit = relaxed ? options.relaxedStatesPerStep
                                     : options.maxStatesPerStep;
    for (unsigned i = 0; i < nextFrontier.size(); ++i) {
      nextStride[i] = size;
      size *= radix(nextFrontier[i]);
      if (size > limit) {
        why = "more than " + std::to_string(limit) + " states at one op";
        return std::nullopt;
      }
    }
    std::vector<Cost> next(size, unreached);
    workDone += size;
    // Each state reached tries every strategy against every incoming edge.
    const double workPerState =
        frontier.size() + numStrategies(k) * (1.0 + node.in.size());
    std::vector<std::pair<uint32_t, uint32_t>> &back = history[p];
    back.assign(size, {0, 0});
    const unsigned numS = numStrategies(k);
    // What a strategy adds (its unary cost and its incoming edges' costs)
    // depends on the state only through the classes of the slots those
    // edges come from: computed once per combination of those classes,
    // the state's work is one addition per strategy. (A table too large
    // for that falls back to pricing the edges per state.)
    std::vector<unsigned> feeding; // distinct slots the incoming edges read
    for (unsigned slot : fromSlot)
      if (slot != kNoSlot && !llvm::is_contained(feeding, slot))
        feeding.push_back(slot);
    std::vector<size_t> feedStride(feeding.size());
    size_t combos = 1;
    for (unsigned j = 0; j < feeding.size(); ++j) {
      feedStride[j] = combos;
      combos *= radix(frontier[feeding[j]]);
    }
    const bool tabulated = combos * numS <= (size_t(1) << 20);
    std::vector<unsigned> strategyOf(frontier.size());
    std::vector<Cost> added;
    if (tabulated) {
      added.assign(combos * numS, unreached);
      workDone += double(combos) * numS * (1.0 + node.in.size());
      for (size_t combo = 0; combo < combos; ++combo) {
        size_t rest = combo;
        for (unsigned j = 0; j < feeding.size(); ++j) {
          const Slot &slot = frontier[feeding[j]];
          strategyOf[feeding[j]] =
              representative[slot.node][slot.epoch][rest % radix(slot)];
          rest /= radix(slot);
        }
        for (unsigned s = 0; s < numS; ++s) {
          if (!allowed(k, s))
            continue;
          Cost cost = node.unary(s);
          for (unsigned i = 0; i < node.in.size(); ++i)
            cost.time +=
                fromSlot[i] == kNoSlot
                    ? cheapestFrom[node.in[i]][s]
                    : edges[node.in[i]].cost(strategyOf[fromSlot[i]], s);
          added[combo * numS + s] = cost;
        }
      }
    }
    // Where strategy s puts the new node's class in the next state.
    std::vector<size_t> newOffset(numS, 0);
    if (keepNew)
      for (unsigned s = 0; s < numS; ++s)
        newOffset[s] = nextStride.back() * classOf[k][0][s];
    std::vector<size_t> classIndex(frontier.size());
    for (size_t state = 0; state < table.size(); ++state) {
      // One op's states can take long: look at the clock within it too.
      if (state % 65536 == 65535 && pastTimeLimit(start, options, why))
        return std::nullopt;
      if (std::isinf(table[state].time) || hopeless(table[state].time, p))
        continue;
      workDone += workPerState;
      size_t rest = state;
      for (unsigned slot = 0; slot < frontier.size(); ++slot) {
        size_t r = radix(frontier[slot]);
        classIndex[slot] = rest % r;
        strategyOf[slot] =
            representative[frontier[slot].node][frontier[slot].epoch]
                          [classIndex[slot]];
        rest /= r;
      }
      size_t base = 0;
      for (unsigned i = 0; i < kept.size(); ++i) {
        auto [slot, nextEpoch] = kept[i];
        base += nextStride[i] *
                classOf[frontier[slot].node][nextEpoch][strategyOf[slot]];
      }
      const Cost here = table[state];
      auto relax = [&](unsigned s, const Cost &cost) {
        size_t to = base + newOffset[s];
        if (cost < next[to]) {
          next[to] = cost;
          back[to] = {uint32_t(state), s};
        }
      };
      if (tabulated) {
        size_t combo = 0;
        for (unsigned j = 0; j < feeding.size(); ++j)
          combo += feedStride[j] * classIndex[feeding[j]];
        const Cost *row = &added[combo * numS];
        for (unsigned s = 0; s < numS; ++s) {
          if (std::isinf(row[s].time))
            continue;
          relax(s, here + row[s]);
        }
        continue;
      }
      for (unsigned s = 0; s < numS; ++s) {
        if (!allowed(k, s))
          continue;
        Cost cost = here + node.unary(s);
        for (unsigned i = 0; i < node.in.size(); ++i)
          cost.time += fromSlot[i] == kNoSlot
                           ? cheapestFrom[node.in[i]][s]
                           : edges[node.in[i]].cost(strategyOf[fromSlot[i]], s);
        if (std::isinf(cost.time))
          continue;
        relax(s, cost);
      }
    }
    if (pastTimeLimit(start, options, why))
      return std::nullopt;
    table = std::move(next);
    frontier = std::move(nextFrontier);
  }
  // The frontier is empty: one state.
  if (table.size() != 1 || std::isinf(table[0].time))
    return std::nullopt;
  if (report)
    report->value = table[0].time;
  return decodeChoice(order, history, 0);
}

bool LayoutProblem::denseTablesFit(const Order &order,
                                   const StateClasses &classes,
                                   const SolveOptions &options,
                                   std::string &why,
                                   SearchReport *report) const {
  const unsigned n = nodes.size();
  std::vector<Slot> slots;
  std::vector<bool> none(n, false);
  for (unsigned p = 0; p < n; ++p) {
    Step step = planStep(slots, order.nodeAt[p], p, order,
                         classes.laterPositions, none);
    double size = 1;
    for (const Slot &slot : step.nextFrontier)
      size *= classes.representative[slot.node][slot.epoch].size();
    if (report)
      report->states += size;
    if (size > options.maxStatesPerStep) {
      why = "more than " + std::to_string(options.maxStatesPerStep) +
            " states at one op";
      if (report) {
        report->crowded.clear();
        for (const Slot &slot : step.nextFrontier)
          report->crowded.push_back(slot.node);
        std::stable_sort(report->crowded.begin(), report->crowded.end(),
                         [&](unsigned a, unsigned b) {
                           return order.lastPos[a] > order.lastPos[b];
                         });
      }
      return false;
    }
    slots = std::move(step.nextFrontier);
  }
  return true;
}

std::vector<unsigned> LayoutProblem::decodeChoice(
    const Order &order,
    const std::vector<std::vector<std::pair<uint32_t, uint32_t>>> &history,
    uint32_t entry) {
  std::vector<unsigned> choice(history.size(), 0);
  for (unsigned p = history.size(); p-- > 0;) {
    auto [parent, strategy] = history[p][entry];
    choice[order.nodeAt[p]] = strategy;
    entry = parent;
  }
  return choice;
}

LayoutProblem::StateClasses LayoutProblem::stateClasses(const Order &order,
                                                        bool memory) const {
  const unsigned n = nodes.size();
  StateClasses result;
  std::vector<std::vector<unsigned>> &laterPositions = result.laterPositions;
  laterPositions.resize(n);
  for (unsigned i = 0; i < n; ++i) {
    for (unsigned e : nodes[i].out)
      laterPositions[i].push_back(order.pos[edges[e].to]);
    std::sort(laterPositions[i].begin(), laterPositions[i].end());
    laterPositions[i].erase(
        std::unique(laterPositions[i].begin(), laterPositions[i].end()),
        laterPositions[i].end());
  }
  auto &classOf = result.classOf;
  auto &representative = result.representative;
  classOf.resize(n);
  representative.resize(n);
  for (unsigned i = 0; i < n; ++i) {
    unsigned epochs = laterPositions[i].size() + 1;
    classOf[i].resize(epochs);
    representative[i].resize(epochs);
    for (unsigned j = 0; j < epochs; ++j) {
      std::map<std::vector<double>, uint32_t> classes;
      for (unsigned s = 0; s < numStrategies(i); ++s) {
        if (!allowed(i, s)) {
          classOf[i][j].push_back(0); // never asked for
          continue;
        }
        std::vector<double> signature;
        for (unsigned e : nodes[i].out)
          if (j == 0 || order.pos[edges[e].to] > laterPositions[i][j - 1])
            signature.push_back(edges[e].fromLayout[s]);
        if (memory && !nodes[i].spec.argument)
          signature.push_back(nodes[i].bytes(s));
        auto [it, inserted] = classes.try_emplace(signature, classes.size());
        if (inserted)
          representative[i][j].push_back(s);
        classOf[i][j].push_back(it->second);
      }
    }
  }
  return result;
}

std::optional<std::vector<unsigned>>
LayoutProblem::searchExact(Objective objective, const SolveOptions &options,
                           std::string &why, Search search,
                           SearchReport *report, double upper) const {
  const double start = clock();
  const unsigned n = nodes.size();
  const bool memory = objective == Objective::Peak || options.budget;
  Order order = memoryOrder();

  const StateClasses stateClassesOf = stateClasses(order, memory);
  const std::vector<std::vector<unsigned>> &laterPositions =
      stateClassesOf.laterPositions;
  const auto &classOf = stateClassesOf.classOf;
  const auto &representative = stateClassesOf.representative;

  // Without memory a state holds one label, and the states of a step are
  // few enough to index densely (mixed radix over the slots' class
  // counts): no hashing.
  if (search == Search::Relaxed || search == Search::Sizes ||
      (!memory && search == Search::Exact))
    return searchDense(order, stateClassesOf, options, search, start, why,
                       report, upper);
  const bool beam = search == Search::Beam;
  // Branch and bound on time, as in the dense search: the known choice's
  // own partial choices always pass, so the search never ends empty
  // because of it.
  std::vector<double> toGo;
  if (objective == Objective::Time && !std::isinf(upper))
    toGo = costToGo(order);
  auto hopeless = [&](double time, unsigned p) {
    return !toGo.empty() && time + toGo[p + 1] > upper * (1 + 1e-9) + 1e-300;
  };
  const std::vector<bool> noneDropped(n, false);

  // history[p][entry] = {entry at p - 1, strategy of the node at p}.
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> history(n);
  std::vector<State> states(1);
  states[0].labels.emplace_back();
  std::vector<Slot> frontier;

  for (unsigned p = 0; p < n; ++p) {
    unsigned k = order.nodeAt[p];
    const Node &node = nodes[k];
    Step step = planStep(frontier, k, p, order, laterPositions, noneDropped);
    const std::vector<unsigned> &fromSlot = step.fromSlot;
    const auto &kept = step.kept;
    bool keepNew = step.keepNew;
    std::vector<Slot> &nextFrontier = step.nextFrontier;

    std::vector<State> next;
    std::unordered_map<std::string, uint32_t> index;
    size_t labelCount = 0;
    std::vector<uint32_t> classes;
    std::vector<unsigned> strategyOf(frontier.size());

    for (const State &state : states) {
      if ((&state - states.data()) % 4096 == 4095 &&
          pastTimeLimit(start, options, why))
        return std::nullopt;
      // Every strategy against every incoming edge, its target state
      // looked up (a hashed key: kWorkPerLookup), and each label of the
      // state made anew (kWorkPerLabel) and compared with the labels
      // already at its target.
      workDone += frontier.size() +
                  numStrategies(k) * (kWorkPerLookup + node.in.size() +
                                      kWorkPerLabel * state.labels.size());
      double liveFrontier = 0;
      for (unsigned slot = 0; slot < frontier.size(); ++slot) {
        auto [a, epoch] = frontier[slot];
        strategyOf[slot] = representative[a][epoch][state.classes[slot]];
        if (memory && !nodes[a].spec.argument)
          liveFrontier += nodes[a].bytes(strategyOf[slot]);
      }
      std::vector<uint32_t> keptClasses;
      for (auto [slot, nextEpoch] : kept)
        keptClasses.push_back(
            classOf[frontier[slot].node][nextEpoch][strategyOf[slot]]);
      for (unsigned s = 0; s < numStrategies(k); ++s) {
        if (!allowed(k, s))
          continue;
        Cost add = objective == Objective::Time ? node.unary(s) : Cost();
        double moved = 0;
        bool possible = true;
        for (unsigned i = 0; i < node.in.size(); ++i) {
          const Edge &edge = edges[node.in[i]];
          unsigned sf = strategyOf[fromSlot[i]];
          double cost = edge.cost(sf, s);
          if (std::isinf(cost)) {
            possible = false;
            break;
          }
          if (objective == Objective::Time)
            add.time += cost;
          if (memory)
            moved += edge.moved(sf, s);
        }
        if (!possible)
          continue;
        double argAdd = 0, heldAdd = 0, live = 0;
        if (memory) {
          argAdd = node.spec.argument ? node.bytes(s) : 0;
          heldAdd = node.spec.heldToEnd ? node.bytes(s) : 0;
          live =
              liveFrontier +
              (node.spec.argument || node.spec.heldToEnd ? 0 : node.bytes(s)) +
              moved;
        }
        classes = keptClasses;
        if (keepNew)
          classes.push_back(classOf[k][0][s]);
        auto [slotIt, fresh] = index.try_emplace(keyOf(classes), next.size());
        if (fresh) {
          if (!beam && next.size() >= options.maxStatesPerStep) {
            why = "more than " + std::to_string(options.maxStatesPerStep) +
                  " states at one op";
            return std::nullopt;
          }
          next.push_back(State{classes, {}});
        }
        State &target = next[slotIt->second];
        for (const Label &label : state.labels) {
          Label candidate{label.cost + add, label.argBytes + argAdd,
                          std::max(label.maxLive, live + label.heldBytes),
                          label.heldBytes + heldAdd, 0};
          if (options.budget && objective == Objective::Time &&
              candidate.argBytes + candidate.maxLive >
                  *options.budget * (1 + 1e-12))
            continue;
          if (std::isinf(candidate.cost.time) ||
              hopeless(candidate.cost.time, p))
            continue;
          workDone += target.labels.size();
          bool beaten = false;
          for (const Label &other : target.labels)
            if (dominates(other, candidate)) {
              beaten = true;
              break;
            }
          if (beaten)
            continue;
          size_t before = target.labels.size();
          target.labels.erase(
              std::remove_if(target.labels.begin(), target.labels.end(),
                             [&](const Label &other) {
                               return dominates(candidate, other);
                             }),
              target.labels.end());
          labelCount -= before - target.labels.size();
          candidate.entry = history[p].size();
          history[p].emplace_back(label.entry, s);
          target.labels.push_back(candidate);
          ++labelCount;
        }
      }
    }
    if (!beam && labelCount > 4 * options.maxStatesPerStep) {
      why = "more than " + std::to_string(4 * options.maxStatesPerStep) +
            " partial choices at one op";
      return std::nullopt;
    }
    if (pastTimeLimit(start, options, why))
      return std::nullopt;
    // States no label reaches (all pruned by the budget) are dropped.
    next.erase(std::remove_if(next.begin(), next.end(),
                              [](const State &s) { return s.labels.empty(); }),
               next.end());
    if (next.empty())
      return std::nullopt; // nothing fits the budget
    if (report)
      report->made += labelCount;
    if (beam && labelCount > options.beamWidth) {
      workDone += labelCount;
      keepBest(next, options.beamWidth, /*lean=*/bool(options.budget),
               /*onlyLean=*/objective == Objective::Peak);
      if (report)
        report->pruned = true;
    }
    // Only the surviving labels' history is needed to decode the choice.
    std::vector<std::pair<uint32_t, uint32_t>> surviving;
    for (State &state : next)
      for (Label &label : state.labels) {
        surviving.push_back(history[p][label.entry]);
        label.entry = surviving.size() - 1;
      }
    history[p] = std::move(surviving);
    states = std::move(next);
    frontier = std::move(nextFrontier);
  }

  // The frontier is empty now: one state, whose best label is the optimum.
  const Label *best = nullptr;
  auto total = [&](const Label &label) {
    return label.argBytes + label.maxLive;
  };
  for (const State &state : states)
    for (const Label &label : state.labels)
      if (!best || (objective == Objective::Time ? label.cost < best->cost
                                                 : total(label) < total(*best)))
        best = &label;
  if (!best)
    return std::nullopt;
  return decodeChoice(order, history, best->entry);
}
