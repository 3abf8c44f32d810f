//===- Runtime.cpp - The runtime core and its C ABI -----------------------===//
//
// Everything backend-independent behind DistRuntime.h: process state, mesh
// and group handles, argument validation, the cross-rank signature check,
// and the translation of internal exceptions into the C ABI's error policy.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "CopyPlan.h"
#include "dist/Runtime/DistRuntime.h"

#include "BlockCache.h"
#include "Exchange.h"
#include "Mesh.h"
#include "Types.h"

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using namespace dist::rt;

namespace {

//===--------------------------------------------------------------------===//
// Process state
//===--------------------------------------------------------------------===//

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
  MPI_Comm world = MPI_COMM_NULL;     // control communicator of the world
  MPI_Comm exitComm = MPI_COMM_NULL;  // only for the exit handler's barrier
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

// Deliberately leaked: the exit handler runs after static destructors may
// have started, and must still find the state.
State &S = *new State;

// Handles carry a tag so that a group handle passed as a mesh (or a stale
// integer) is caught instead of silently aliasing another object.
constexpr int64_t kTagShift = 40;
constexpr int64_t kMeshTag = int64_t(1) << kTagShift;
constexpr int64_t kGroupTag = int64_t(2) << kTagShift;
constexpr int64_t kIndexMask = (int64_t(1) << kTagShift) - 1;

//===--------------------------------------------------------------------===//
// Errors
//===--------------------------------------------------------------------===//

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

[[noreturn]] void abortJob() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

int32_t fail(const char *op, int32_t code, const std::string &reason) {
  S.lastError = code;
  S.lastMessage = "dist-runtime: rank " + rankString() + ": " + op + ": " +
                  reason;
  if (S.abortOnError) {
    std::fprintf(stderr, "%s\n", S.lastMessage.c_str());
    std::fflush(stderr);
    abortJob();
  }
  return code;
}

[[noreturn]] void invalid(const std::string &reason) {
  throw Error(DIST_RT_ERR_INVALID_ARGUMENT, reason);
}

// Runs `body`, turning any exception into the error policy. Nothing thrown
// inside the runtime crosses the C ABI.
template <typename F> int32_t guard(const char *op, F &&body) noexcept {
  try {
    body();
    return DIST_RT_OK;
  } catch (const Error &e) {
    return fail(op, e.code(), e.what());
  } catch (const std::bad_alloc &) {
    return fail(op, DIST_RT_ERR_BACKEND, "out of host memory");
  } catch (const std::exception &e) {
    return fail(op, DIST_RT_ERR_BACKEND, e.what());
  } catch (...) {
    return fail(op, DIST_RT_ERR_BACKEND, "unknown internal failure");
  }
}

template <typename T, typename F>
T guardValue(const char *op, T onError, F &&body) noexcept {
  T result = onError;
  if (guard(op, [&] { result = body(); }) != DIST_RT_OK)
    return onError;
  return result;
}

void requireInit() {
  if (S.finalized)
    throw Error(DIST_RT_ERR_STATE, "the runtime has been finalised");
  if (!S.initialized)
    throw Error(DIST_RT_ERR_STATE, "the runtime is not initialised (call "
                                   "distRtInit first)");
}

//===--------------------------------------------------------------------===//
// Lifetime
//===--------------------------------------------------------------------===//

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

void releaseAll() noexcept {
  int fin = 0;
  MPI_Finalized(&fin);
  if (fin) {
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
    if (g->comm != MPI_COMM_NULL)
      MPI_Comm_free(&g->comm);
  }
  for (MeshEntry &m : S.meshes)
    if (m.comm != MPI_COMM_NULL && m.comm != S.world)
      MPI_Comm_free(&m.comm);
  S.groups.clear();
  S.groupCache.clear();
  S.meshes.clear();
  S.blocks.reset(); // before the backend that owns the memory
  if (S.backend)
    S.backend->finalize();
  if (S.world != MPI_COMM_NULL)
    MPI_Comm_free(&S.world);
  if (S.exitComm != MPI_COMM_NULL)
    MPI_Comm_free(&S.exitComm);
}

// A process that leaves without distRtFinalize: if every rank is leaving
// (the program simply forgot to finalise) they meet in a non-blocking
// barrier and finalise quietly; if only this one is, the others may be
// blocked in a collective waiting for it, so after a grace period the job is
// aborted with a message naming this rank instead of hanging.
void onExit() {
  if (!S.initialized)
    return;
  int fin = 0;
  MPI_Finalized(&fin);
  if (S.size > 1 && !fin) {
    MPI_Request req;
    bool allHere = false;
    if (MPI_Ibarrier(S.exitComm, &req) == MPI_SUCCESS) {
      auto deadline = std::chrono::steady_clock::now() +
                      std::chrono::duration<double>(S.exitTimeoutS);
      int done = 0;
      while (!done) {
        if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
          break;
        if (done) {
          allHere = true;
          break;
        }
        if (std::chrono::steady_clock::now() > deadline)
          break;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    if (!allHere) {
      std::fprintf(stderr,
                   "dist-runtime: rank %d: exit: the process is exiting "
                   "without distRtFinalize while other ranks are still "
                   "running (waited %.1f s for them); aborting the job\n",
                   S.rank, S.exitTimeoutS);
      std::fflush(stderr);
      MPI_Abort(MPI_COMM_WORLD, 1);
      std::_Exit(1);
    }
  }
  S.initialized = false;
  S.finalized = true;
  releaseAll();
  if (S.ownsMpi && !fin)
    MPI_Finalize();
}

void doInit(const std::string &name) {
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
  bool validate = true;
  if (const char *v = std::getenv("DIST_RT_CHECK"))
    validate = std::strcmp(v, "0") != 0;
  double exitTimeout = envSeconds("DIST_RT_EXIT_TIMEOUT_S", 10.0);
  StridedAllToAllMode strided = StridedAllToAllMode::Auto;
  if (const char *v = std::getenv("DIST_RT_STRIDED_ALLTOALL")) {
    static const std::pair<const char *, StridedAllToAllMode> modes[] = {
        {"auto", StridedAllToAllMode::Auto},
        {"shm", StridedAllToAllMode::SharedMemory},
        {"datatype", StridedAllToAllMode::Datatype},
        {"pack", StridedAllToAllMode::Pack}};
    bool known = !*v;
    for (const auto &[text, mode] : modes)
      if (std::strcmp(v, text) == 0) {
        strided = mode;
        known = true;
      }
    if (!known)
      throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
                  std::string("DIST_RT_STRIDED_ALLTOALL must be 'auto', "
                              "'shm', 'datatype' or 'pack', not '") +
                      v + "'");
    if (!backend->supportsStridedMode(strided))
      throw Error(DIST_RT_ERR_UNSUPPORTED,
                  std::string("DIST_RT_STRIDED_ALLTOALL=") + v +
                      " is not a path of the " + name + " backend");
  }

  ExchangeMode exchange = ExchangeMode::Auto;
  if (const char *v = std::getenv("DIST_RT_EXCHANGE")) {
    static const std::pair<const char *, ExchangeMode> modes[] = {
        {"auto", ExchangeMode::Auto},
        {"datatype", ExchangeMode::Datatype},
        {"pack", ExchangeMode::Pack}};
    bool known = !*v;
    for (const auto &[text, mode] : modes)
      if (std::strcmp(v, text) == 0) {
        exchange = mode;
        known = true;
      }
    if (!known)
      throw Error(DIST_RT_ERR_INVALID_ARGUMENT,
                  std::string("DIST_RT_EXCHANGE must be 'auto', 'datatype' "
                              "or 'pack', not '") +
                      v + "'");
  }

  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (fin)
    throw Error(DIST_RT_ERR_STATE, "MPI has already been finalised");
  if (!init) {
    int provided = 0;
    // Calls are made from one thread at a time (DistRuntime.h); SERIALIZED
    // leaves the application free to use other threads around them.
    checkMpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED,
                             &provided),
             "MPI_Init_thread");
    S.ownsMpi = true;
  }
  // Private communicators: the runtime's traffic never matches the
  // application's, and errors come back as codes (MPI_ERRORS_RETURN) so
  // they are reported with the op instead of MPI's generic abort.
  checkMpi(MPI_Comm_dup(MPI_COMM_WORLD, &S.world), "MPI_Comm_dup");
  checkMpi(MPI_Comm_set_errhandler(S.world, MPI_ERRORS_RETURN),
           "MPI_Comm_set_errhandler");
  checkMpi(MPI_Comm_dup(S.world, &S.exitComm), "MPI_Comm_dup");
  MPI_Comm_rank(S.world, &S.rank);
  MPI_Comm_size(S.world, &S.size);
  backend->init(S.world);
  S.backend = std::move(backend);
  // Unused buffers kept for reuse: DIST_RT_CACHE_MIB (default 1024; 0 turns
  // the cache off, which tests of allocation failures may want).
  size_t cacheBytes = size_t(1024) << 20;
  if (const char *v = std::getenv("DIST_RT_CACHE_MIB"))
    cacheBytes = static_cast<size_t>(std::strtoull(v, nullptr, 10)) << 20;
  Backend *owner = S.backend.get();
  S.blocks = std::make_unique<BlockCache>(
      [owner](size_t bytes) { return owner->allocate(bytes); },
      [owner](void *ptr) { owner->deallocate(ptr); }, cacheBytes);
  S.backendName = name;
  S.validate = validate;
  S.stridedAllToAll = strided;
  S.exchange = exchange;
  S.exitTimeoutS = exitTimeout;
  S.initialized = true;
  if (!S.exitHandlerRegistered) {
    std::atexit(onExit);
    S.exitHandlerRegistered = true;
  }
}

