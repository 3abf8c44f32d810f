//===- ControlPlane.cpp - The runtime's MPI control plane -----------------===//

#include "ControlPlane.h"

#include <chrono>
#include <cstdlib>
#include <thread>

namespace dist::rt {

void startControlPlane() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (fin)
    throw Error(DIST_RT_ERR_STATE, "MPI has already been finalised");
  if (!init) {
    int provided = 0;
    // Calls are made from one thread at a time (DistRuntime.h); SERIALIZED
    // leaves the application free to use other threads around them.
    checkMpi(
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided),
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
}

bool mpiFinalized() {
  int fin = 0;
  MPI_Finalized(&fin);
  return fin != 0;
}

void freeComm(MPI_Comm &comm) noexcept {
  if (comm != MPI_COMM_NULL)
    MPI_Comm_free(&comm);
}

int finalizeOwnedMpi() noexcept {
  if (S.ownsMpi && !mpiFinalized())
    return MPI_Finalize();
  return MPI_SUCCESS;
}

void abortJob() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (init && !fin)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::_Exit(1);
}

bool allRanksLeaving(double timeoutS) {
  MPI_Request req;
  if (MPI_Ibarrier(S.exitComm, &req) != MPI_SUCCESS)
    return false;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::duration<double>(timeoutS);
  int done = 0;
  while (!done) {
    if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      break;
    if (done)
      return true;
    if (std::chrono::steady_clock::now() > deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

void splitGroupComm(GroupEntry &g) {
  // The split is collective over the world; ranks outside the mesh take
  // part with no color and get no communicator.
  checkMpi(
      MPI_Comm_split(S.world,
                     g.member ? static_cast<int>(g.spec.color) : MPI_UNDEFINED,
                     static_cast<int>(g.spec.index), &g.comm),
      "MPI_Comm_split");
  if (!g.member)
    return;
  checkMpi(MPI_Comm_set_errhandler(g.comm, MPI_ERRORS_RETURN),
           "MPI_Comm_set_errhandler");
  // The split matches calls by order over the world: if the ranks created
  // groups in different orders (or from different meshes) the members are
  // not the computed ones. Compare the actual membership once, here.
  int n = static_cast<int>(g.spec.members.size());
  int commSize = 0;
  MPI_Comm_size(g.comm, &commSize);
  std::vector<int> actual(commSize);
  int me = S.rank;
  if (commSize == n)
    checkMpi(MPI_Allgather(&me, 1, MPI_INT, actual.data(), 1, MPI_INT, g.comm),
             "MPI_Allgather (group check)");
  bool same = commSize == n;
  for (int k = 0; same && k < n; ++k)
    same = actual[k] == g.spec.members[k];
  if (!same) {
    MPI_Comm_free(&g.comm);
    throw Error(DIST_RT_ERR_MISMATCH,
                "the ranks that formed this group are not the mesh's "
                "group over these axes: every rank must create the same "
                "groups of the same mesh in the same order");
  }
}

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

void gatherSignatures(MPI_Comm comm, const Signature &mine,
                      std::vector<Signature> &all) {
  checkMpi(MPI_Allgather(&mine, kSigWords, MPI_INT64_T, all.data(), kSigWords,
                         MPI_INT64_T, comm),
           "MPI_Allgather (argument check)");
}

void swapExchangeSignatures(const std::vector<int64_t> &peers,
                            std::vector<ExchangeSignature> &mine,
                            std::vector<ExchangeSignature> &theirs) {
  constexpr int kExchangeSigTag = 5; // point to point on S.world
  const size_t n = peers.size();
  std::vector<MPI_Request> reqs(2 * n, MPI_REQUEST_NULL);
  for (size_t i = 0; i < n; ++i) {
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
}

} // namespace dist::rt
