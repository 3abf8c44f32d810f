//===- LayoutSolver.cpp - choose one strategy per node, minimising cost ---===//

#include "dist/Planner/LayoutSolver.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

using namespace dist::planner::layout;

/// Whether `solution` keeps within the options' memory budget.
static bool fitsBudget(const Solution &solution, const SolveOptions &options) {
  return !options.budget || solution.peakBytes <= *options.budget * (1 + 1e-12);
}

unsigned LayoutProblem::addNode(NodeSpec spec) {
  assert(!spec.work.empty() && "a node needs a strategy");
  assert((spec.seconds.empty() || spec.seconds.size() == spec.work.size()) &&
         (spec.bytes.empty() || spec.bytes.size() == spec.work.size()));
  nodes.push_back(Node{std::move(spec), {}, {}});
  return nodes.size() - 1;
}

void LayoutProblem::addEdge(unsigned from, unsigned to,
                            std::vector<unsigned> fromLayout,
                            std::vector<unsigned> toLayout,
                            unsigned numToLayouts, std::vector<double> table,
                            double bytes, std::vector<double> movedBytes,
                            std::vector<uint8_t> bounded,
                            std::function<double(size_t)> price,
                            std::function<std::string(size_t)> request) {
  assert(from < to && "edges follow program order");
  assert(movedBytes.empty() || movedBytes.size() == numToLayouts);
  assert((bounded.empty() || (bounded.size() == table.size() && price)) &&
         "a bounded entry needs its exact price");
  edges.push_back(Edge{from, to, std::move(fromLayout), std::move(toLayout),
                       numToLayouts, std::move(table), bytes,
                       std::move(movedBytes), std::move(bounded),
                       std::move(price), std::move(request)});
  nodes[from].out.push_back(edges.size() - 1);
  nodes[to].in.push_back(edges.size() - 1);
}

Solution LayoutProblem::evaluate(const std::vector<unsigned> &choice) const {
  Solution solution;
  solution.choice = choice;
  for (unsigned n = 0; n < nodes.size(); ++n) {
    Cost unary = nodes[n].unary(choice[n]);
    solution.compute += unary.time;
    solution.total.work += unary.work;
  }
  for (const Edge &e : edges)
    solution.comm += e.cost(choice[e.from], choice[e.to]);
  solution.total.time = solution.comm + solution.compute;
  solution.peakBytes = peakBytes(choice);
  return solution;
}

LayoutProblem::Order LayoutProblem::memoryOrder() const {
  // Program order, except that what reads only fixed layouts (an argument,
  // a slice of a fixed weight) is computed right before its first use, as a
  // scheduler would: an argument is live for the whole
  // function wherever it stands, and the others become live later. This
  // keeps the set of live values the exact search tracks small.
  Order order;
  unsigned n = nodes.size();
  std::vector<bool> deferred(n, false), placed(n, false);
  for (unsigned i = 0; i < n; ++i) {
    if (nodes[i].out.empty())
      continue;
    // A node reading a deferred one is deferred along only when that keeps
    // the deferred one live no longer: it has no other reader after the
    // node's first use.
    unsigned firstUse = nodes.size();
    for (unsigned f : nodes[i].out)
      firstUse = std::min(firstUse, edges[f].to);
    deferred[i] = true;
    for (unsigned e : nodes[i].in) {
      unsigned m = edges[e].from;
      if (numStrategies(m) == 1)
        continue;
      bool livesAnyway = llvm::any_of(nodes[m].out, [&](unsigned f) {
        return edges[f].to != i && edges[f].to >= firstUse;
      });
      bool soleReader = llvm::all_of(
          nodes[m].out, [&](unsigned f) { return edges[f].to == i; });
      if (!deferred[m] || !(soleReader || livesAnyway))
        deferred[i] = false;
    }
  }
  // Places `i` after its deferred operands (their operands first).
  std::vector<std::pair<unsigned, unsigned>> stack;
  auto place = [&](unsigned root) {
    stack.assign(1, {root, 0});
    while (!stack.empty()) {
      auto &[i, next] = stack.back();
      if (next < nodes[i].in.size()) {
        unsigned m = edges[nodes[i].in[next++]].from;
        if (!placed[m])
          stack.push_back({m, 0});
        continue;
      }
      if (!placed[i]) {
        placed[i] = true;
        order.nodeAt.push_back(i);
      }
      stack.pop_back();
    }
  };
  for (unsigned i = 0; i < n; ++i)
    if (!deferred[i])
      place(i);
  // Nothing depends on a deferred node left unplaced; none is, since each
  // has a use, but keep the order complete regardless.
  for (unsigned i = 0; i < n; ++i)
    if (!placed[i])
      place(i);
  order.pos.assign(n, 0);
  for (unsigned p = 0; p < n; ++p)
    order.pos[order.nodeAt[p]] = p;
  order.lastPos = order.pos;
  for (const Edge &e : edges) {
    unsigned last = std::max(order.pos[e.from], order.pos[e.to]);
    order.lastPos[e.from] = std::max(order.lastPos[e.from], last);
    order.lastPos[e.to] = std::max(order.lastPos[e.to], last);
  }
  return order;
}

