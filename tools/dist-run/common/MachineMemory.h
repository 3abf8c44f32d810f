//===- MachineMemory.h - what memory a job can have -------------*- C++ -*-===//
//
// Part of dist-run's common code (tools/dist-run/common): LLVM's Support
// library only. The fronts (dist-run, dist-calibrate) refuse a job that
// cannot fit before starting it.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_MACHINEMEMORY_H
#define DIST_TOOLS_DIST_RUN_COMMON_MACHINEMEMORY_H

#include <cstdint>

namespace dist::run {

/// The bytes this machine can give a job: its physical memory, or the
/// memory limit of the cgroup the front runs in (a container) when lower.
uint64_t machineMemory();

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_MACHINEMEMORY_H
