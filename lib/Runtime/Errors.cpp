//===- Errors.cpp - The C ABI's error policy ------------------------------===//

#include "Errors.h"

#include "ControlPlane.h"
#include "State.h"

#include <cstdio>
#include <cstdlib>

namespace dist::rt {

namespace {

// The rank for messages: MPI's once known, else the launcher's environment
// (errors before or during init still name the process).
std::string rankString() {
  if (S.rank >= 0)
    return std::to_string(S.rank);
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char *v = std::getenv(var))
      return v;
  return "?";
}

} // namespace

int32_t fail(const char *op, int32_t code, const std::string &reason) {
  S.lastError = code;
  S.lastMessage =
      "dist-runtime: rank " + rankString() + ": " + op + ": " + reason;
  if (S.abortOnError) {
    std::fprintf(stderr, "%s\n", S.lastMessage.c_str());
    std::fflush(stderr);
    abortJob();
  }
  return code;
}

void invalid(const std::string &reason) {
  throw Error(DIST_RT_ERR_INVALID_ARGUMENT, reason);
}

void requireInit() {
  if (S.finalized)
    throw Error(DIST_RT_ERR_STATE, "the runtime has been finalised");
  if (!S.initialized)
    throw Error(DIST_RT_ERR_STATE, "the runtime is not initialised (call "
                                   "distRtInit first)");
}

} // namespace dist::rt
