//===- Lifetime.cpp - Init, finalise, leaving without finalise ------------===//

#include "Lifetime.h"

#include "Allocation.h"
#include "ControlPlane.h"
#include "State.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace dist::rt {

namespace {

/// What the environment sets for the whole run (DistRuntime.h,
/// "Environment"); read before anything is set up, so that a bad value
/// fails init cleanly.
struct Settings {
  bool validate = true;
  double exitTimeoutS = 10.0;
  StridedAllToAllMode stridedAllToAll = StridedAllToAllMode::Auto;
  ExchangeMode exchange = ExchangeMode::Auto;
};

/// Sets `mode` to the one `text` names among `modes`; false when it names
/// none. An empty text keeps the default.
template <typename Mode, size_t N>
bool parseMode(const char *text,
               const std::pair<const char *, Mode> (&modes)[N], Mode &mode) {
  bool known = !*text;
  for (const auto &[name, value] : modes)
    if (std::strcmp(text, name) == 0) {
      mode = value;
      known = true;
    }
  return known;
}

double envSeconds(const char *name, double fallback) {
  const char *v = std::getenv(name);
  if (!v || !*v)
    return fallback;
  char *end = nullptr;
  double d = std::strtod(v, &end);
  if (*end != '\0' || d < 0)
    throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
                std::string(name) + "='" + v +
                    "' is not a non-negative number of seconds");
  return d;
}

Settings readSettings(const Backend &backend, const std::string &name) {
  Settings settings;
  if (const char *v = std::getenv("DIST_RT_CHECK"))
    settings.validate = std::strcmp(v, "0") != 0;
  settings.exitTimeoutS = envSeconds("DIST_RT_EXIT_TIMEOUT_S", 10.0);
  if (const char *v = std::getenv("DIST_RT_STRIDED_ALLTOALL")) {
    static const std::pair<const char *, StridedAllToAllMode> modes[] = {
        {"auto", StridedAllToAllMode::Auto},
        {"shm", StridedAllToAllMode::SharedMemory},
        {"datatype", StridedAllToAllMode::Datatype},
        {"pack", StridedAllToAllMode::Pack}};
    if (!parseMode(v, modes, settings.stridedAllToAll))
      throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
                  std::string("DIST_RT_STRIDED_ALLTOALL must be 'auto', "
                              "'shm', 'datatype' or 'pack', not '") +
                      v + "'");
    if (!backend.supportsStridedMode(settings.stridedAllToAll))
      throw Error(DIST_RT_ERR_UNSUPPORTED,
                  std::string("DIST_RT_STRIDED_ALLTOALL=") + v +
                      " is not a path of the " + name + " backend");
  }

  if (const char *v = std::getenv("DIST_RT_EXCHANGE")) {
    static const std::pair<const char *, ExchangeMode> modes[] = {
        {"auto", ExchangeMode::Auto},
        {"datatype", ExchangeMode::Datatype},
        {"pack", ExchangeMode::Pack}};
    if (!parseMode(v, modes, settings.exchange))
      throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
                  std::string("DIST_RT_EXCHANGE must be 'auto', 'datatype' "
                              "or 'pack', not '") +
                      v + "'");
  }
  return settings;
}

void releaseAll() noexcept {
  if (mpiFinalized()) {
    // The application finalised MPI itself: its objects are gone with it.
    S.groups.clear();
    S.groupCache.clear();
    S.meshes.clear();
    S.blocks.reset();
    if (S.backend)
      S.backend->finalize(); // each backend skips its MPI objects then
    S.world = S.exitComm = MPI_COMM_NULL;
    return;
  }
  for (auto &g : S.groups) {
    g->backendComm.reset();
    freeComm(g->comm);
  }
  for (MeshEntry &m : S.meshes)
    if (m.comm != S.world)
      freeComm(m.comm);
  S.groups.clear();
  S.groupCache.clear();
  S.meshes.clear();
  S.blocks.reset(); // before the backend that owns the memory
  if (S.backend)
    S.backend->finalize();
  freeComm(S.world);
  freeComm(S.exitComm);
}

// A process that leaves without distRtFinalize: if every rank is leaving
// (the program simply forgot to finalise) they meet in a non-blocking
// barrier and finalise quietly; if only this one is, the others may be
// blocked in a collective waiting for it, so after a grace period the job is
// aborted with a message naming this rank instead of hanging.
void onExit() {
  if (!S.initialized)
    return;
  if (S.size > 1 && !mpiFinalized() && !allRanksLeaving(S.exitTimeoutS)) {
    std::fprintf(stderr,
                 "dist-runtime: rank %d: exit: the process is exiting "
                 "without distRtFinalize while other ranks are still "
                 "running (waited %.1f s for them); aborting the job\n",
                 S.rank, S.exitTimeoutS);
    std::fflush(stderr);
    abortJob();
  }
  S.initialized = false;
  S.finalized = true;
  releaseAll();
  finalizeOwnedMpi();
}

} // namespace

void initRuntime(const std::string &name) {
  if (S.finalized)
    throw Error(DIST_RT_ERR_STATE,
                "the runtime was finalised and cannot be initialised again");
  if (S.initialized) {
    if (name != S.backendName)
      throw Error(DIST_RT_ERR_STATE, "already initialised with backend '" +
                                         S.backendName +
                                         "'; cannot switch to '" + name + "'");
    return;
  }
  std::unique_ptr<Backend> backend = createBackend(name);
  Settings settings = readSettings(*backend, name);
  startControlPlane();
  backend->init(S.world);
  S.backend = std::move(backend);
  S.blocks = createBlockCache(*S.backend);
  S.backendName = name;
  S.validate = settings.validate;
  S.stridedAllToAll = settings.stridedAllToAll;
  S.exchange = settings.exchange;
  S.exitTimeoutS = settings.exitTimeoutS;
  S.initialized = true;
  if (!S.exitHandlerRegistered) {
    std::atexit(onExit);
    S.exitHandlerRegistered = true;
  }
}

void finalizeRuntime() {
  if (!S.initialized)
    return; // Finalising twice, or without init, has nothing to release.
  if (S.backend)
    S.backend->synchronize(S.backend->defaultStream());
  S.initialized = false;
  S.finalized = true;
  releaseAll();
  checkMpi(finalizeOwnedMpi(), "MPI_Finalize");
}

} // namespace dist::rt
