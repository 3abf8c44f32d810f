//===- AutoTopology.h - `--topology auto` -----------------------*- C++ -*-===//
//
// Plans are priced by a topology (semantics §3, §3b); without a file the
// defaults describe an NVLink node and an H100, not the machine dist-run is
// on. `--topology auto` prices them on this machine: the first run for a
// mesh measures it with a short dist-calibrate sweep (semantics §8) and
// caches the file per machine, backend, rank count and meshes; later runs
// read the cache (docs/dist-run.md says when to recalibrate).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TOOLS_DIST_RUN_AUTOTOPOLOGY_H
#define DIST_TOOLS_DIST_RUN_AUTOTOPOLOGY_H

#include "dist/Planner/Mesh.h"

#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace dist::run {

/// The folder of cached calibrations: $DIST_TOPOLOGY_CACHE, else
/// $XDG_CACHE_HOME/dist/topology, else ~/.cache/dist/topology.
std::string topologyCacheDir();

/// Who asks, for the messages: the tool ("dist-run"), how its users spell
/// the option ("--topology auto") and what holds the meshes ("the entry").
struct AutoTopologyCaller {
  llvm::StringRef tool, option, holder;
};

/// The topology file for `meshes` (one, or two: a pipeline's stages, the
/// second calibrated as dist-calibrate's --to-mesh) on `numRanks` ranks of
/// `backend`: the cached one, or a fresh calibration by the dist-calibrate
/// next to `self` (reported on stderr), written to the cache first.
llvm::Expected<std::string> autoTopology(
    const std::vector<std::pair<std::string, planner::Mesh>> &meshes,
    int numRanks, llvm::StringRef backend, llvm::StringRef self,
    AutoTopologyCaller caller = {"dist-run", "--topology auto", "the entry"});

/// The ranks a calibration of `meshes` needs: one more than the largest
/// device any of them names.
int ranksOf(const std::vector<std::pair<std::string, planner::Mesh>> &meshes);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_AUTOTOPOLOGY_H