double LayoutProblem::peakBytes(const std::vector<unsigned> &choice) const {
  Order order = memoryOrder();
  unsigned n = nodes.size();
  // Live bytes by position: a difference array over each node's interval.
  std::vector<double> delta(n + 1, 0.0);
  double arguments = 0;
  for (unsigned i = 0; i < n; ++i) {
    double bytes = nodes[i].bytes(choice[i]);
    if (nodes[i].spec.argument) {
      arguments += bytes;
      continue;
    }
    if (nodes[i].spec.heldToEnd) {
      delta[order.pos[i] + 1] += bytes;
      delta[n] -= bytes;
      continue;
    }
    delta[order.pos[i]] += bytes;
    delta[order.lastPos[i] + 1] -= bytes;
  }
  std::vector<double> moved(n, 0.0);
  for (const Edge &e : edges)
    moved[order.pos[e.to]] += e.moved(choice[e.from], choice[e.to]);
  double live = 0, peak = 0;
  for (unsigned p = 0; p < n; ++p) {
    live += delta[p];
    peak = std::max(peak, live + moved[p]);
  }
  return arguments + peak;
}

Cost LayoutProblem::localCost(unsigned n, unsigned s,
                              const std::vector<unsigned> &choice,
                              bool onlyDecided) const {
  Cost cost = nodes[n].unary(s);
  for (unsigned e : nodes[n].in)
    cost.time += edges[e].cost(choice[edges[e].from], s);
  if (!onlyDecided)
    for (unsigned e : nodes[n].out)
      cost.time += edges[e].cost(s, choice[edges[e].to]);
  return cost;
}

std::vector<unsigned> LayoutProblem::dynamicProgramming() const {
  // Forward: best[n][s] = work + sum over operands of the cheapest way to
  // produce them and move them into the layout s needs. A producer used
  // several times is counted once per use here (exact on trees).
  std::vector<std::vector<Cost>> best(nodes.size());
  for (unsigned n = 0; n < nodes.size(); ++n) {
    const Node &node = nodes[n];
    best[n].resize(node.spec.work.size());
    for (unsigned s = 0; s < node.spec.work.size(); ++s) {
      Cost cost = node.unary(s);
      for (unsigned e : node.in) {
        const Edge &edge = edges[e];
        Cost cheapest{std::numeric_limits<double>::infinity(), 0};
        for (unsigned t = 0; t < nodes[edge.from].spec.work.size(); ++t) {
          Cost via = best[edge.from][t] + Cost{edge.cost(t, s), 0};
          if (via < cheapest)
            cheapest = via;
        }
        cost += cheapest;
      }
      best[n][s] = cost;
    }
  }
  // Backward: a node takes the strategy cheapest for its own subtree plus
  // the moves into every consumer's already chosen strategy.
  std::vector<unsigned> choice(nodes.size(), 0);
  for (unsigned n = nodes.size(); n-- > 0;) {
    Cost bestCost{std::numeric_limits<double>::infinity(), 0};
    for (unsigned s = 0; s < numStrategies(n); ++s) {
      Cost cost = best[n][s];
      for (unsigned e : nodes[n].out)
        cost.time += edges[e].cost(s, choice[edges[e].to]);
      if (cost < bestCost) {
        bestCost = cost;
        choice[n] = s;
      }
    }
  }
  return choice;
}

