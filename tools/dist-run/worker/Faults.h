//===- Faults.h - dist-run's injected faults (tests) ------------*- C++ -*-===//
//
// `--inject-fault=KIND:RANK` (docs/dist-run.md) makes one rank misbehave
// at its first runtime call of the relevant kind, to check that failures
// are reported and never hang. The worker interposes on the distRt*
// functions the compiled program calls: it defines them itself and
// exports them (the program's shared object binds to the executable's
// definitions first), and each forwards to libdist_runtime's through
// dlsym(RTLD_NEXT) after the fault, if any, has fired.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_WORKER_FAULTS_H
#define DIST_TOOLS_DIST_RUN_WORKER_FAULTS_H

#include "common/FaultSpec.h"

#include <cstdint>

namespace dist::run {

/// The fault this process injects, if any.
struct Fault : FaultSpec {
  bool fired = false;
  int64_t myRank = -1;

  bool armed(bool forGroup) const {
    return kind != None && !fired && rank == myRank &&
           (kind == Axis) == forGroup;
  }
};

/// The fault of this process (set once the runtime knows the rank).
extern Fault fault;

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_WORKER_FAULTS_H
