//===- CApiLifetime.cpp - C ABI: lifetime, the world, the error policy ----===//
//
// distRtInit* and distRtFinalize (Lifetime.h), what the world is, and the
// switches and state of the error policy (Errors.h).
//
//===----------------------------------------------------------------------===//

#include "Errors.h"
#include "Lifetime.h"
#include "State.h"

#include "dist/Runtime/DistRuntime.h"

#include <cstdlib>

using namespace dist::rt;

extern "C" {

int32_t distRtInit(void) {
  return guard("init", [] {
    const char *env = std::getenv("DIST_RT_BACKEND");
    initRuntime(env && *env ? env : "mpi");
  });
}

int32_t distRtInitWithBackend(const char *backend) {
  return guard("init", [&] {
    if (!backend)
      invalid("backend name is null");
    initRuntime(backend);
  });
}

int32_t distRtFinalize(void) { return guard("finalize", finalizeRuntime); }

int32_t distRtIsInitialized(void) { return S.initialized ? 1 : 0; }

const char *distRtBackendName(void) {
  return S.initialized ? S.backendName.c_str() : "";
}

int64_t distRtWorldRank(void) {
  return guardValue<int64_t>("world_rank", -1, [] {
    requireInit();
    return static_cast<int64_t>(S.rank);
  });
}

int64_t distRtWorldSize(void) {
  return guardValue<int64_t>("world_size", -1, [] {
    requireInit();
    return static_cast<int64_t>(S.size);
  });
}

void distRtSetAbortOnError(int32_t abortOnError) {
  S.abortOnError = abortOnError != 0;
}

void distRtSetValidation(int32_t enabled) { S.validate = enabled != 0; }

int32_t distRtLastError(void) { return S.lastError; }

const char *distRtLastErrorMessage(void) { return S.lastMessage.c_str(); }

void distRtClearError(void) {
  S.lastError = DIST_RT_OK;
  S.lastMessage.clear();
}

} // extern "C"