std::vector<unsigned> LayoutProblem::perOp() const {
  std::vector<unsigned> choice(nodes.size(), 0);
  for (unsigned n = 0; n < nodes.size(); ++n) {
    Cost bestCost{std::numeric_limits<double>::infinity(), 0};
    for (unsigned s = 0; s < numStrategies(n); ++s) {
      Cost cost = localCost(n, s, choice, /*onlyDecided=*/true);
      if (cost < bestCost) {
        bestCost = cost;
        choice[n] = s;
      }
    }
  }
  return choice;
}

std::vector<unsigned> LayoutProblem::keepLarger() const {
  std::vector<unsigned> choice(nodes.size(), 0);
  for (unsigned n = 0; n < nodes.size(); ++n) {
    const Node &node = nodes[n];
    // The largest operand (first in operand order among equals).
    const Edge *largest = nullptr;
    for (unsigned e : node.in)
      if (!largest || edges[e].bytes > largest->bytes)
        largest = &edges[e];
    Cost bestCost{std::numeric_limits<double>::infinity(), 0};
    bool bestKeeps = false;
    for (unsigned s = 0; s < node.spec.work.size(); ++s) {
      bool keeps = largest && largest->cost(choice[largest->from], s) == 0;
      Cost cost = localCost(n, s, choice, /*onlyDecided=*/true);
      if ((keeps && !bestKeeps) || (keeps == bestKeeps && cost < bestCost)) {
        bestCost = cost;
        bestKeeps = keeps;
        choice[n] = s;
      }
    }
  }
  return choice;
}

void LayoutProblem::improve(std::vector<unsigned> &choice) const {
  // Iterated conditional modes: each pass strictly lowers the total or
  // stops; the bound on passes only guards against cycling on ties.
  for (int pass = 0; pass < 32; ++pass) {
    bool changed = false;
    for (unsigned n = 0; n < nodes.size(); ++n) {
      if (numStrategies(n) < 2)
        continue;
      Cost current = localCost(n, choice[n], choice, false);
      for (unsigned s = 0; s < numStrategies(n); ++s) {
        Cost cost = localCost(n, s, choice, false);
        if (cost < current) {
          current = cost;
          choice[n] = s;
          changed = true;
        }
      }
    }
    if (!changed)
      return;
  }
}

std::vector<unsigned> LayoutProblem::heuristic() const {
  if (heuristicChoice)
    return *heuristicChoice;
  std::vector<std::vector<unsigned>> candidates{dynamicProgramming(), perOp(),
                                                keepLarger()};
  std::vector<unsigned> choice;
  Cost bestCost{std::numeric_limits<double>::infinity(), 0};
  for (std::vector<unsigned> &candidate : candidates) {
    improve(candidate);
    Cost cost = evaluate(candidate).total;
    if (choice.empty() || cost < bestCost) {
      bestCost = cost;
      choice = candidate;
    }
  }
  heuristicChoice = choice;
  return choice;
}

double LayoutProblem::lowerBound() const {
  // Every edge priced at its cheapest given only its consumer's strategy:
  // each node's best, summed, bounds every choice from below.
  double bound = 0;
  for (unsigned n = 0; n < nodes.size(); ++n) {
    double best = std::numeric_limits<double>::infinity();
    for (unsigned s = 0; s < numStrategies(n); ++s) {
      double cost = nodes[n].unary(s).time;
      for (unsigned e : nodes[n].in) {
        double cheapest = std::numeric_limits<double>::infinity();
        for (unsigned t = 0; t < numStrategies(edges[e].from); ++t)
          cheapest = std::min(cheapest, edges[e].cost(t, s));
        cost += cheapest;
      }
      best = std::min(best, cost);
    }
    bound += best;
  }
  return bound;
}

