//===- Lifetime.h - Init, finalise, leaving without finalise ----*- C++ -*-===//
//
// The order in which the runtime comes up (settings from the environment,
// the control plane, the backend, the buffer cache) and goes down again,
// also when the process exits without distRtFinalize.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_LIFETIME_H
#define DIST_LIB_RUNTIME_LIFETIME_H

#include <string>

namespace dist::rt {

/// distRtInit with backend `name`. Initialising again with the same backend
/// does nothing; another backend, or init after finalise, is Error(STATE).
void initRuntime(const std::string &name);

/// distRtFinalize: waits for the backend's work, releases everything and
/// finalises MPI if the runtime initialised it. Without init, or a second
/// time, it does nothing.
void finalizeRuntime();

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_LIFETIME_H
