//===- Signature.h - What ranks compare before they communicate -*- C++ -*-===//
//
// While validation is on, the members of a call exchange a small signature
// of what they are about to do before any data moves, so a wrong-size buffer
// or calls out of order are reported on every member instead of corrupting
// data or hanging (DistRuntime.h, "Collectives are collective"). This file
// is the protocol's data: the words sent and how a difference is worded.
// Sending them is the control plane's job (ControlPlane.h), running the
// local checks around it CrossRankCheck.h's. No MPI, no process state.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_SIGNATURE_H
#define DIST_LIB_RUNTIME_SIGNATURE_H

#include <cstdint>
#include <vector>

namespace dist::rt {

/// The call a signature is for; part of the wire format.
enum class OpCode : int64_t {
  AllGather = 1,
  AllToAll,
  ReduceScatter,
  AllReduce,
  Permute,
  Exchange,
};

/// A collective's signature: every member of the group sends the same six
/// words and compares its own with everyone's.
struct Signature {
  int64_t op;
  int64_t count;
  int64_t dtype;
  int64_t redop;  // -1 when the op has none
  int64_t extra;  // permute: table hash
  int64_t failed; // status of this rank's local checks (return mode)
};
constexpr int kSigWords = sizeof(Signature) / sizeof(int64_t);

/// Throws the first problem the members' signatures `all` (indexed by
/// member, whose world ranks are `worldOfMember`) show against this rank's
/// `mine`: a member whose own checks failed, with its status, else
/// Error(MISMATCH) naming the first field that differs. `countName` is how
/// the call names its count.
void checkSignatures(const Signature &mine, const std::vector<Signature> &all,
                     const std::vector<int64_t> &worldOfMember,
                     const char *countName);

/// The exchange's signature: what one rank expects of its exchange with one
/// other rank.
struct ExchangeSignature {
  int64_t op; // OpCode::Exchange
  int64_t dtype;
  int64_t toPeer;   // elements this rank sends to the peer
  int64_t fromPeer; // elements this rank expects from the peer
  int64_t hash;     // of the whole table
  int64_t failed;   // status of this rank's local checks (return mode)
};
constexpr int kExchangeSigWords = sizeof(ExchangeSignature) / sizeof(int64_t);

/// Throws if world rank `peer`'s signature `theirs` shows that its own
/// checks failed (with its status) or that it disagrees with this rank's
/// (`me`) `mine` (Error(MISMATCH) naming both ranks, worded alike on both).
void checkExchangeSignature(const ExchangeSignature &mine,
                            const ExchangeSignature &theirs, int64_t me,
                            int64_t peer);

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_SIGNATURE_H