std::vector<std::vector<unsigned>>
LayoutProblem::beams(const SolveOptions &options, Objective objective) const {
  // Doubling widths while the next, about twice the last one's work, keeps
  // within the work allowed (counting work rather than time gives the same
  // choice from run to run; the time limit only guards). A beam that never
  // had to leave a partial choice out was the exact search: a wider one
  // adds nothing.
  std::vector<std::vector<unsigned>> found;
  const double start = clock();
  size_t made = 0;
  for (size_t width = std::min<size_t>(16, options.beamWidth);; width *= 2) {
    SolveOptions beamOptions = options;
    beamOptions.beamWidth = width;
    beamOptions.timeLimitSeconds = options.timeLimitSeconds - (clock() - start);
    SearchReport report;
    std::string why;
    if (std::optional<std::vector<unsigned>> beam =
            searchExact(objective, beamOptions, why, Search::Beam, &report))
      found.push_back(std::move(*beam));
    else if (!why.empty())
      break; // out of time
    made += report.made;
    if (!report.pruned || width >= options.beamWidth ||
        made + 2 * report.made > options.beamWork)
      break;
  }
  return found;
}

std::vector<unsigned>
LayoutProblem::fallback(const SolveOptions &options,
                        std::vector<std::vector<unsigned>> candidates,
                        double &bound) const {
  candidates.push_back(heuristic());
  // The relaxation ignores memory: its optimum bounds the optimum under a
  // budget too. It gets half the exact search's time.
  SolveOptions relaxation = options;
  relaxation.budget.reset();
  relaxation.timeLimitSeconds = options.timeLimitSeconds / 2;
  double relaxed = -std::numeric_limits<double>::infinity();
  SearchReport report;
  std::string why;
  if (std::optional<std::vector<unsigned>> possible = searchExact(
          Objective::Time, relaxation, why, Search::Relaxed, &report)) {
    candidates.push_back(std::move(*possible));
    relaxed = report.value;
  }
  bound = std::max(lowerBound(), relaxed);

  auto fits = [&](const Solution &s) { return fitsBudget(s, options); };
  // None fits: the leanest choices the searches find, which may.
  SolveOptions lean = options;
  lean.budget.reset();
  lean.timeLimitSeconds = options.timeLimitSeconds / 2;
  if (options.budget &&
      llvm::none_of(candidates, [&](const std::vector<unsigned> &c) {
        return fits(evaluate(c));
      })) {
    if (std::optional<std::vector<unsigned>> least =
            searchExact(Objective::Peak, lean, why))
      candidates.push_back(std::move(*least));
    else
      for (std::vector<unsigned> &least : beams(lean, Objective::Peak))
        candidates.push_back(std::move(least));
  }
  std::optional<Solution> best;
  for (const std::vector<unsigned> &candidate : candidates) {
    Solution s = evaluate(candidate);
    if (!fits(s))
      continue;
    if (!best || s.total < best->total)
      best = std::move(s);
  }
  if (!best)
    return candidates.back();
  // A second look: with the arguments' layouts fixed as chosen (a free
  // argument is what multiplies the states: it lives through the whole
  // function), the rest is often small enough to solve exactly.
  fixed.assign(nodes.size(), -1);
  for (unsigned n = 0; n < nodes.size(); ++n)
    if (nodes[n].spec.argument)
      fixed[n] = best->choice[n];
  SolveOptions second = options;
  second.timeLimitSeconds = options.timeLimitSeconds / 2;
  std::optional<std::vector<unsigned>> rest =
      searchExact(Objective::Time, second, why);
  fixed.clear();
  if (rest) {
    Solution s = evaluate(*rest);
    if (fits(s) && s.total < best->total)
      best = std::move(s);
  }
  // Local improvement that keeps the choice within the budget.
  if (options.budget)
    improveWithin(best->choice, *options.budget, options.timeLimitSeconds / 2);
  return best->choice;
}

