//===- FaultSpec.h - dist-run's --inject-fault=KIND:RANK --------*- C++ -*-===//
//
// A testing aid (docs/dist-run.md): rank RANK misbehaves at its first
// runtime call of the relevant kind, to check that failures are reported and
// never hang. The front checks the option; the worker injects the fault
// (worker/Faults.h).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_FAULTSPEC_H
#define DIST_TOOLS_DIST_RUN_COMMON_FAULTSPEC_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace dist::run {

struct FaultSpec {
  /// count: pass one element fewer than the other ranks to a collective;
  /// axis: ask for the group of an axis past the mesh's last; exit: leave
  /// without distRtFinalize; kill: SIGKILL; hang: stop making progress.
  enum Kind { None, Count, Axis, Exit, Kill, Hang } kind = None;
  int64_t rank = -1;

  /// "" (no fault) or KIND:RANK.
  static llvm::Expected<FaultSpec> parse(llvm::StringRef text);
};

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_FAULTSPEC_H
