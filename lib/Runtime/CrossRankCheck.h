//===- CrossRankCheck.h - Local checks, then agreement ----------*- C++ -*-===//
//
// Before a call communicates, every rank runs its own argument checks and
// then (while validation is on) the ranks of the call exchange signatures
// (Signature.h) over the control plane. A rank whose own checks failed
// sends its status instead of leaving, so in return-error mode every rank
// of the call fails and nobody waits for it forever; a mismatch is reported
// on every rank alike, before any data moves.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_CROSSRANKCHECK_H
#define DIST_LIB_RUNTIME_CROSSRANKCHECK_H

#include "ControlPlane.h"
#include "Exchange.h"
#include "Signature.h"
#include "State.h"

#include <functional>
#include <string>
#include <vector>

namespace dist::rt {

/// The outcome of this rank's own checks of a call.
struct LocalStatus {
  int32_t code = DIST_RT_OK;
  std::string reason;

  /// Throws the failure, if any.
  void rethrow() const {
    if (code != DIST_RT_OK)
      throw Error(code, reason);
  }
};

/// Runs this rank's own checks. A failure is thrown on at once when that
/// ends the job anyway (abort on error) or when no signature will tell the
/// peers (validation off); otherwise it is returned, to be sent to them.
template <typename F> LocalStatus runLocalChecks(F &&checks) {
  LocalStatus status;
  try {
    checks();
  } catch (const Error &e) {
    if (S.abortOnError || !S.validate)
      throw;
    status.code = e.code();
    status.reason = e.what();
  }
  return status;
}

/// Runs the local checks of a collective, then (while validation is on) has
/// the members exchange what they are about to do. Every member sees the same
/// table, so a mismatch or a member whose own checks failed is reported on
/// all of them and nobody enters a collective that would hang or exchange
/// wrongly-sized data. The local checks may complete the signature (the
/// permute's table hash).
template <typename F>
void agree(MPI_Comm comm, const std::vector<int64_t> &worldOfMember,
           Signature sig, const char *countName, F &&localChecks) {
  LocalStatus local = runLocalChecks([&] { localChecks(sig); });
  if (!S.validate)
    return;
  sig.failed = local.code;
  std::vector<Signature> all(worldOfMember.size());
  gatherSignatures(comm, sig, all);
  local.rethrow();
  checkSignatures(sig, all, worldOfMember, countName);
}

/// The exchange's agreement: every rank the table names exchanges its
/// signature with every other one (not only the ranks it moves data with:
/// tables that disagree on who exchanges with whom are caught too), point
/// to point, so ranks the table does not name take no part. A disagreement
/// is reported on both ranks of the pair as MISMATCH naming both; a peer
/// whose own checks failed fails this rank too. `localCode` is this rank's
/// own status, sent to the peers; the caller reports its own failure.
void exchangeSignatures(const ExchangeRole &role, int32_t dtype, uint64_t hash,
                        int32_t localCode);

/// exchangeSignatures without waiting (distRtExchangeStart): post() sends
/// this rank's signatures and posts the receives of the peers', each pair on
/// its own tag; finish() waits for them and, with `check`, compares them as
/// exchangeSignatures does. The buffers live in the object until finish().
struct SignatureSwap {
  std::vector<int64_t> peers;
  std::vector<ExchangeSignature> mine, theirs;
  std::vector<MPI_Request> requests;
  void post(const ExchangeRole &role, int32_t dtype, uint64_t hash,
            int32_t localCode, const std::function<int(int64_t)> &tagOfPeer);
  void finish(bool check);
};

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_CROSSRANKCHECK_H