void LayoutProblem::improveWithin(std::vector<unsigned> &choice, double budget,
                                  double timeLimitSeconds) const {
  // As improve(), accepting a change only when the peak stays within the
  // budget (each check replays the liveness: the time limit bounds it).
  const double start = clock();
  for (int pass = 0; pass < 32; ++pass) {
    bool changed = false;
    for (unsigned n = 0; n < nodes.size(); ++n) {
      if (clock() - start > timeLimitSeconds)
        return;
      workDone +=
          numStrategies(n) * (1.0 + nodes[n].in.size() + nodes[n].out.size());
      if (numStrategies(n) < 2)
        continue;
      Cost current = localCost(n, choice[n], choice, false);
      unsigned was = choice[n];
      for (unsigned s = 0; s < numStrategies(n); ++s) {
        Cost cost = localCost(n, s, choice, false);
        if (!(cost < current))
          continue;
        unsigned before = choice[n];
        choice[n] = s;
        workDone += nodes.size() + edges.size();
        if (peakBytes(choice) <= budget * (1 + 1e-12)) {
          current = cost;
          continue;
        }
        choice[n] = before;
      }
      changed |= choice[n] != was;
    }
    if (!changed)
      return;
  }
}

bool LayoutProblem::priceExactly(const std::vector<unsigned> &choice) {
  bool changed = false;
  for (Edge &edge : edges) {
    if (edge.bounded.empty())
      continue;
    size_t i = edge.index(choice[edge.from], choice[edge.to]);
    if (!edge.bounded[i])
      continue;
    edge.bounded[i] = 0;
    double exact = edge.price(i);
    if (exact != edge.table[i]) {
      edge.table[i] = exact;
      changed = true;
    }
  }
  if (changed)
    heuristicChoice.reset();
  return changed;
}

size_t LayoutProblem::plansToPriceAll() const {
  llvm::StringSet<> requests;
  size_t unnamed = 0;
  for (const Edge &edge : edges)
    for (size_t i = 0; i < edge.bounded.size(); ++i) {
      if (!edge.bounded[i])
        continue;
      if (edge.request)
        requests.insert(edge.request(i));
      else
        ++unnamed;
      if (requests.size() + unnamed > kMaxPlansPricedAtOnce)
        return requests.size() + unnamed;
    }
  return requests.size() + unnamed;
}

Solution LayoutProblem::pricedExactly(const Solution &solution,
                                      const SolveOptions &options) {
  priceExactly(solution.choice);
  Solution exact = evaluate(solution.choice);
  exact.fits = fitsBudget(exact, options);
  exact.lowerBound = std::min(solution.lowerBound, exact.total.time);
  exact.fallbackReason = solution.fallbackReason;
  return exact;
}

bool LayoutProblem::priceAll() {
  std::vector<std::pair<unsigned, size_t>> entries;
  for (unsigned e = 0; e < edges.size(); ++e)
    for (size_t i = 0; i < edges[e].bounded.size(); ++i)
      if (edges[e].bounded[i])
        entries.push_back({e, i});
  std::vector<double> exact(entries.size());
  auto body = [&](size_t k) {
    exact[k] = edges[entries[k].first].price(entries[k].second);
  };
  if (parallelFor)
    parallelFor(entries.size(), body);
  else
    for (size_t k = 0; k < entries.size(); ++k)
      body(k);
  bool changed = false;
  for (size_t k = 0; k < entries.size(); ++k) {
    auto [e, i] = entries[k];
    edges[e].bounded[i] = 0;
    changed |= exact[k] != edges[e].table[i];
    edges[e].table[i] = exact[k];
  }
  if (changed)
    heuristicChoice.reset();
  return changed;
}