//===--------------------------------------------------------------------===//
// Handles
//===--------------------------------------------------------------------===//

MeshEntry &lookupMesh(int64_t handle) {
  int64_t index = handle & kIndexMask;
  if ((handle & ~kIndexMask) != kMeshTag || index >= (int64_t)S.meshes.size())
    throw Error(DIST_RT_ERR_BAD_HANDLE,
                "bad mesh handle " + std::to_string(handle));
  return S.meshes[index];
}

GroupEntry &lookupGroup(int64_t handle) {
  int64_t index = handle & kIndexMask;
  if ((handle & ~kIndexMask) != kGroupTag || index >= (int64_t)S.groups.size())
    throw Error(DIST_RT_ERR_BAD_HANDLE,
                "bad group handle " + std::to_string(handle));
  return *S.groups[index];
}

//===--------------------------------------------------------------------===//
// Argument checks
//===--------------------------------------------------------------------===//

size_t checkCount(int64_t count, const char *what) {
  if (count < 0)
    invalid(std::string(what) + " is negative (" + std::to_string(count) +
            ")");
  if (static_cast<uint64_t>(count) > S.backend->maxCount())
    throw Error(DIST_RT_ERR_UNSUPPORTED,
                std::string(what) + " " + std::to_string(count) +
                    " exceeds the " + S.backendName + " backend's limit of " +
                    std::to_string(S.backend->maxCount()) +
                    " elements per call");
  return static_cast<size_t>(count);
}

size_t bytesOf(size_t count, size_t multiplier, DType t) {
  size_t r;
  if (__builtin_mul_overflow(count, multiplier, &r) ||
      __builtin_mul_overflow(r, dtypeSize(t), &r))
    invalid("buffer size overflows");
  return r;
}

void checkBuffer(const void *p, size_t bytes, const char *name) {
  if (bytes > 0 && !p)
    invalid(std::string(name) + " buffer is null");
}

bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  if (aBytes == 0 || bBytes == 0)
    return false;
  auto x = reinterpret_cast<uintptr_t>(a);
  auto y = reinterpret_cast<uintptr_t>(b);
  return x < y + bBytes && y < x + aBytes;
}

DType checkReducible(int32_t dtype, int32_t redop, RedOp &op) {
  DType t = toDType(dtype);
  op = toRedOp(redop);
  checkReduction(t, op);
  if (!S.backend->supportsReduction(t, op))
    throw Error(DIST_RT_ERR_UNSUPPORTED,
                std::string("the ") + S.backendName + " backend cannot " +
                    redOpName(op) + "-reduce " + dtypeName(t));
  return t;
}

//===--------------------------------------------------------------------===//
// Cross-rank signature check
//===--------------------------------------------------------------------===//

enum class OpCode : int64_t {
  AllGather = 1,
  AllToAll,
  ReduceScatter,
  AllReduce,
  Permute,
  Exchange,
};

const char *opName(int64_t code) {
  switch (static_cast<OpCode>(code)) {
  case OpCode::AllGather:
    return "all_gather";
  case OpCode::AllToAll:
    return "all_to_all";
  case OpCode::ReduceScatter:
    return "reduce_scatter";
  case OpCode::AllReduce:
    return "all_reduce";
  case OpCode::Permute:
    return "permute";
  case OpCode::Exchange:
    return "exchange";
  }
  return "?";
}

struct Signature {
  int64_t op;
  int64_t count;
  int64_t dtype;
  int64_t redop; // -1 when the op has none
  int64_t extra; // permute: table hash
  int64_t failed; // status of this rank's local checks (return mode)
};
constexpr int kSigWords = sizeof(Signature) / sizeof(int64_t);

