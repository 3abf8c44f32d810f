//===- CrossRankCheck.cpp - Local checks, then agreement ------------------===//

#include "CrossRankCheck.h"

namespace dist::rt {

/// This rank's signature for each peer the table names.
static void exchangeSignaturesFor(const ExchangeRole &role, int32_t dtype,
                                  uint64_t hash, int32_t localCode,
                                  std::vector<int64_t> &peers,
                                  std::vector<ExchangeSignature> &mine) {
  for (int64_t r : role.participants)
    if (r != S.rank)
      peers.push_back(r);
  mine.resize(peers.size());
  for (size_t i = 0; i < peers.size(); ++i) {
    int64_t to = 0, from = 0;
    exchangePairCounts(role, peers[i], to, from);
    ExchangeSignature &sig = mine[i];
    sig.op = int64_t(OpCode::Exchange);
    sig.dtype = dtype;
    sig.toPeer = to;
    sig.fromPeer = from;
    sig.hash = static_cast<int64_t>(hash);
    sig.failed = localCode;
  }
}

void exchangeSignatures(const ExchangeRole &role, int32_t dtype, uint64_t hash,
                        int32_t localCode) {
  std::vector<int64_t> peers;
  std::vector<ExchangeSignature> mine;
  exchangeSignaturesFor(role, dtype, hash, localCode, peers, mine);
  if (peers.empty())
    return;
  std::vector<ExchangeSignature> theirs(peers.size());
  swapExchangeSignatures(peers, mine, theirs);
  if (localCode != DIST_RT_OK)
    return;
  for (size_t i = 0; i < peers.size(); ++i)
    checkExchangeSignature(mine[i], theirs[i], S.rank, peers[i]);
}

void SignatureSwap::post(const ExchangeRole &role, int32_t dtype, uint64_t hash,
                         int32_t localCode,
                         const std::function<int(int64_t)> &tagOfPeer) {
  exchangeSignaturesFor(role, dtype, hash, localCode, peers, mine);
  theirs.resize(peers.size());
  requests.assign(2 * peers.size(), MPI_REQUEST_NULL);
  for (size_t i = 0; i < peers.size(); ++i) {
    const int peer = static_cast<int>(peers[i]);
    const int tag = tagOfPeer(peers[i]);
    checkMpi(MPI_Irecv(&theirs[i], kExchangeSigWords, MPI_INT64_T, peer, tag,
                       S.world, &requests[2 * i]),
             "MPI_Irecv (argument check)");
    checkMpi(MPI_Isend(&mine[i], kExchangeSigWords, MPI_INT64_T, peer, tag,
                       S.world, &requests[2 * i + 1]),
             "MPI_Isend (argument check)");
  }
}

void SignatureSwap::finish(bool check) {
  if (requests.empty())
    return;
  checkMpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(),
                       MPI_STATUSES_IGNORE),
           "MPI_Waitall (argument check)");
  requests.clear();
  if (check)
    for (size_t i = 0; i < peers.size(); ++i)
      checkExchangeSignature(mine[i], theirs[i], S.rank, peers[i]);
}

} // namespace dist::rt
