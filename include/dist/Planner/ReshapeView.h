//===- ReshapeView.h - reshapes that move no data (§2a) ---------*- C++ -*-===//
//
// A reshape (tensor.expand_shape / collapse_shape) of a sharded tensor is a
// *view* when some layout of the reshaped tensor gives every device exactly
// the local bytes it already holds: the local buffer is then reshaped in
// place and nothing moves. These functions find that layout, or say why
// there is none (then the tensor must first be resharded to a layout that
// has one).
//
// The rule, per collapsed dim of extent N = m_1 * ... * m_k (its expanded
// dims, row-major):
//  - contiguous, axes A (P parts): A splits the expanded dims major-first,
//    each dim fully (P_j = m_j) before the next takes an axis; the last dim
//    that takes one needs P_j to divide m_j. A device's block is then one
//    row-major run of the collapsed dim. Padded blocks (P does not divide N)
//    are a view only when the group has one dim of extent > 1.
//  - `segments` of K equal lengths L, axes A: the leading expanded dims of
//    product K enumerate the segments and stay unsplit; the rest (product L)
//    follow the contiguous rule. So [{"tp"} segments [h, h, h], {}] on 3h x d
//    is the view of [{}, {"tp"}, {}] on 3 x h x d.
// Partial axes and the other dims are carried over unchanged.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PLANNER_RESHAPEVIEW_H
#define DIST_PLANNER_RESHAPEVIEW_H

#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace dist::planner {

/// A reshape between a collapsed and an expanded shape: collapsed dim i is
/// the row-major flattening of the consecutive expanded dims `groups[i]`.
struct ReshapeDims {
  std::vector<int64_t> collapsedShape;
  std::vector<int64_t> expandedShape;
  std::vector<std::vector<unsigned>> groups;
};

/// Checks that the groups cover the expanded dims in order, each non-empty
/// (unless both shapes are rank 0), and that each group's extents multiply
/// to its collapsed extent.
llvm::Error verifyReshapeDims(const ReshapeDims &dims);

/// The layout of the expanded tensor holding, on every device, the same
/// local bytes as `collapsed` holds on the collapsed tensor; or why there is
/// none.
llvm::Expected<Layout> expandedView(const Mesh &mesh, const Layout &collapsed,
                                    const ReshapeDims &dims);

/// The layout of the collapsed tensor holding, on every device, the same
/// local bytes as `expanded` holds on the expanded tensor; or why there is
/// none.
llvm::Expected<Layout> collapsedView(const Mesh &mesh, const Layout &expanded,
                                     const ReshapeDims &dims);

} // namespace dist::planner

#endif // DIST_PLANNER_RESHAPEVIEW_H
