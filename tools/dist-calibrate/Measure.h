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

#include <cstdint>
#include <string>
#include <vector>

namespace dist::calibrate {

struct MeasureOptions {
  std::string meshText;
  std::string backend; // "mpi" or "nccl"
  std::string sizesText;
  std::vector<int64_t> sizes;
  int reps = 5;
  std::string output;
};

/// The rank's part of the calibration; the process exit code (0: the file
/// is written; 1: a failure, printed on stderr by rank 0 or the failing
/// rank).
int runRank(const MeasureOptions &options);

} // namespace dist::calibrate

#endif // DIST_TOOLS_DISTCALIBRATE_MEASURE_H