std::string describeField(int field, int64_t v) {
  switch (field) {
  case 0:
    return opName(v);
  case 2:
    return dtypeName(static_cast<DType>(v));
  case 3:
    return v < 0 ? "none" : redOpName(static_cast<RedOp>(v));
  default:
    return std::to_string(v);
  }
}

// Runs the local checks of a collective, then (while validation is on) has
// the members exchange what they are about to do. Every member sees the same
// table, so a mismatch or a member whose own checks failed is reported on
// all of them and nobody enters a collective that would hang or exchange
// wrongly-sized data.
template <typename F>
void agree(MPI_Comm comm, const std::vector<int64_t> &worldOfMember,
           Signature sig, const char *countName, F &&localChecks) {
  // The local checks may complete the signature (the permute's table hash).
  int32_t localCode = DIST_RT_OK;
  std::string localReason;
  try {
    localChecks(sig);
  } catch (const Error &e) {
    // Aborting ends every rank anyway; only a returning error has to tell
    // the other members, or they would wait for this one forever.
    if (S.abortOnError || !S.validate)
      throw;
    localCode = e.code();
    localReason = e.what();
  }
  if (!S.validate)
    return;
  sig.failed = localCode;
  int n = static_cast<int>(worldOfMember.size());
  std::vector<Signature> all(n);
  checkMpi(MPI_Allgather(&sig, kSigWords, MPI_INT64_T, all.data(), kSigWords,
                         MPI_INT64_T, comm),
           "MPI_Allgather (argument check)");
  if (localCode != DIST_RT_OK)
    throw Error(localCode, localReason);
  for (int m = 0; m < n; ++m)
    if (all[m].failed != DIST_RT_OK)
      throw Error(static_cast<int32_t>(all[m].failed),
                  "world rank " + std::to_string(worldOfMember[m]) +
                      " failed its checks of this call (status " +
                      std::to_string(all[m].failed) + ")");
  static const char *fieldNames[] = {"the operation", nullptr, "dtype",
                                     "reduction", "the permute table"};
  for (int m = 0; m < n; ++m) {
    const int64_t *mine = &sig.op;
    const int64_t *theirs = &all[m].op;
    for (int f = 0; f < 5; ++f) {
      if (mine[f] == theirs[f])
        continue;
      std::string field = f == 1 ? countName : fieldNames[f];
      std::string reason = "ranks disagree on " + field + " (group of " +
                           std::to_string(n) + "): ";
      if (f == 4)
        reason += "this rank's table differs from world rank " +
                  std::to_string(worldOfMember[m]) + "'s";
      else
        reason += describeField(f, mine[f]) + " on this rank, " +
                  describeField(f, theirs[f]) + " on world rank " +
                  std::to_string(worldOfMember[m]);
      throw Error(DIST_RT_ERR_MISMATCH, reason);
    }
  }
}

/// The control communicator over a mesh's ranks, ordered by linear index
/// (the world's when the mesh is the world in order). Created by the
/// members only (MPI_Comm_create_group), on their first call that needs it;
/// the members make such calls in the same order.
MPI_Comm meshComm(MeshEntry &m) {
  if (m.comm != MPI_COMM_NULL || !S.validate)
    return m.comm;
  const std::vector<int64_t> &devices = m.spec.devices();
  bool identity = m.spec.coversWorld(S.size);
  for (size_t l = 0; identity && l < devices.size(); ++l)
    identity = devices[l] == static_cast<int64_t>(l);
  if (identity) {
    m.comm = S.world;
    return m.comm;
  }
  std::vector<int> ranks(devices.begin(), devices.end());
  MPI_Group world, members;
  checkMpi(MPI_Comm_group(S.world, &world), "MPI_Comm_group");
  int rc = MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(),
                          &members);
  MPI_Group_free(&world);
  checkMpi(rc, "MPI_Group_incl");
  constexpr int kMeshCommTag = 3;
  rc = MPI_Comm_create_group(S.world, members, kMeshCommTag, &m.comm);
  MPI_Group_free(&members);
  checkMpi(rc, "MPI_Comm_create_group");
  checkMpi(MPI_Comm_set_errhandler(m.comm, MPI_ERRORS_RETURN),
           "MPI_Comm_set_errhandler");
  return m.comm;
}

/// The exchange's signature: what one rank expects of its exchange with one
/// other rank.
struct ExchangeSignature {
  int64_t op;       // OpCode::Exchange
  int64_t dtype;
  int64_t toPeer;   // elements this rank sends to the peer
  int64_t fromPeer; // elements this rank expects from the peer
  int64_t hash;     // of the whole table
  int64_t failed;   // status of this rank's local checks (return mode)
};
constexpr int kExchangeSigWords = sizeof(ExchangeSignature) / sizeof(int64_t);
constexpr int kExchangeSigTag = 5; // point to point on S.world

std::string dtypeText(int64_t v) {
  return v >= 0 && v <= DIST_RT_I1 ? dtypeName(static_cast<DType>(v))
                                   : "code " + std::to_string(v);
}

/// Every rank the table names exchanges its signature with every other one
/// (not only the ranks it moves data with: tables that disagree on who
/// exchanges with whom are caught too), point to point, so ranks the table
/// does not name take no part. A disagreement is reported on both ranks of
/// the pair as MISMATCH naming both; a peer whose own checks failed fails
/// this rank too. `localCode` is this rank's own status, sent to the peers;
/// the caller reports its own failure.
void exchangeSignatures(const ExchangeRole &role, int32_t dtype,
                        uint64_t hash, int32_t localCode) {
  std::vector<int64_t> peers;
  for (int64_t r : role.participants)
    if (r != S.rank)
      peers.push_back(r);
  if (peers.empty())
    return;
  const size_t n = peers.size();
  std::vector<ExchangeSignature> mine(n), theirs(n);
  std::vector<MPI_Request> reqs(2 * n, MPI_REQUEST_NULL);
  for (size_t i = 0; i < n; ++i) {
    int64_t to = 0, from = 0;
    exchangePairCounts(role, peers[i], to, from);
    mine[i] = {int64_t(OpCode::Exchange), dtype, to, from,
               static_cast<int64_t>(hash), localCode};
    const int peer = static_cast<int>(peers[i]);
    checkMpi(MPI_Irecv(&theirs[i], kExchangeSigWords, MPI_INT64_T, peer,
                       kExchangeSigTag, S.world, &reqs[2 * i]),
             "MPI_Irecv (argument check)");
    checkMpi(MPI_Isend(&mine[i], kExchangeSigWords, MPI_INT64_T, peer,
                       kExchangeSigTag, S.world, &reqs[2 * i + 1]),
             "MPI_Isend (argument check)");
  }
  checkMpi(MPI_Waitall(static_cast<int>(reqs.size()), reqs.data(),
                       MPI_STATUSES_IGNORE),
           "MPI_Waitall (argument check)");
  if (localCode != DIST_RT_OK)
    return;
  const std::string me = std::to_string(S.rank);
  for (size_t i = 0; i < n; ++i) {
    const ExchangeSignature &a = mine[i], &b = theirs[i];
    const std::string peer = std::to_string(peers[i]);
    if (b.failed != DIST_RT_OK)
      throw Error(static_cast<int32_t>(b.failed),
                  "world rank " + peer +
                      " failed its checks of this exchange (status " +
                      std::to_string(b.failed) + ")");
    std::string reason;
    if (b.op != a.op)
      reason = "world rank " + peer + " is in another call";
    else if (b.dtype != a.dtype)
      reason = "dtype " + dtypeText(a.dtype) + " on rank " + me + ", " +
               dtypeText(b.dtype) + " on rank " + peer;
    else if (b.hash != a.hash)
      reason = "rank " + me + "'s table differs from rank " + peer + "'s";
    else if (b.fromPeer != a.toPeer || b.toPeer != a.fromPeer)
      reason = "rank " + me + " sends " + std::to_string(a.toPeer) +
               " elements to rank " + peer + ", which expects " +
               std::to_string(b.fromPeer) + "; rank " + peer + " sends " +
               std::to_string(b.toPeer) + ", rank " + me + " expects " +
               std::to_string(a.fromPeer);
    if (!reason.empty())
      throw Error(DIST_RT_ERR_MISMATCH, "ranks " + me + " and " + peer +
                                            " disagree on the exchange: " +
                                            reason);
  }
}