std::optional<std::vector<unsigned>>
LayoutProblem::searchByCases(const SolveOptions &options, std::string &why,
                             unsigned depth) const {
  // Each case is the exact search with one more node fixed; together the
  // cases cover every choice, so the cheapest case's optimum is the
  // optimum. `fixed` is this search's own while it runs.
  const double start = clock();
  const bool outermost = fixed.empty();
  if (outermost)
    fixed.assign(nodes.size(), -1);
  std::optional<std::vector<unsigned>> best;
  double bestTime = std::numeric_limits<double>::infinity();
  auto timeLeft = [&] { return options.timeLimitSeconds - (clock() - start); };
  // The states all cases below the current ones would make (each case
  // about as many as the first; infinity past `levels`): the search by
  // cases starts only when they fit in its time.
  // The longest-lived node of the crowded step that still has a choice.
  auto branchOf = [&](const SearchReport &report) -> std::optional<unsigned> {
    for (unsigned node : report.crowded)
      if (fixed[node] < 0 && numStrategies(node) > 1)
        return node;
    return std::nullopt;
  };
  std::function<double(unsigned)> estimate = [&](unsigned levels) -> double {
    SearchReport report;
    std::string crowded;
    if (searchExact(Objective::Time, options, crowded, Search::Sizes, &report))
      return report.states;
    std::optional<unsigned> branch = branchOf(report);
    if (levels == 0 || !branch)
      return std::numeric_limits<double>::infinity();
    fixed[*branch] = heuristic()[*branch];
    double each = estimate(levels - 1);
    fixed[*branch] = -1;
    return numStrategies(*branch) * each;
  };
  // Whether every case below finished (false: `why` says which limit).
  std::function<bool(unsigned)> cases = [&](unsigned levels) -> bool {
    SolveOptions left = options;
    left.timeLimitSeconds = timeLeft();
    if (left.timeLimitSeconds <= 0) {
      why = timeLimitPassed(options.timeLimitSeconds);
      return false;
    }
    SearchReport report;
    std::string crowded;
    if (searchExact(Objective::Time, left, crowded, Search::Sizes, &report)) {
      // Small enough: this case exactly, cut short where it cannot beat
      // the best case so far.
      std::string stopped;
      std::optional<std::vector<unsigned>> choice = searchExact(
          Objective::Time, left, stopped, Search::Exact, nullptr, bestTime);
      if (!stopped.empty()) {
        why = stopped;
        return false;
      }
      if (choice) {
        double time = evaluate(*choice).total.time;
        if (!best || time < bestTime) {
          best = std::move(choice);
          bestTime = time;
        }
      }
      return true;
    }
    std::optional<unsigned> branch = branchOf(report);
    if (levels == 0 || !branch) {
      why = crowded;
      return false;
    }
    // The heuristic's strategy first: its case holds a good choice, whose
    // cost then cuts the other cases short.
    std::vector<unsigned> order(numStrategies(*branch));
    std::iota(order.begin(), order.end(), 0u);
    unsigned first = heuristic()[*branch];
    std::stable_partition(order.begin(), order.end(),
                          [&](unsigned s) { return s == first; });
    for (unsigned s : order) {
      fixed[*branch] = s;
      bool finished = cases(levels - 1);
      fixed[*branch] = -1;
      if (!finished)
        return false;
    }
    return true;
  };
  // A state costs some tens of units of work (its strategies against its
  // incoming edges; 21 measured on a loop of Llama layers on 2 x 4, whose
  // 14 cases make 2e7 states): too many cases for the time are not
  // started (a Llama layer on 2 x 2 x 2 would make 9e10).
  constexpr double kWorkPerState = 24;
  bool finished = false;
  if (estimate(depth) * kWorkPerState >
      options.timeLimitSeconds * kWorkPerSecond)
    why = "the cases would pass the time limit";
  else
    finished = cases(depth);
  if (outermost)
    fixed.clear();
  if (!finished)
    return std::nullopt;
  if (!best)
    why = "no case of the search by cases beat the heuristic";
  return best;
}

