//===- CrossRankCheck.cpp - Local checks, then agreement ------------------===//

#include "CrossRankCheck.h"

namespace dist::rt {

void exchangeSignatures(const ExchangeRole &role, int32_t dtype, uint64_t hash,
                        int32_t localCode) {
  std::vector<int64_t> peers;
  for (int64_t r : role.participants)
    if (r != S.rank)
      peers.push_back(r);
  if (peers.empty())
    return;
  const size_t n = peers.size();
  std::vector<ExchangeSignature> mine(n), theirs(n);
  for (size_t i = 0; i < n; ++i) {
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
  swapExchangeSignatures(peers, mine, theirs);
  if (localCode != DIST_RT_OK)
    return;
  for (size_t i = 0; i < n; ++i)
    checkExchangeSignature(mine[i], theirs[i], S.rank, peers[i]);
}

} // namespace dist::rt