//===--------------------------------------------------------------------===//
// Strided all-to-all geometry
//===--------------------------------------------------------------------===//

/// One side of distRtAllToAllStrided as a box of numDims + 1 dims, the
/// chunk index outermost.
struct StridedSide {
  int numDims = 0; // chunk index included
  int64_t sizes[DIST_RT_MAX_COPY_DIMS] = {};
  int64_t strides[DIST_RT_MAX_COPY_DIMS] = {};
  size_t elemBytes = 1;
  const char *base = nullptr;
  ByteExtent extent;
  /// Chunk j is the j-th block of count elements (plain all-to-all order).
  bool contiguous = false;

  const char *begin() const { return base + extent.first; }
  size_t extentBytes() const {
    return static_cast<size_t>(extent.last - extent.first);
  }
};

/// Product of a shape, or -1 for a negative size or an overflow. Unlike
/// shapeElements it never throws: the count goes into the cross-rank
/// signature, which every member must send even when its own checks fail.
int64_t shapeElementsOrNegative(int64_t numDims, const int64_t *shape) {
  int64_t n = 1;
  for (int64_t d = 0; d < numDims; ++d)
    if (shape[d] < 0 || __builtin_mul_overflow(n, shape[d], &n))
      return -1;
  return n;
}

StridedSide stridedSide(int64_t p, int64_t numDims, const int64_t *shape,
                        const int64_t *strides, int64_t chunkStride,
                        const void *base, DType t, const char *name) {
  StridedSide side;
  side.numDims = static_cast<int>(numDims) + 1;
  side.sizes[0] = p;
  side.strides[0] = chunkStride;
  for (int64_t d = 0; d < numDims; ++d) {
    side.sizes[d + 1] = shape[d];
    side.strides[d + 1] = strides[d];
  }
  for (int d = 0; d < side.numDims; ++d)
    if (side.strides[d] < 0)
      invalid(std::string(name) + " stride " + std::to_string(d) +
              " is negative (" + std::to_string(side.strides[d]) + ")");
  side.elemBytes = dtypeSize(t);
  side.base = static_cast<const char *>(base);
  side.extent =
      stridedExtent(side.numDims, side.sizes, side.strides, side.elemBytes);
  checkBuffer(base, side.extentBytes(), name);
  // Row-major over the whole [p, chunk...] box, size-1 dims aside.
  int64_t expected = 1;
  side.contiguous = true;
  for (int d = side.numDims - 1; d >= 0; --d) {
    if (side.sizes[d] == 1)
      continue;
    side.contiguous = side.contiguous && side.strides[d] == expected;
    expected *= side.sizes[d];
  }
  return side;
}

/// Whether no two elements of the box share an address: sorted by stride,
/// each dim must step past everything the smaller dims span. (Sufficient,
/// and exactly what sub-boxes of row-major tensors satisfy.)
bool boxIsInjective(const StridedSide &side) {
  int order[DIST_RT_MAX_COPY_DIMS];
  int n = 0;
  for (int d = 0; d < side.numDims; ++d) {
    if (side.sizes[d] == 0)
      return true; // empty
    if (side.sizes[d] > 1)
      order[n++] = d;
  }
  // Insertion sort by stride: at most DIST_RT_MAX_COPY_DIMS entries.
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && side.strides[order[j]] < side.strides[order[j - 1]];
         --j)
      std::swap(order[j], order[j - 1]);
  int64_t span = 1; // elements covered by the dims so far
  for (int i = 0; i < n; ++i) {
    int d = order[i];
    if (side.strides[d] < span)
      return false;
    span = side.strides[d] * (side.sizes[d] - 1) + span;
  }
  return true;
}

ChunkBoxes chunkBoxes(const StridedSide &side) {
  ChunkBoxes boxes;
  boxes.numDims = side.numDims - 1;
  boxes.sizes = side.sizes + 1;
  boxes.strides = side.strides + 1;
  boxes.chunkStride = side.strides[0];
  return boxes;
}

/// The copy between a side and its contiguous staging buffer.
CopyPlan stagePlan(const StridedSide &side, bool toStage, const void *stage) {
  int64_t packed[DIST_RT_MAX_COPY_DIMS];
  int64_t stride = 1;
  for (int d = side.numDims - 1; d >= 0; --d) {
    packed[d] = stride;
    stride *= side.sizes[d];
  }
  return toStage ? makeCopyPlan(side.numDims, side.sizes, side.strides, packed,
                                side.elemBytes, side.base, stage)
                 : makeCopyPlan(side.numDims, side.sizes, packed, side.strides,
                                side.elemBytes, stage, side.base);
}

