//===- ControlPlane.h - The runtime's MPI control plane ---------*- C++ -*-===//
//
// The control plane is MPI by design, whatever the data backend is: process
// launch and init, rank discovery, the communicators behind groups and
// meshes, the cross-rank signature agreement, the barriers of the exit path
// and failure propagation (MPI_Abort) all go through MPI, also when the data
// moves over NCCL. Every MPI call of the runtime core is in ControlPlane.cpp;
// the rest of the core uses MPI only for the type of a communicator handle.
// (The backends make their own MPI calls: the mpi backend's data plane, and
// the nccl backend's setup, e.g. the unique-id broadcast.)
//
// The core's communicators are private duplicates with MPI_ERRORS_RETURN,
// so the runtime's traffic never matches the application's and MPI errors
// are reported with the op (checkMpi) instead of MPI's generic abort.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_CONTROLPLANE_H
#define DIST_LIB_RUNTIME_CONTROLPLANE_H

#include "Signature.h"
#include "State.h"

#include <cstdint>
#include <vector>

namespace dist::rt {

/// Initialises MPI unless the application has (then the runtime does not
/// finalise it either), and sets up S.world, S.exitComm, S.rank and S.size.
/// Throws Error(STATE) when MPI has already been finalised.
void startControlPlane();

/// Whether the application (or the runtime) has finalised MPI: MPI objects
/// are gone then and must not be freed.
bool mpiFinalized();

/// Frees `comm` unless it is MPI_COMM_NULL; leaves it MPI_COMM_NULL.
void freeComm(MPI_Comm &comm) noexcept;

/// Finalises MPI if the runtime initialised it and it is not finalised yet;
/// returns MPI's status (MPI_SUCCESS when there was nothing to do).
int finalizeOwnedMpi() noexcept;

/// Ends the whole job with exit code 1: MPI_Abort while MPI is up, so that
/// no rank is left waiting for this one, else a plain exit.
[[noreturn]] void abortJob();

/// The exit path of a process leaving without distRtFinalize: a
/// non-blocking barrier on S.exitComm, polled for `timeoutS` seconds.
/// True when every rank arrived (all are leaving), false when some rank is
/// still running (or the barrier failed).
bool allRanksLeaving(double timeoutS);

/// Creates g.comm, the group's control communicator: a split of S.world,
/// collective over the world (ranks outside the mesh take part and get
/// MPI_COMM_NULL). Checks once that the ranks that formed it are
/// g.spec.members, in order; throws Error(MISMATCH) otherwise (the ranks
/// created groups in different orders).
void splitGroupComm(GroupEntry &g);

/// The control communicator over a mesh's ranks, ordered by linear index
/// (the world's when the mesh is the world in order). Created by the
/// members only (MPI_Comm_create_group), on their first call that needs it;
/// the members make such calls in the same order. MPI_COMM_NULL while
/// validation is off (nothing needs it then).
MPI_Comm meshComm(MeshEntry &m);

/// Every member's signature, in member order (an allgather on `comm`).
void gatherSignatures(MPI_Comm comm, const Signature &mine,
                      std::vector<Signature> &all);

/// Sends mine[i] to world rank peers[i] and receives theirs[i] from it,
/// point to point on S.world (all posted before any wait, so no order of
/// ranks deadlocks); ranks that are not peers take no part.
void swapExchangeSignatures(const std::vector<int64_t> &peers,
                            std::vector<ExchangeSignature> &mine,
                            std::vector<ExchangeSignature> &theirs);

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_CONTROLPLANE_H
