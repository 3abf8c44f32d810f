//===- Signature.cpp - What ranks compare before they communicate ---------===//

#include "Signature.h"

#include "Types.h"

#include <string>

namespace dist::rt {

namespace {

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

std::string dtypeText(int64_t v) {
  return v >= 0 && v <= DIST_RT_I1 ? dtypeName(static_cast<DType>(v))
                                   : "code " + std::to_string(v);
}

} // namespace

void checkSignatures(const Signature &mine, const std::vector<Signature> &all,
                     const std::vector<int64_t> &worldOfMember,
                     const char *countName) {
  const int n = static_cast<int>(all.size());
  for (int m = 0; m < n; ++m)
    if (all[m].failed != DIST_RT_OK)
      throw Error(static_cast<int32_t>(all[m].failed),
                  "world rank " + std::to_string(worldOfMember[m]) +
                      " failed its checks of this call (status " +
                      std::to_string(all[m].failed) + ")");
  static const char *fieldNames[] = {"the operation", nullptr, "dtype",
                                     "reduction", "the permute table"};
  for (int m = 0; m < n; ++m) {
    const int64_t *ours = &mine.op;
    const int64_t *theirs = &all[m].op;
    for (int f = 0; f < 5; ++f) {
      if (ours[f] == theirs[f])
        continue;
      std::string field = f == 1 ? countName : fieldNames[f];
      std::string reason = "ranks disagree on " + field + " (group of " +
                           std::to_string(n) + "): ";
      if (f == 4)
        reason += "this rank's table differs from world rank " +
                  std::to_string(worldOfMember[m]) + "'s";
      else
        reason += describeField(f, ours[f]) + " on this rank, " +
                  describeField(f, theirs[f]) + " on world rank " +
                  std::to_string(worldOfMember[m]);
      throw Error(DIST_RT_ERR_MISMATCH, reason);
    }
  }
}

void checkExchangeSignature(const ExchangeSignature &mine,
                            const ExchangeSignature &theirs, int64_t me,
                            int64_t peer) {
  const ExchangeSignature &a = mine, &b = theirs;
  const std::string meText = std::to_string(me);
  const std::string peerText = std::to_string(peer);
  if (b.failed != DIST_RT_OK)
    throw Error(static_cast<int32_t>(b.failed),
                "world rank " + peerText +
                    " failed its checks of this exchange (status " +
                    std::to_string(b.failed) + ")");
  std::string reason;
  if (b.op != a.op)
    reason = "world rank " + peerText + " is in another call";
  else if (b.dtype != a.dtype)
    reason = "dtype " + dtypeText(a.dtype) + " on rank " + meText + ", " +
             dtypeText(b.dtype) + " on rank " + peerText;
  else if (b.hash != a.hash)
    reason = "rank " + meText + "'s table differs from rank " + peerText + "'s";
  else if (b.fromPeer != a.toPeer || b.toPeer != a.fromPeer)
    reason = "rank " + meText + " sends " + std::to_string(a.toPeer) +
             " elements to rank " + peerText + ", which expects " +
             std::to_string(b.fromPeer) + "; rank " + peerText + " sends " +
             std::to_string(b.toPeer) + ", rank " + meText + " expects " +
             std::to_string(a.fromPeer);
  if (!reason.empty())
    throw Error(DIST_RT_ERR_MISMATCH,
                "ranks " + meText + " and " + peerText +
                    " disagree on the exchange: " + reason);
}

} // namespace dist::rt