int32_t packOrUnpack(const char *op, bool unpack, int64_t numDims,
                            const int64_t *shape, int64_t dim, int64_t parts,
                            const void *src, void *dst, int32_t dtype,
                            void *stream) {
  return guard(op, [&] {
    requireInit();
    DType t = toDType(dtype);
    Stream s = S.backend->resolveStream(stream);
    CopyPlan plan = makePackPlan(numDims, shape, dim, parts, dtypeSize(t),
                                 src, dst, unpack);
    if (plan.empty())
      return;
    size_t bytes =
        bytesOf(static_cast<size_t>(shapeElements(numDims, shape)), 1, t);
    checkBuffer(src, bytes, "source");
    checkBuffer(dst, bytes, "destination");
    if (overlaps(src, bytes, dst, bytes))
      invalid("source and destination overlap");
    S.backend->copy(plan, src, dst, s);
  });
}

} // namespace

//===--------------------------------------------------------------------===//
// C ABI
//===--------------------------------------------------------------------===//

extern "C" {

int32_t distRtInit(void) {
  return guard("init", [] {
    const char *env = std::getenv("DIST_RT_BACKEND");
    doInit(env && *env ? env : "mpi");
  });
}

int32_t distRtInitWithBackend(const char *backend) {
  return guard("init", [&] {
    if (!backend)
      invalid("backend name is null");
    doInit(backend);
  });
}

int32_t distRtFinalize(void) {
  return guard("finalize", [] {
    if (!S.initialized)
      return; // Finalising twice, or without init, has nothing to release.
    if (S.backend)
      S.backend->synchronize(S.backend->defaultStream());
    S.initialized = false;
    S.finalized = true;
    releaseAll();
    int fin = 0;
    MPI_Finalized(&fin);
    if (S.ownsMpi && !fin)
      checkMpi(MPI_Finalize(), "MPI_Finalize");
  });
}

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

int64_t distRtMeshCreate(int64_t numAxes, const int64_t *sizes,
                         const int64_t *devices) {
  return guardValue<int64_t>("mesh_create", -1, [&] {
    requireInit();
    MeshSpec spec = MeshSpec::create(numAxes, sizes, devices, S.size);
    for (size_t i = 0; i < S.meshes.size(); ++i)
      if (S.meshes[i].spec == spec)
        return kMeshTag | static_cast<int64_t>(i);
    MeshEntry m;
    m.member = spec.contains(S.rank);
    m.coords = m.member ? spec.coordsOfRank(S.rank)
                        : std::vector<int64_t>(spec.numAxes(), 0);
    m.spec = std::move(spec);
    S.meshes.push_back(std::move(m));
    return kMeshTag | static_cast<int64_t>(S.meshes.size() - 1);
  });
}

int64_t distRtMeshNumAxes(int64_t mesh) {
  return guardValue<int64_t>("mesh_num_axes", -1, [&] {
    requireInit();
    return lookupMesh(mesh).spec.numAxes();
  });
}

int64_t distRtMeshCoord(int64_t mesh, int64_t axis) {
  return guardValue<int64_t>("mesh_coord", -1, [&] {
    requireInit();
    MeshEntry &m = lookupMesh(mesh);
    if (axis < 0 || axis >= m.spec.numAxes())
      invalid("unknown mesh axis " + std::to_string(axis) + " (the mesh has " +
              std::to_string(m.spec.numAxes()) + " axes)");
    return m.coords[axis]; // 0 on a rank outside the mesh
  });
}

int32_t distRtMeshContains(int64_t mesh) {
  return guardValue<int32_t>("mesh_contains", -1, [&] {
    requireInit();
    return lookupMesh(mesh).member ? 1 : 0;
  });
}

int64_t distRtGroup(int64_t mesh, int64_t numAxes, const int64_t *axes) {
  return guardValue<int64_t>("group", -1, [&]() -> int64_t {
    requireInit();
    MeshEntry &m = lookupMesh(mesh);
    if (numAxes < 0 || numAxes > m.spec.numAxes())
      invalid("a group of " + std::to_string(numAxes) +
              " axes on a mesh with " + std::to_string(m.spec.numAxes()) +
              " axes");
    if (numAxes > 0 && !axes)
      invalid("axes is null");
    std::vector<int64_t> axisList(axes, axes + numAxes);
    auto key = std::make_pair(mesh, axisList);
    auto it = S.groupCache.find(key);
    if (it != S.groupCache.end())
      return it->second;

    auto g = std::make_unique<GroupEntry>();
    g->mesh = mesh;
    g->axes = axisList;
    g->spec = computeGroup(m.spec, axisList, S.rank);
    g->member = m.member;
    // The split is collective over the world; ranks outside the mesh take
    // part with no color and get no communicator.
    checkMpi(MPI_Comm_split(S.world,
                            g->member ? static_cast<int>(g->spec.color)
                                      : MPI_UNDEFINED,
                            static_cast<int>(g->spec.index), &g->comm),
             "MPI_Comm_split");
    if (!g->member) {
      g->backendComm = S.backend->createComm(MPI_COMM_NULL, -1, 0);
      S.groups.push_back(std::move(g));
      int64_t handle = kGroupTag | static_cast<int64_t>(S.groups.size() - 1);
      S.groupCache.emplace(std::move(key), handle);
      return handle;
    }
    checkMpi(MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN),
             "MPI_Comm_set_errhandler");
    // The split matches calls by order over the world: if the ranks created
    // groups in different orders (or from different meshes) the members are
    // not the computed ones. Compare the actual membership once, here.
    int n = static_cast<int>(g->spec.members.size());
    int commSize = 0;
    MPI_Comm_size(g->comm, &commSize);
    std::vector<int> actual(commSize);
    int me = S.rank;
    if (commSize == n)
      checkMpi(MPI_Allgather(&me, 1, MPI_INT, actual.data(), 1, MPI_INT,
                             g->comm),
               "MPI_Allgather (group check)");
    bool same = commSize == n;
    for (int k = 0; same && k < n; ++k)
      same = actual[k] == g->spec.members[k];
    if (!same) {
      MPI_Comm_free(&g->comm);
      throw Error(DIST_RT_ERR_MISMATCH,
                  "the ranks that formed this group are not the mesh's "
                  "group over these axes: every rank must create the same "
                  "groups of the same mesh in the same order");
    }
    g->backendComm = S.backend->createComm(
        g->comm, static_cast<int>(g->spec.color),
        static_cast<int>(g->spec.index));
    S.groups.push_back(std::move(g));
    int64_t handle = kGroupTag | static_cast<int64_t>(S.groups.size() - 1);
    S.groupCache.emplace(std::move(key), handle);
    return handle;
  });
}

int64_t distRtGroupSize(int64_t group) {
  return guardValue<int64_t>("group_size", -1, [&] {
    requireInit();
    return static_cast<int64_t>(lookupGroup(group).spec.members.size());
  });
}

int64_t distRtGroupRank(int64_t group) {
  return guardValue<int64_t>("group_rank", -1, [&] {
    requireInit();
    return lookupGroup(group).spec.index;
  });
}

