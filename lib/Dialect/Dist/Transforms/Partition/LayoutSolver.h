//===- LayoutSolver.h - choose one strategy per node, minimising cost -*- C++ -*-===//
//
// The layout choice as a discrete optimisation problem, free of MLIR: every
// node (an op, or a fixed layout: an argument, a binding type, a return)
// has strategies; a strategy has a local work (iterations per device, the
// tie-breaker); every edge (a value flowing from a producer to a consumer)
// costs the modelled reshard time from the layout the producer's strategy
// gives the value to the layout the consumer's strategy needs. Nodes are
// numbered in program order, so edges go from lower to higher numbers.
//
// Costs compare lexicographically: communication first, then work.
//
// Choosers:
//  - Joint: dynamic programming along the use-def graph (exact where the
//    graph is a tree: every value used once), decoded backwards so that a
//    value used several times takes the layout its consumers jointly prefer,
//    then improved node by node (iterated conditional modes) until no single
//    change lowers the total. The two baselines, improved the same way, are
//    also tried and the cheapest result kept, so the joint choice is never
//    worse than either baseline.
//  - PerOp: in program order, each op takes the strategy cheapest given its
//    operands' already chosen layouts (an eager runtime's dispatch).
//  - KeepLarger: each op keeps the layout of its largest operand when some
//    strategy allows it (cheapest such one), else as PerOp.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_LAYOUTSOLVER_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITION_LAYOUTSOLVER_H

#include "dist/Dialect/Dist/Transforms/PassOptionValues.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dist::partition {

using Chooser = ::dist::LayoutChooser;

struct Cost {
  double comm = 0, work = 0;
  Cost &operator+=(const Cost &o) {
    comm += o.comm;
    work += o.work;
    return *this;
  }
  friend Cost operator+(Cost a, const Cost &b) { return a += b; }
  /// Communication first (equal within rounding), then work.
  bool operator<(const Cost &o) const;
};

class LayoutProblem {
public:
  /// Adds a node whose strategy s has local work `work[s]`.
  unsigned addNode(std::vector<double> work);
  /// Adds an edge; strategy sf of `from` gives layout fromLayout[sf],
  /// strategy st of `to` needs layout toLayout[st], and moving layout i to
  /// layout j costs table[i * numToLayouts + j] seconds (infinity: not
  /// possible). `bytes` is the value's global size, for KeepLarger.
  void addEdge(unsigned from, unsigned to, std::vector<unsigned> fromLayout,
               std::vector<unsigned> toLayout, unsigned numToLayouts,
               std::vector<double> table, double bytes);

  unsigned numNodes() const { return nodes.size(); }
  unsigned numStrategies(unsigned node) const {
    return nodes[node].work.size();
  }

  /// One strategy per node. Total cost in `total`.
  std::vector<unsigned> solve(Chooser chooser, Cost &total) const;
  /// The cost of a given choice.
  Cost evaluate(const std::vector<unsigned> &choice) const;

private:
  struct Edge {
    unsigned from, to;
    std::vector<unsigned> fromLayout, toLayout;
    unsigned numToLayouts;
    std::vector<double> table;
    double bytes;
    double cost(unsigned sf, unsigned st) const {
      return table[fromLayout[sf] * numToLayouts + toLayout[st]];
    }
  };
  struct Node {
    std::vector<double> work;
    std::vector<unsigned> in, out; // edge indices
  };
  std::vector<Node> nodes;
  std::vector<Edge> edges;

  std::vector<unsigned> dynamicProgramming() const;
  std::vector<unsigned> perOp() const;
  std::vector<unsigned> keepLarger() const;
  void improve(std::vector<unsigned> &choice) const;
  /// The cost node n adds with strategy s, given the others' choices;
  /// `onlyDecided` ignores edges to nodes numbered after n (not yet chosen).
  Cost localCost(unsigned n, unsigned s, const std::vector<unsigned> &choice,
                 bool onlyDecided) const;
};

} // namespace dist::partition

#endif
