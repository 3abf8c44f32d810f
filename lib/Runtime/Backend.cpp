//===- Backend.cpp - Backend registry and MPI error helpers ---------------===//

#include "Backend.h"

namespace dist::rt {

std::vector<std::string> availableBackends() {
  std::vector<std::string> names{"mpi"};
#if defined(DIST_RT_HAVE_NCCL)
  names.push_back("nccl");
#endif
  return names;
}

std::unique_ptr<Backend> createBackend(const std::string &name) {
  if (name == "mpi")
    return createMpiBackend();
#if defined(DIST_RT_HAVE_NCCL)
  if (name == "nccl")
    return createNcclBackend();
#endif
  std::string list;
  for (const std::string &n : availableBackends())
    list += (list.empty() ? "" : ", ") + n;
  std::string reason = "unknown backend '" + name + "' (available: " + list;
#if !defined(DIST_RT_HAVE_NCCL)
  if (name == "nccl")
    reason = "backend 'nccl' was not built (CUDA or NCCL not found at "
             "configure time, or DIST_ENABLE_NCCL=OFF); available: " + list;
#endif
  throw Error(DIST_RT_ERR_STATE, reason + ")");
}

std::string mpiErrorString(int code) {
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS)
    return "MPI error " + std::to_string(code);
  return std::string(buf, len) + " (MPI error " + std::to_string(code) + ")";
}

void checkMpi(int rc, const char *call) {
  if (rc != MPI_SUCCESS)
    throw Error(DIST_RT_ERR_BACKEND,
                std::string(call) + " failed: " + mpiErrorString(rc));
}

} // namespace dist::rt