int32_t distRtAllGather(int64_t group, const void *send, void *recv,
                        int64_t countPerRank, int32_t dtype, void *stream) {
  return guard("all_gather", [&] {
    requireInit();
    GroupEntry &g = lookupGroup(group);
    if (!g.member)
      return; // not a device of the mesh: nothing to move, nobody to wait
    const size_t p = g.spec.members.size();
    size_t n = 0;
    DType t = DType::F32;
    bool inPlace = false;
    Stream s = nullptr;
    agree(g.comm, g.spec.members,
          {int64_t(OpCode::AllGather), countPerRank, dtype, -1, 0, 0},
          "countPerRank", [&](Signature &) {
            t = toDType(dtype);
            n = checkCount(countPerRank, "countPerRank");
            s = S.backend->resolveStream(stream);
            size_t bytes = bytesOf(n, 1, t);
            checkBuffer(send, bytes, "send");
            checkBuffer(recv, bytesOf(n, p, t), "recv");
            inPlace = bytes > 0 &&
                      send == static_cast<char *>(recv) + g.spec.index * bytes;
            if (!inPlace && overlaps(send, bytes, recv, bytes * p))
              invalid("send and recv overlap (in place needs send == recv + "
                      "groupRank * countPerRank elements)");
          });
    if (n > 0)
      S.backend->allGather(*g.backendComm, send, recv, n, t, inPlace, s);
  });
}

int32_t distRtAllToAll(int64_t group, const void *send, void *recv,
                       int64_t countPerRank, int32_t dtype, void *stream) {
  return guard("all_to_all", [&] {
    requireInit();
    GroupEntry &g = lookupGroup(group);
    if (!g.member)
      return; // not a device of the mesh: nothing to move, nobody to wait
    const size_t p = g.spec.members.size();
    size_t n = 0;
    DType t = DType::F32;
    bool inPlace = false;
    Stream s = nullptr;
    agree(g.comm, g.spec.members,
          {int64_t(OpCode::AllToAll), countPerRank, dtype, -1, 0, 0},
          "countPerRank", [&](Signature &) {
            t = toDType(dtype);
            n = checkCount(countPerRank, "countPerRank");
            s = S.backend->resolveStream(stream);
            size_t bytes = bytesOf(n, p, t);
            checkBuffer(send, bytes, "send");
            checkBuffer(recv, bytes, "recv");
            inPlace = bytes > 0 && send == recv;
            if (!inPlace && overlaps(send, bytes, recv, bytes))
              invalid("send and recv overlap (in place needs send == recv)");
          });
    if (n > 0)
      S.backend->allToAll(*g.backendComm, send, recv, n, t, inPlace, s);
  });
}

int32_t distRtAllToAllStrided(int64_t group, int64_t numDims,
                              const int64_t *chunkShape, const void *send,
                              const int64_t *sendStrides,
                              int64_t sendChunkStride, void *recv,
                              const int64_t *recvStrides,
                              int64_t recvChunkStride, int32_t dtype,
                              void *stream) {
  return guard("all_to_all", [&] {
    requireInit();
    GroupEntry &g = lookupGroup(group);
    if (!g.member)
      return; // not a device of the mesh: nothing to move, nobody to wait
    const int64_t p = static_cast<int64_t>(g.spec.members.size());
    // The element count per chunk is what the members must agree on; the
    // geometry of each side is this rank's own business.
    int64_t count = -1;
    if (numDims >= 0 && numDims < DIST_RT_MAX_COPY_DIMS &&
        (numDims == 0 || chunkShape))
      count = shapeElementsOrNegative(numDims, chunkShape);
    DType t = DType::F32;
    Stream s = nullptr;
    StridedSide sendSide, recvSide;
    agree(g.comm, g.spec.members,
          {int64_t(OpCode::AllToAll), count, dtype, -1, 0, 0},
          "the chunk's element count", [&](Signature &) {
            if (numDims < 0 || numDims >= DIST_RT_MAX_COPY_DIMS)
              invalid("numDims " + std::to_string(numDims) +
                      " is outside [0, " +
                      std::to_string(DIST_RT_MAX_COPY_DIMS - 1) + "]");
            if (numDims > 0 && (!chunkShape || !sendStrides || !recvStrides))
              invalid("chunkShape, sendStrides and recvStrides must not be "
                      "null");
            if (count < 0)
              invalid("chunkShape has a negative size or overflows");
            checkCount(count, "the chunk's element count");
            t = toDType(dtype);
            s = S.backend->resolveStream(stream);
            sendSide = stridedSide(p, numDims, chunkShape, sendStrides,
                                   sendChunkStride, send, t, "send");
            recvSide = stridedSide(p, numDims, chunkShape, recvStrides,
                                   recvChunkStride, recv, t, "recv");
            if (!boxIsInjective(recvSide))
              invalid("recv chunks overlap (a recv stride is too small for "
                      "the box inside it)");
            if (overlaps(sendSide.begin(), sendSide.extentBytes(),
                         recvSide.begin(), recvSide.extentBytes()))
              invalid("send and recv overlap");
          });
    if (count <= 0 || p == 0)
      return;
    if (S.stridedAllToAll != StridedAllToAllMode::Pack &&
        S.backend->allToAllStrided(*g.backendComm, send,
                                   chunkBoxes(sendSide), recv,
                                   chunkBoxes(recvSide), t, S.stridedAllToAll,
                                   s))
      return;
    // Stage through contiguous chunks: pack, exchange, unpack.
    const size_t bytes = bytesOf(static_cast<size_t>(count),
                                 static_cast<size_t>(p), t);
    // Temporaries go back to the cache on every path, errors included.
    struct Staging {
      void *block = nullptr;
      ~Staging() {
        if (block)
          S.blocks->put(block);
      }
    } sendStage, recvStage;
    if (!sendSide.contiguous)
      sendStage.block = S.blocks->get(bytes);
    if (!recvSide.contiguous)
      recvStage.block = S.blocks->get(bytes);
    void *packed = sendSide.contiguous ? const_cast<void *>(send)
                                       : sendStage.block;
    void *received = recvSide.contiguous ? recv : recvStage.block;
    if (!sendSide.contiguous)
      S.backend->copy(stagePlan(sendSide, /*toStage=*/true, packed), send,
                      packed, s);
    S.backend->allToAll(*g.backendComm, packed, received,
                        static_cast<size_t>(count), t, /*inPlace=*/false, s);
    if (!recvSide.contiguous)
      S.backend->copy(stagePlan(recvSide, /*toStage=*/false, received),
                      received, recv, s);
    // The cache hands blocks out again in stream order (BlockCache.h), which
    // only holds on the default stream.
    if (s != S.backend->defaultStream() &&
        (sendStage.block || recvStage.block))
      S.backend->synchronize(s);
  });
}

