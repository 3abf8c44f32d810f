//===- TopologyResolver.h - `topology=auto`: who calibrates --*- C++ -*-===//
//
// `topology=auto` (docs/semantics.md §5) prices plans on the machine at
// hand: a topology file measured by dist-calibrate once and cached. The
// passes cannot start processes themselves (they also run inside other
// hosts: the mlir-opt plugin, a user's compiler), so a tool that can
// calibrate installs a resolver; without one, `auto` is an error that says
// to pass a file.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_TOPOLOGYRESOLVER_H
#define DIST_DIALECT_DIST_TRANSFORMS_TOPOLOGYRESOLVER_H

#include "dist/Planner/Mesh.h"

#include "llvm/Support/Error.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace dist {

/// The topology file for a module's meshes (name, mesh), in module order.
using TopologyResolver = std::function<llvm::Expected<std::string>(
    const std::vector<std::pair<std::string, planner::Mesh>> &meshes)>;

/// Installs the resolver `topology=auto` uses (a tool's main calls this once,
/// before any pass runs).
void setTopologyResolver(TopologyResolver resolver);

/// The installed resolver (empty: none).
const TopologyResolver &getTopologyResolver();

} // namespace dist

#endif // DIST_DIALECT_DIST_TRANSFORMS_TOPOLOGYRESOLVER_H
