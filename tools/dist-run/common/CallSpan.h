//===- CallSpan.h - how long one call takes on every rank -------*- C++ -*-===//
//
// Part of dist-run's common code (tools/dist-run/common), header only: the
// MPI programs among its users (dist-run-worker, dist-calibrate) time calls
// with it; the front, which has no MPI, never includes it.
//
// Why: `dist-run --reps` (semantics §5) and dist-calibrate (§8) must time a
// call the same way, or the parameters fitted by one would not price the
// programs timed by the other. A call starts together on every rank and
// lasts until its slowest rank has finished: that is what the next step of
// a program waits for. Each rank's own duration is not that when ranks
// share cores (8 ranks on 2 cores here): a rank that waits for a core after
// the barrier starts its clock late, so a call without a collective (a
// slice, a local copy) would count one rank's copy alone, faster than all
// of them at once.
//
// How: ranks on one node read one monotonic clock, so the span is the
// latest end less the earliest start. Across nodes, with `untilAllDone`, a
// closing barrier ends every rank's clock together; without it each rank's
// own duration counts (a collective cannot end before its peers join it).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_CALLSPAN_H
#define DIST_TOOLS_DIST_RUN_COMMON_CALLSPAN_H

#include "dist/Runtime/DistRuntime.h"

#include <mpi.h>

#include <chrono>

namespace dist::run {

class CallSpan {
public:
  /// Collective over `comm`: finds out whether its ranks share a node.
  explicit CallSpan(MPI_Comm comm) : comm_(comm) {
    int rank = 0, size = 0, nodeSize = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nodeSize);
    MPI_Comm_free(&node);
    oneClock_ = nodeSize == size;
  }

  /// Runs `call` once on every rank, started together, and returns on every
  /// rank its span in seconds (see the file comment), or a negative value
  /// when distRtSynchronize failed on this rank (the span is still agreed
  /// on, so that no rank is left waiting).
  template <typename Call>
  double time(Call &&call, bool untilAllDone = true) const {
    MPI_Barrier(comm_);
    double begin = now();
    call();
    bool synced = distRtSynchronize(nullptr) == DIST_RT_OK;
    if (!oneClock_ && untilAllDone)
      MPI_Barrier(comm_);
    double end = now();
    double span = 0;
    if (oneClock_) {
      double bounds[2] = {-begin, end}, extremes[2] = {0, 0};
      MPI_Allreduce(bounds, extremes, 2, MPI_DOUBLE, MPI_MAX, comm_);
      span = extremes[1] + extremes[0];
    } else {
      double mine = end - begin;
      MPI_Allreduce(&mine, &span, 1, MPI_DOUBLE, MPI_MAX, comm_);
    }
    return synced ? span : -1;
  }

  /// Whether the ranks share a node (and so one clock).
  bool oneClock() const { return oneClock_; }

private:
  static double now() {
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  MPI_Comm comm_;
  bool oneClock_ = false;
};

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_CALLSPAN_H