int32_t distRtReduceScatter(int64_t group, const void *send, void *recv,
                            int64_t countPerRank, int32_t dtype, int32_t redop,
                            void *stream) {
  return guard("reduce_scatter", [&] {
    requireInit();
    GroupEntry &g = lookupGroup(group);
    if (!g.member)
      return; // not a device of the mesh: nothing to move, nobody to wait
    const size_t p = g.spec.members.size();
    size_t n = 0;
    DType t = DType::F32;
    RedOp op = RedOp::Sum;
    bool inPlace = false;
    Stream s = nullptr;
    agree(g.comm, g.spec.members,
          {int64_t(OpCode::ReduceScatter), countPerRank, dtype, redop, 0, 0},
          "countPerRank", [&](Signature &) {
            t = checkReducible(dtype, redop, op);
            n = checkCount(countPerRank, "countPerRank");
            s = S.backend->resolveStream(stream);
            size_t inBytes = bytesOf(n, p, t);
            checkBuffer(send, inBytes, "send");
            checkBuffer(recv, bytesOf(n, 1, t), "recv");
            inPlace = inBytes > 0 && send == recv;
            if (!inPlace && overlaps(send, inBytes, recv, bytesOf(n, 1, t)))
              invalid("send and recv overlap (in place needs send == recv)");
          });
    if (n > 0)
      S.backend->reduceScatter(*g.backendComm, send, recv, n, t, op, inPlace,
                               s);
  });
}

int32_t distRtAllReduce(int64_t group, const void *send, void *recv,
                        int64_t count, int32_t dtype, int32_t redop,
                        void *stream) {
  return guard("all_reduce", [&] {
    requireInit();
    GroupEntry &g = lookupGroup(group);
    if (!g.member)
      return; // not a device of the mesh: nothing to move, nobody to wait
    size_t n = 0;
    DType t = DType::F32;
    RedOp op = RedOp::Sum;
    bool inPlace = false;
    Stream s = nullptr;
    agree(g.comm, g.spec.members,
          {int64_t(OpCode::AllReduce), count, dtype, redop, 0, 0}, "count",
          [&](Signature &) {
            t = checkReducible(dtype, redop, op);
            n = checkCount(count, "count");
            s = S.backend->resolveStream(stream);
            size_t bytes = bytesOf(n, 1, t);
            checkBuffer(send, bytes, "send");
            checkBuffer(recv, bytes, "recv");
            inPlace = bytes > 0 && send == recv;
            if (!inPlace && overlaps(send, bytes, recv, bytes))
              invalid("send and recv overlap (in place needs send == recv)");
          });
    if (n > 0)
      S.backend->allReduce(*g.backendComm, send, recv, n, t, op, inPlace, s);
  });
}

namespace {
/// distRtPermute's work, for the two ways its tables arrive.
void permute(int64_t mesh, const void *send, void *recv, int64_t count,
             int32_t dtype, const int64_t *srcRank, const int64_t *destOffsets,
             const int64_t *destList, void *stream) {
  requireInit();
  MeshEntry &m = lookupMesh(mesh);
  if (!m.member)
    return; // the mesh's ranks permute among themselves
  size_t n = 0;
  DType t = DType::F32;
  Stream s = nullptr;
  PermuteRole role;
  agree(meshComm(m), m.spec.devices(),
        {int64_t(OpCode::Permute), count, dtype, -1, 0, 0}, "count",
        [&](Signature &sig) {
          t = toDType(dtype);
          n = checkCount(count, "count");
          s = S.backend->resolveStream(stream);
          validatePermuteTable(m.spec, srcRank, destOffsets, destList);
          // Hashed only once validated: a malformed table could make the
          // hash read past destList.
          sig.extra = static_cast<int64_t>(
              hashPermuteTable(permuteTableSize(m.spec), srcRank,
                               destOffsets, destList));
          role = permuteRole(S.rank, srcRank, destOffsets, destList);
          size_t bytes = bytesOf(n, 1, t);
          bool sends = !role.dests.empty() || role.source == S.rank;
          if (sends)
            checkBuffer(send, bytes, "send");
          if (role.source >= 0)
            checkBuffer(recv, bytes, "recv");
          if (send != recv && overlaps(send, bytes, recv, bytes))
            invalid("send and recv overlap (only send == recv is allowed)");
        });
  if (n == 0)
    return;
  std::vector<int> dests(role.dests.begin(), role.dests.end());
  S.backend->permute(send, recv, n, t, static_cast<int>(role.source), dests,
                     s);
}
} // namespace

int32_t distRtPermute(int64_t mesh, const void *send, void *recv,
                      int64_t count, int32_t dtype, const int64_t *srcRank,
                      const int64_t *destOffsets, const int64_t *destList,
                      void *stream) {
  return guard("permute", [&] {
    permute(mesh, send, recv, count, dtype, srcRank, destOffsets, destList,
            stream);
  });
}

int32_t distRtPermuteByLayouts(int64_t mesh, const void *send, void *recv,
                               int64_t count, int32_t dtype, int64_t numDims,
                               const int64_t *dimAxes, int64_t dimAxesSize,
                               void *stream) {
  return guard("permute", [&] {
    requireInit();
    // Every rank computes the same tables, so a bad description fails on
    // each of them alike (no rank waits for a peer that gave up).
    PermuteTables tables = permuteTablesFromLayouts(
        lookupMesh(mesh).spec, numDims, dimAxes, dimAxesSize);
    permute(mesh, send, recv, count, dtype, tables.srcRank.data(),
            tables.destOffsets.data(), tables.destList.data(), stream);
  });
}