Solution LayoutProblem::solve(const SolveOptions &options) {
  // Rounds of lazy pricing share the time limit (pricing itself, the
  // planner's work, adds none to the work clock); the last round's choice,
  // priced exactly, is the answer, optimal when its round proved it on tables
  // whose entries it uses are all exact. A round that cannot prove its
  // choice optimal would only repeat the expensive fallback: then every
  // entry is priced, and one last round answers (keeping the earlier
  // choice when it is still the better one).
  const double start = clock();
  auto timeLeft = [&] {
    return std::max(0.0, options.timeLimitSeconds - (clock() - start));
  };
  auto fits = [&](const Solution &s) { return fitsBudget(s, options); };
  // When the exact search cannot finish, no round can prove anything: price
  // everything before the one round, if that is affordable (below).
  const bool affordable = plansToPriceAll() <= kMaxPlansPricedAtOnce;
  if (options.chooser == Chooser::Optimal && affordable) {
    SolveOptions sizes = options;
    sizes.budget.reset();
    std::string why;
    if (!searchExact(Objective::Time, sizes, why, Search::Sizes))
      priceAll();
  }
  Solution solution;
  while (true) {
    SolveOptions round = options;
    round.timeLimitSeconds = timeLeft();
    solution = solveOnce(round);
    if (!solution.fits || solution.choice.empty())
      break;
    if (!solution.optimal && !affordable) {
      // Too many pairs to plan them all: each round's choice is priced
      // exactly and the search runs again on the refined tables, until a
      // choice uses exact entries only or the time is spent; the cheapest
      // choice at its exact cost is the answer (optimal when a round proved
      // a choice that needed no new prices). These rounds get at least half
      // the limit, as the last round below does.
      Solution best = pricedExactly(solution, options);
      std::string reason = solution.fallbackReason;
      const double refineStart = clock();
      const double refineLimit =
          std::max(timeLeft(), options.timeLimitSeconds / 2);
      auto refineLeft = [&] { return refineLimit - (clock() - refineStart); };
      bool changed = true;
      while (changed && refineLeft() > 0) {
        SolveOptions next = options;
        next.timeLimitSeconds = refineLeft();
        Solution again = solveOnce(next);
        if (!again.fits || again.choice.empty())
          break;
        changed = priceExactly(again.choice);
        if (again.optimal && !changed)
          return again;
        if (!again.optimal)
          reason = again.fallbackReason;
        Solution exact = pricedExactly(again, options);
        if (exact.fits && (!best.fits || exact.total < best.total))
          best = std::move(exact);
      }
      best.optimal = false;
      best.fallbackReason =
          refineLeft() <= 0 || reason.rfind("the time limit of", 0) == 0
              ? timeLimitPassed(options.timeLimitSeconds)
              : reason;
      return best;
    }
    if (!solution.optimal) {
      if (!priceAll())
        break;
      // The last round gets at least half the limit.
      round.timeLimitSeconds =
          std::max(timeLeft(), options.timeLimitSeconds / 2);
      Solution last = solveOnce(round);
      Solution earlier = evaluate(solution.choice);
      earlier.fits = fits(earlier);
      earlier.lowerBound = last.lowerBound;
      earlier.fallbackReason = solution.fallbackReason;
      solution = (last.fits && (!earlier.fits || !(earlier.total < last.total)))
                     ? std::move(last)
                     : std::move(earlier);
      break;
    }
    if (!priceExactly(solution.choice))
      break;
    if (timeLeft() <= 0) {
      // Out of time for another round: the choice at its exact cost.
      solution = pricedExactly(solution, options);
      solution.fallbackReason = timeLimitPassed(options.timeLimitSeconds);
      return solution;
    }
  }
  // A round had what the earlier ones left of the time.
  if (!solution.optimal &&
      solution.fallbackReason.rfind("the time limit of", 0) == 0)
    solution.fallbackReason = timeLimitPassed(options.timeLimitSeconds);
  return solution;
}

