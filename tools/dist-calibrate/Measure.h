//===- Measure.h - dist-calibrate on every rank ----------------*- C++ -*-===//
//
// Runs under dist-mpirun: every rank of the job times the moves of
// semantics §3 on each axis of the mesh (all the axis's groups at once, as a
// plan runs them), rank 0 fits alpha and beta per (axis, move) with
// planner::fitAlphaBeta and writes the topology file (semantics §3b, §8).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DISTCALIBRATE_MEASURE_H
#define DIST_TOOLS_DISTCALIBRATE_MEASURE_H

#include "dist/Planner/Mesh.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dist::calibrate {

struct MeasureOptions {
  std::string meshText;
  /// With a second mesh, the transfer link between the two (semantics §3a)
  /// is measured too; empty: not.
  std::string toMeshText;
  std::string backend; // "mpi" or "nccl"
  std::string sizesText;
  std::vector<int64_t> sizes;
  int reps = 5;
  std::string output;
};

/// The messages of the transfer measurement between `from` and `to`: device
/// j of `to` receives from device j mod |from| of `from` (a pipeline
/// hand-off's pattern, every receiver at once), skipping pairs on one rank
/// (a local copy, not the link). As (sender rank, receiver rank) pairs.
std::vector<std::pair<int64_t, int64_t>>
transferPairs(const planner::Mesh &from, const planner::Mesh &to);

/// The rank's part of the calibration; the process exit code (0: the file
/// is written; 1: a failure, printed on stderr by rank 0 or the failing
/// rank).
int runRank(const MeasureOptions &options);

} // namespace dist::calibrate

#endif // DIST_TOOLS_DISTCALIBRATE_MEASURE_H