int32_t distRtExchange(int64_t numDims, const int64_t *sendShape,
                       const void *send, const int64_t *recvShape, void *recv,
                       int64_t numTransfers, const int64_t *table,
                       int32_t dtype, void *stream) {
  return guard("exchange", [&] {
    requireInit();
    // The table is the same on every rank: a bad one fails everywhere alike,
    // before anyone communicates.
    validateExchangeTable(numDims, numTransfers, table, S.size);
    ExchangeRole role = exchangeRole(numDims, numTransfers, table, S.rank);
    if (!role.named)
      return;
    // This rank's own checks. With validation on and errors returned, a
    // failure here is shared with the peers in the signature exchange, so
    // they fail too instead of waiting for this rank.
    int32_t localCode = DIST_RT_OK;
    std::string localReason;
    DType t = DType::F32;
    Stream s = nullptr;
    try {
      t = toDType(dtype);
      s = S.backend->resolveStream(stream);
      checkExchangeBounds(numDims, numTransfers, table, S.rank, sendShape,
                          recvShape);
      auto tensorBytes = [&](const int64_t *shape, const char *name) {
        int64_t n = shapeElementsOrNegative(numDims, shape);
        if (n < 0)
          invalid(std::string(name) + " has a negative size or overflows");
        return bytesOf(static_cast<size_t>(n), 1, t);
      };
      size_t sendBytes = 0, recvBytes = 0;
      if (role.sendsData()) {
        sendBytes = tensorBytes(sendShape, "sendShape");
        checkBuffer(send, sendBytes, "send");
      }
      if (role.receivesData()) {
        recvBytes = tensorBytes(recvShape, "recvShape");
        checkBuffer(recv, recvBytes, "recv");
      }
      if (overlaps(send, sendBytes, recv, recvBytes))
        invalid("send and recv overlap");
    } catch (const Error &e) {
      if (S.abortOnError || !S.validate)
        throw;
      localCode = e.code();
      localReason = e.what();
    }
    if (S.validate)
      exchangeSignatures(role, dtype,
                         hashExchangeTable(numDims, numTransfers, table),
                         localCode);
    if (localCode != DIST_RT_OK)
      throw Error(localCode, localReason);
    if (role.sends.empty() && role.recvs.empty() && role.local.empty())
      return;
    ExchangeCall call;
    call.numDims = static_cast<int>(numDims);
    call.table = table;
    call.sendShape = sendShape;
    call.recvShape = recvShape;
    call.send = send;
    call.recv = recv;
    call.dtype = t;
    call.role = &role;
    call.mode = S.exchange;
    S.backend->exchange(call, s);
  });
}

int32_t distRtCopyStrided(int64_t numDims, const int64_t *sizes,
                          const void *src, const int64_t *srcStrides,
                          void *dst, const int64_t *dstStrides, int32_t dtype,
                          void *stream) {
  return guard("copy_strided", [&] {
    requireInit();
    DType t = toDType(dtype);
    Stream s = S.backend->resolveStream(stream);
    if (numDims > 0 && !srcStrides)
      invalid("srcStrides is null");
    CopyPlan plan = makeCopyPlan(numDims, sizes, srcStrides, dstStrides,
                                 dtypeSize(t), src, dst);
    if (plan.empty())
      return;
    checkBuffer(src, 1, "source");
    checkBuffer(dst, 1, "destination");
    ByteExtent se = stridedExtent(numDims, sizes, srcStrides, dtypeSize(t));
    ByteExtent de = stridedExtent(numDims, sizes, dstStrides, dtypeSize(t));
    if (overlaps(static_cast<const char *>(src) + se.first,
                 static_cast<size_t>(se.last - se.first),
                 static_cast<char *>(dst) + de.first,
                 static_cast<size_t>(de.last - de.first)))
      invalid("source and destination ranges overlap");
    S.backend->copy(plan, src, dst, s);
  });
}

int32_t distRtFillZero(int64_t numDims, const int64_t *sizes, void *dst,
                       const int64_t *dstStrides, int32_t dtype,
                       void *stream) {
  return guard("fill_zero", [&] {
    requireInit();
    DType t = toDType(dtype);
    Stream s = S.backend->resolveStream(stream);
    CopyPlan plan = makeCopyPlan(numDims, sizes, nullptr, dstStrides,
                                 dtypeSize(t), nullptr, dst);
    if (plan.empty())
      return;
    checkBuffer(dst, 1, "destination");
    S.backend->fillZero(plan, dst, s);
  });
}

int32_t distRtPackChunks(int64_t numDims, const int64_t *shape, int64_t dim,
                         int64_t parts, const void *src, void *dst,
                         int32_t dtype, void *stream) {
  return packOrUnpack("pack_chunks", false, numDims, shape, dim, parts, src,
                      dst, dtype, stream);
}

int32_t distRtUnpackChunks(int64_t numDims, const int64_t *shape, int64_t dim,
                           int64_t parts, const void *src, void *dst,
                           int32_t dtype, void *stream) {
  return packOrUnpack("unpack_chunks", true, numDims, shape, dim, parts, src,
                      dst, dtype, stream);
}

void *distRtAlloc(int64_t bytes) {
  return guardValue<void *>("alloc", nullptr, [&]() -> void * {
    requireInit();
    if (bytes < 0)
      invalid("negative size " + std::to_string(bytes));
    if (bytes == 0)
      return nullptr;
    return S.blocks->get(static_cast<size_t>(bytes));
  });
}

int32_t distRtFree(void *ptr) {
  return guard("free", [&] {
    requireInit();
    if (ptr && !S.blocks->put(ptr))
      invalid("pointer was not allocated by distRtAlloc");
  });
}

// Code compiled for target=gpu allocates its buffers through these (MLIR's
// memref-to-LLVM lowering with use-generic-functions), so that every buffer
// it creates lives in the backend's memory.
void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  return distRtAlloc(static_cast<int64_t>(size));
}

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  return guardValue<void *>("aligned_alloc", nullptr, [&]() -> void * {
    requireInit();
    // Both backends align to at least 64 bytes (cudaMalloc: 256).
    if (alignment > 64 || (alignment & (alignment - 1)) != 0)
      invalid("unsupported alignment " + std::to_string(alignment) +
              " (at most 64, a power of two)");
    if (size == 0)
      return nullptr;
    return S.blocks->get(static_cast<size_t>(size));
  });
}

void _mlir_memref_to_llvm_free(void *ptr) { distRtFree(ptr); }

int32_t distRtMemcpy(void *dst, const void *src, int64_t bytes, int32_t kind,
                     void *stream) {
  return guard("memcpy", [&] {
    requireInit();
    if (kind != DIST_RT_COPY_HOST_TO_DEVICE &&
        kind != DIST_RT_COPY_DEVICE_TO_HOST &&
        kind != DIST_RT_COPY_DEVICE_TO_DEVICE)
      invalid("unknown copy kind " + std::to_string(kind));
    if (bytes < 0)
      invalid("negative size " + std::to_string(bytes));
    Stream s = S.backend->resolveStream(stream);
    if (bytes == 0)
      return;
    checkBuffer(src, 1, "source");
    checkBuffer(dst, 1, "destination");
    if (overlaps(src, bytes, dst, bytes))
      invalid("source and destination overlap");
    S.backend->memcpy(dst, src, static_cast<size_t>(bytes), kind, s);
  });
}

void *distRtDefaultStream(void) {
  return guardValue<void *>("default_stream", nullptr, [] {
    requireInit();
    return S.backend->defaultStream();
  });
}

int32_t distRtSynchronize(void *stream) {
  return guard("synchronize", [&] {
    requireInit();
    S.backend->synchronize(S.backend->resolveStream(stream));
  });
}

} // extern "C"