Solution LayoutProblem::solveOnce(const SolveOptions &options) const {
  std::vector<unsigned> choice;
  std::string why;
  bool optimal = false;
  std::optional<double> bound;
  switch (options.chooser) {
  case Chooser::Greedy:
    choice = perOp();
    break;
  case Chooser::KeepLarger:
    choice = keepLarger();
    break;
  case Chooser::Optimal: {
    const double start = clock();
    auto left = [&] {
      return std::max(0.0, options.timeLimitSeconds - (clock() - start));
    };
    // The optimum without the budget is the optimum with it when it fits
    // (a relaxation's optimum that is feasible), and the search without
    // memory is much smaller: try it first. Past its limits, the search
    // with memory would be past them too.
    SolveOptions unlimited = options;
    unlimited.budget.reset();
    std::optional<std::vector<unsigned>> exact =
        searchExact(Objective::Time, unlimited, why);
    // Too many states at one op: the same search by cases on the nodes
    // that crowd it (a loop's carry, which lives through the whole body),
    // within half the time; past that the fallback answers as before, for
    // the reason the exact search gave.
    if (!exact && options.caseLevels > 0 && why.rfind("more than", 0) == 0) {
      SolveOptions byCases = unlimited;
      byCases.timeLimitSeconds = options.timeLimitSeconds / 2;
      std::string casesWhy;
      exact = searchByCases(byCases, casesWhy, options.caseLevels);
    }
    bool fits = exact && (!options.budget ||
                          peakBytes(*exact) <= *options.budget * (1 + 1e-12));
    if (fits || !exact) {
      if (exact) {
        choice = std::move(*exact);
        optimal = true;
        break;
      }
      std::vector<std::vector<unsigned>> candidates;
      if (options.budget)
        candidates = beams(options);
      double lower = 0;
      choice = fallback(options, std::move(candidates), lower);
      bound = lower;
      break;
    }
    // Under the budget: beams first (half the time), whose best choice
    // that fits lets the exact search drop every partial choice that
    // cannot beat it.
    SolveOptions beamOptions = options;
    beamOptions.timeLimitSeconds = left() / 2;
    std::vector<std::vector<unsigned>> candidates = beams(beamOptions);
    double upper = std::numeric_limits<double>::infinity();
    for (const std::vector<unsigned> &candidate : candidates)
      upper = std::min(upper, evaluate(candidate).total.time);
    SolveOptions memoryAware = options;
    memoryAware.timeLimitSeconds = left();
    if (std::optional<std::vector<unsigned>> exact = searchExact(
            Objective::Time, memoryAware, why, Search::Exact, nullptr, upper)) {
      choice = std::move(*exact);
      optimal = true;
      break;
    }
    if (why.empty()) {
      // Nothing fits the budget (so no beam found anything either): the
      // caller reports the smallest that does.
      Solution none;
      none.fits = false;
      return none;
    }
    double lower = 0;
    choice = fallback(options, std::move(candidates), lower);
    bound = lower;
    break;
  }
  }
  Solution solution = evaluate(choice);
  solution.fits =
      !options.budget || solution.peakBytes <= *options.budget * (1 + 1e-12);
  solution.lowerBound = bound ? *bound : lowerBound();
  // A fallback choice that meets the lower bound is optimal after all.
  solution.optimal =
      optimal || (bound && solution.fits &&
                  solution.total.time <= *bound * (1 + 1e-9) + 1e-300);
  if (solution.optimal)
    solution.lowerBound = solution.total.time;
  else
    solution.fallbackReason = why;
  return solution;
}

double LayoutProblem::minimumPeakBytes(const SolveOptions &options,
                                       bool &exact) const {
  std::string why;
  if (std::optional<std::vector<unsigned>> least =
          searchExact(Objective::Peak, options, why)) {
    exact = true;
    return peakBytes(*least);
  }
  exact = false;
  // Past the limits: the leanest of the least-bytes strategy per node and
  // the least-memory beams (a choice that needs that much exists).
  std::vector<unsigned> least(nodes.size(), 0);
  for (unsigned n = 0; n < nodes.size(); ++n)
    for (unsigned s = 1; s < numStrategies(n); ++s)
      if (nodes[n].bytes(s) < nodes[n].bytes(least[n]))
        least[n] = s;
  double peak = peakBytes(least);
  for (const std::vector<unsigned> &lean : beams(options, Objective::Peak))
    peak = std::min(peak, peakBytes(lean));
  return peak;
}

llvm::ArrayRef<LayoutChooserWord> dist::planner::layout::layoutChooserWords() {
  static const LayoutChooserWord words[] = {
      {LayoutChooser::Optimal, "optimal", "the whole program at once, exactly"},
      {LayoutChooser::Greedy, "greedy", "op by op, in program order"},
      {LayoutChooser::KeepLarger, "keep-larger",
       "each op keeps its largest operand's layout"},
      {LayoutChooser::Optimal, "joint", "optimal's older name"},
      {LayoutChooser::Greedy, "per-op", "greedy's older name"}};
  return words;
}

llvm::StringRef
dist::planner::layout::stringifyLayoutChooser(LayoutChooser chooser) {
  for (const LayoutChooserWord &word : layoutChooserWords())
    if (word.chooser == chooser)
      return word.word;
  return "";
}

std::optional<LayoutChooser>
dist::planner::layout::parseLayoutChooser(llvm::StringRef text) {
  for (const LayoutChooserWord &word : layoutChooserWords())
    if (text == word.word)
      return word.chooser;
  return std::nullopt;
}
