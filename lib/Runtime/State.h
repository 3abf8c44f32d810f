//===- State.h - The runtime's process state --------------------*- C++ -*-===//
//
// One runtime per process: whether it is initialised, the backend and its
// buffer cache, the settings read at init, the registered meshes and groups,
// and the last error. Every file of the core reads and writes it through
// `S`; the C ABI is single-threaded (DistRuntime.h), so nothing locks it.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_STATE_H
#define DIST_LIB_RUNTIME_STATE_H

#include "Backend.h"
#include "BlockCache.h"
#include "Mesh.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dist::rt {

struct MeshEntry {
  MeshSpec spec;
  bool member = false;         // this process is a device of the mesh
  std::vector<int64_t> coords; // of this process (zeros on a non-member)
  // Control communicator over the mesh's ranks (by linear index), for the
  // permute's signature check; created on first use, by the members only.
  MPI_Comm comm = MPI_COMM_NULL;
};

struct GroupEntry {
  int64_t mesh = 0;
  std::vector<int64_t> axes;
  bool member = true; // false: this rank is not a device of the mesh
  GroupSpec spec;
  MPI_Comm comm = MPI_COMM_NULL; // control: splits and signature checks
  std::unique_ptr<BackendComm> backendComm;
};

struct State {
  bool initialized = false;
  bool finalized = false;
  bool ownsMpi = false;
  bool exitHandlerRegistered = false;
  std::unique_ptr<Backend> backend;
  // Freed buffers kept for reuse (see BlockCache.h); created with the backend.
  std::unique_ptr<BlockCache> blocks;
  std::string backendName;
  ExchangeMode exchange = ExchangeMode::Auto;
  MPI_Comm world = MPI_COMM_NULL;    // control communicator of the world
  MPI_Comm exitComm = MPI_COMM_NULL; // only for the exit handler's barrier
  int rank = -1;
  int size = 0;
  bool abortOnError = true;
  bool validate = true;
  StridedAllToAllMode stridedAllToAll = StridedAllToAllMode::Auto;
  double exitTimeoutS = 10.0;
  std::vector<MeshEntry> meshes;
  std::vector<std::unique_ptr<GroupEntry>> groups;
  std::map<std::pair<int64_t, std::vector<int64_t>>, int64_t> groupCache;
  int32_t lastError = DIST_RT_OK;
  std::string lastMessage;
};

/// The process's runtime. Deliberately leaked: the exit handler runs after
/// static destructors may have started, and must still find the state.
extern State &S;

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_STATE_H
