//===- Placement.h - where a rank's shard sits ------------------*- C++ -*-===//
//
// One rank's local padded buffer of a tensor (semantics §2), described by
// what the worker needs to fill it and to clean its padding: per dim, runs
// of local positions that hold consecutive global indices (one run for a
// plain block, one per segment for an interleaved dim; the positions no
// run covers are padding). The front process computes placements from the
// planner's block semantics; the worker only reads them, so it needs no
// planner.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_PLACEMENT_H
#define DIST_TOOLS_DIST_RUN_COMMON_PLACEMENT_H

#include <cstdint>
#include <optional>
#include <vector>

namespace dist::run {

struct ShardPlacement {
  /// Along one dim: local positions [local, local + count) hold global
  /// indices [global, global + count).
  struct Run {
    int64_t local = 0, global = 0, count = 0;
    bool operator==(const Run &other) const {
      return local == other.local && global == other.global &&
             count == other.count;
    }
  };
  /// Whether the rank is on the tensor's mesh (otherwise it holds no part:
  /// its buffer is zero and its results are not written).
  bool holds = false;
  std::vector<int64_t> localShape;
  std::vector<std::vector<Run>> runs;
  /// A partial value is held by the device with coordinate 0 on every
  /// partial axis; the others hold the reduction's identity instead, 0 for
  /// sum and 1 for prod (none for max, min and avg: the value itself).
  std::optional<int64_t> identity;

  int64_t localElements() const {
    int64_t n = 1;
    for (int64_t extent : localShape)
      n *= extent;
    return n;
  }
};

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_PLACEMENT_H
