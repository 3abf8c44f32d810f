//===- LayoutSolver.cpp - choose one strategy per node, minimising cost ---===//

#include "LayoutSolver.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>

using namespace dist::partition;

bool Cost::operator<(const Cost &o) const {
  if (std::isinf(comm) || std::isinf(o.comm))
    return comm < o.comm;
  // Sums of the same reshard costs in another order differ in the last
  // bits; such plans are equally good, and work decides.
  double tolerance = 1e-9 * std::max(std::fabs(comm), std::fabs(o.comm));
  if (std::fabs(comm - o.comm) > tolerance)
    return comm < o.comm;
  return work < o.work;
}

unsigned LayoutProblem::addNode(std::vector<double> work) {
  assert(!work.empty() && "a node needs a strategy");
  nodes.push_back(Node{std::move(work), {}, {}});
  return nodes.size() - 1;
}

void LayoutProblem::addEdge(unsigned from, unsigned to,
                            std::vector<unsigned> fromLayout,
                            std::vector<unsigned> toLayout,
                            unsigned numToLayouts, std::vector<double> table,
                            double bytes) {
  assert(from < to && "edges follow program order");
  edges.push_back(Edge{from, to, std::move(fromLayout), std::move(toLayout),
                       numToLayouts, std::move(table), bytes});
  nodes[from].out.push_back(edges.size() - 1);
  nodes[to].in.push_back(edges.size() - 1);
}

Cost LayoutProblem::evaluate(const std::vector<unsigned> &choice) const {
  Cost total;
  for (unsigned n = 0; n < nodes.size(); ++n)
    total.work += nodes[n].work[choice[n]];
  for (const Edge &e : edges)
    total.comm += e.cost(choice[e.from], choice[e.to]);
  return total;
}

Cost LayoutProblem::localCost(unsigned n, unsigned s,
                              const std::vector<unsigned> &choice,
                              bool onlyDecided) const {
  Cost cost{0, nodes[n].work[s]};
  for (unsigned e : nodes[n].in)
    cost.comm += edges[e].cost(choice[edges[e].from], s);
  if (!onlyDecided)
    for (unsigned e : nodes[n].out)
      cost.comm += edges[e].cost(s, choice[edges[e].to]);
  return cost;
}

std::vector<unsigned> LayoutProblem::dynamicProgramming() const {
  // Forward: best[n][s] = work + sum over operands of the cheapest way to
  // produce them and move them into the layout s needs. A producer used
  // several times is counted once per use here (exact on trees).
  std::vector<std::vector<Cost>> best(nodes.size());
  for (unsigned n = 0; n < nodes.size(); ++n) {
    const Node &node = nodes[n];
    best[n].resize(node.work.size());
    for (unsigned s = 0; s < node.work.size(); ++s) {
      Cost cost{0, node.work[s]};
      for (unsigned e : node.in) {
        const Edge &edge = edges[e];
        Cost cheapest{std::numeric_limits<double>::infinity(), 0};
        for (unsigned t = 0; t < nodes[edge.from].work.size(); ++t) {
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
    for (unsigned s = 0; s < nodes[n].work.size(); ++s) {
      Cost cost = best[n][s];
      for (unsigned e : nodes[n].out)
        cost.comm += edges[e].cost(s, choice[edges[e].to]);
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
    for (unsigned s = 0; s < nodes[n].work.size(); ++s) {
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
    for (unsigned s = 0; s < node.work.size(); ++s) {
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
      if (nodes[n].work.size() < 2)
        continue;
      Cost current = localCost(n, choice[n], choice, false);
      for (unsigned s = 0; s < nodes[n].work.size(); ++s) {
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

std::vector<unsigned> LayoutProblem::solve(Chooser chooser,
                                           Cost &total) const {
  std::vector<unsigned> choice;
  switch (chooser) {
  case Chooser::PerOp:
    choice = perOp();
    break;
  case Chooser::KeepLarger:
    choice = keepLarger();
    break;
  case Chooser::Joint: {
    std::vector<std::vector<unsigned>> candidates{dynamicProgramming(),
                                                  perOp(), keepLarger()};
    Cost bestCost{std::numeric_limits<double>::infinity(), 0};
    for (std::vector<unsigned> &candidate : candidates) {
      improve(candidate);
      Cost cost = evaluate(candidate);
      if (choice.empty() || cost < bestCost) {
        bestCost = cost;
        choice = candidate;
      }
    }
    break;
  }
  }
  total = evaluate(choice);
  return choice;
}
