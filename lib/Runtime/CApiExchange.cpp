//===- CApiExchange.cpp - C ABI: point-to-point box exchange --------------===//
//
// distRtExchange, the runtime side of redistribute (semantics §3): the
// table is checked alike on every rank, each named rank checks its own
// boxes and buffers, the named ranks agree pairwise (CrossRankCheck.h), and
// the backend moves the boxes. distRtExchangeLocal, for tables of local
// copies only, does the same without the agreement: no rank waits for
// another.
//
//===----------------------------------------------------------------------===//

#include "ArgumentChecks.h"
#include "CrossRankCheck.h"
#include "Errors.h"
#include "State.h"
#include "StridedGeometry.h"

#include "dist/Runtime/DistRuntime.h"

#include <string>

using namespace dist::rt;

namespace {
/// distRtExchange and distRtExchangeLocal: the same checks and the same
/// backend call; a local exchange has no peers to agree with, so it skips
/// the signature exchange (and its table must say so).
int32_t exchange(const char *name, bool localOnly, int64_t numDims,
                 const int64_t *sendShape, const void *send,
                 const int64_t *recvShape, void *recv, int64_t numTransfers,
                 const int64_t *table, int32_t dtype, void *stream) {
  return guard(name, [&] {
    requireInit();
    // The table is the same on every rank: a bad one fails everywhere alike,
    // before anyone communicates.
    validateExchangeTable(numDims, numTransfers, table, S.size);
    if (localOnly)
      requireLocalExchangeTable(numDims, numTransfers, table);
    ExchangeRole role = exchangeRole(numDims, numTransfers, table, S.rank);
    if (!role.named)
      return;
    // This rank's own checks. With validation on and errors returned, a
    // failure here is shared with the peers in the signature exchange, so
    // they fail too instead of waiting for this rank.
    DType t = DType::F32;
    Stream s = nullptr;
    LocalStatus local = runLocalChecks([&] {
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
    });
    if (S.validate && !localOnly)
      exchangeSignatures(role, dtype,
                         hashExchangeTable(numDims, numTransfers, table),
                         local.code);
    local.rethrow();
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
} // namespace

extern "C" {

int32_t distRtExchange(int64_t numDims, const int64_t *sendShape,
                       const void *send, const int64_t *recvShape, void *recv,
                       int64_t numTransfers, const int64_t *table,
                       int32_t dtype, void *stream) {
  return exchange("exchange", /*localOnly=*/false, numDims, sendShape, send,
                  recvShape, recv, numTransfers, table, dtype, stream);
}

int32_t distRtExchangeLocal(int64_t numDims, const int64_t *sendShape,
                            const void *send, const int64_t *recvShape,
                            void *recv, int64_t numTransfers,
                            const int64_t *table, int32_t dtype, void *stream) {
  return exchange("exchange_local", /*localOnly=*/true, numDims, sendShape,
                  send, recvShape, recv, numTransfers, table, dtype, stream);
}

} // extern "C"
