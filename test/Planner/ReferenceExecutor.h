//===- ReferenceExecutor.h - simulated devices for plans --------*- C++ -*-===//
//
// Materialises every device's padded local buffer for a layout (semantics §2
// and §5), applies plan steps as the collectives would -- a device's new buffer
// is built only from its own buffer (local moves) or from the buffers of the
// devices in its group (the devices that differ from it only on the step's
// axes) -- and checks the result against the global tensor. A plan that
// needs data a group does not hold fails here even if its layouts are fine.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TEST_PLANNER_REFERENCEEXECUTOR_H
#define DIST_TEST_PLANNER_REFERENCEEXECUTOR_H

#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"
#include "dist/Planner/Move.h"
#include "dist/Planner/Plan.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace dist::planner::test {

struct DistributedTensor {
  Layout layout;
  /// Per device (row-major linear index): the padded local buffer,
  /// row-major in the local shape.
  std::vector<std::vector<double>> buffers;
};

class ReferenceExecutor {
public:
  /// How partial inputs are split over a partial group.
  enum class PartialInput {
    /// semantics §5: coordinate 0 on every partial axis holds the value, the
    /// others the identity (0 sum, 1 prod, the value for max/min/avg).
    Identity,
    /// Harder to fake: sum/avg split into random integers that add up to
    /// the value; max/min give one random device the value and the others
    /// values below/above it; prod uses the identity form.
    RandomSplit,
  };

  ReferenceExecutor(const Mesh &mesh, std::vector<int64_t> globalShape);

  /// 0, 1, 2, ... in row-major order (semantics §5's iota).
  std::vector<double> iota() const;

  DistributedTensor materialise(const Layout &layout,
                                const std::vector<double> &global,
                                PartialInput mode = PartialInput::Identity,
                                uint64_t seed = 0) const;

  /// One step, as the collective would do it.
  llvm::Expected<DistributedTensor> apply(const DistributedTensor &tensor,
                                          const Move &move) const;

  /// A redistribute (semantics §3), same-mesh or (with `targetExecutor`) onto
  /// the target executor's mesh: executes the transfers computeExchange
  /// lists, box by box, each element read from its sender's buffer, and
  /// fails when a sender lacks an element, a same-mesh transfer crosses a
  /// partial axis, or some element of a receiver's block is written by no
  /// transfer or by two.
  llvm::Expected<DistributedTensor>
  redistribute(const DistributedTensor &tensor, const Layout &targetLayout,
               const ReferenceExecutor *targetExecutor = nullptr) const;

  /// Every device holds exactly its block of `global` (for partial layouts:
  /// each partial group reduces to it). Padding is ignored.
  llvm::Error check(const DistributedTensor &tensor,
                    const std::vector<double> &global) const;

  /// Materialises `source`, applies every step, checks each step's layout
  /// against the plan's and the final buffers against `target`.
  llvm::Error run(const Layout &source, const Layout &target, const Plan &plan,
                  PartialInput mode = PartialInput::RandomSplit,
                  uint64_t seed = 1) const;
  /// The same for a cross-mesh plan: steps after the transfer run on
  /// `targetExecutor`'s mesh.
  llvm::Error runCrossMesh(const Layout &source, const Layout &target,
                           const Plan &plan,
                           const ReferenceExecutor &targetExecutor,
                           PartialInput mode = PartialInput::RandomSplit,
                           uint64_t seed = 1) const;

  const Mesh &getMesh() const { return mesh; }

private:
  const Mesh &mesh;
  std::vector<int64_t> shape;
  int64_t numElements = 1;
};

} // namespace dist::planner::test

#endif
