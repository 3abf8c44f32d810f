//===- Sweep.h - dist-calibrate's sizes and measurements --------*- C++ -*-===//
//
// The sweep of message sizes (semantics §8 `--sizes LO:HI`: LO, 4 LO, 16 LO,
// ... up to HI) and the list of moves timed on every axis. Both the front,
// which checks the options before starting a job, and the ranks read them
// from the same text, so they agree.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DISTCALIBRATE_SWEEP_H
#define DIST_TOOLS_DISTCALIBRATE_SWEEP_H

#include "dist/Planner/Move.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace dist::calibrate {

/// The largest message one device may be asked to send: an all_gather's
/// result is p times that, so larger sweeps would exhaust memory first.
constexpr int64_t kMaxSweepBytes = int64_t(1) << 30;

/// "4096", "64KiB", "1MiB", "2GiB" (binary units only) in bytes.
llvm::Expected<int64_t> parseBytes(llvm::StringRef text);

/// `LO:HI` -> LO, 4 LO, 16 LO, ... <= HI (at least 3 sizes, the fitter's
/// minimum; HI at most kMaxSweepBytes).
llvm::Expected<std::vector<int64_t>> parseSweep(llvm::StringRef text);

/// The moves semantics §3 prices per axis, in the order they are timed.
inline constexpr planner::MoveKind kCalibratedMoves[] = {
    planner::MoveKind::AllGather, planner::MoveKind::ReduceScatter,
    planner::MoveKind::AllReduce, planner::MoveKind::AllToAll,
    planner::MoveKind::Permute,   planner::MoveKind::Redistribute};

} // namespace dist::calibrate

#endif // DIST_TOOLS_DISTCALIBRATE_SWEEP_H
