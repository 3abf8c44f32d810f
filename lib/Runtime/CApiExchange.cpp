//===- CApiExchange.cpp - C ABI: point-to-point box exchange --------------===//
//
// distRtExchange, the runtime side of redistribute (semantics §3): the
// table is checked alike on every rank, each named rank checks its own
// boxes and buffers, the named ranks agree pairwise (CrossRankCheck.h), and
// the backend moves the boxes. distRtExchangeLocal, for tables of local
// copies only, does the same without the agreement: no rank waits for
// another. distRtExchangeStart/Wait split distRtExchange in two: the
// start posts everything (signatures included) and the wait checks the
// signatures, then completes the transfers.
//
//===----------------------------------------------------------------------===//

#include "ArgumentChecks.h"
#include "Backend.h"
#include "CrossRankCheck.h"
#include "Errors.h"
#include "State.h"
#include "StridedGeometry.h"

#include "dist/Runtime/DistRuntime.h"

#include <map>
#include <memory>
#include <string>

using namespace dist::rt;

namespace {

/// The checks every rank runs on its own arguments before an exchange
/// (the table and shapes against its boxes, its buffers); the element type
/// and stream resolved on the way.
LocalStatus checkOwnExchange(const ExchangeRole &role, int64_t numDims,
                             const int64_t *sendShape, const void *send,
                             const int64_t *recvShape, void *recv,
                             int64_t numTransfers, const int64_t *table,
                             int32_t dtype, void *stream, DType &t, Stream &s) {
  return runLocalChecks([&] {
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
}

ExchangeCall exchangeCall(const ExchangeRole &role, int64_t numDims,
                          const int64_t *sendShape, const void *send,
                          const int64_t *recvShape, void *recv,
                          const int64_t *table, DType t) {
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
  return call;
}

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
    LocalStatus local =
        checkOwnExchange(role, numDims, sendShape, send, recvShape, recv,
                         numTransfers, table, dtype, stream, t, s);
    if (S.validate && !localOnly)
      exchangeSignatures(role, dtype,
                         hashExchangeTable(numDims, numTransfers, table),
                         local.code);
    local.rethrow();
    if (role.sends.empty() && role.recvs.empty() && role.local.empty())
      return;
    ExchangeCall call =
        exchangeCall(role, numDims, sendShape, send, recvShape, recv, table, t);
    S.backend->exchange(call, s);
  });
}
/// Tags of the non-blocking exchanges' messages: the n-th exchange that
/// names a pair of ranks (both count alike: they start the exchanges they
/// share in the same order) uses tag kBase + n mod kSpan for its boxes on
/// the backend and kSignatureBase + n mod kSpan for its signatures on the
/// control plane, so that what one leaves unreceived (a cancelled one)
/// never meets another's receive until kSpan more have passed.
constexpr int kBoxTagBase = 1024, kSignatureTagBase = 1024 + 8192,
              kTagSpan = 8192;

/// An exchange between distRtExchangeStart and distRtExchangeWait.
struct InFlightExchange {
  ExchangeRole role;
  std::unique_ptr<Backend::PendingExchange> pending;
  std::unique_ptr<SignatureSwap> signatures;
};

struct InFlightTable {
  std::map<int64_t, std::unique_ptr<InFlightExchange>> byHandle;
  int64_t next = 1;
  /// Per peer world rank: the non-blocking exchanges started with it.
  std::map<int64_t, uint64_t> startedWith;
};
InFlightTable &inFlight() {
  static InFlightTable *table = new InFlightTable(); // leaked, as S
  return *table;
}

int32_t exchangeStart(int64_t numDims, const int64_t *sendShape,
                      const void *send, const int64_t *recvShape, void *recv,
                      int64_t numTransfers, const int64_t *table, int32_t dtype,
                      void *stream, int64_t *request) {
  return guard("exchange_start", [&] {
    requireInit();
    if (!request)
      invalid("request is NULL");
    *request = 0;
    validateExchangeTable(numDims, numTransfers, table, S.size);
    auto flight = std::make_unique<InFlightExchange>();
    flight->role = exchangeRole(numDims, numTransfers, table, S.rank);
    const ExchangeRole &role = flight->role;
    InFlightTable &all = inFlight();
    if (role.named) {
      // This exchange's tag with each peer (counted now, on every path, so
      // that both sides of a pair stay in step).
      std::map<int64_t, int> tags;
      for (int64_t peer : role.participants)
        if (peer != S.rank)
          tags[peer] = static_cast<int>(all.startedWith[peer]++ % kTagSpan);
      auto tagOf = [&](int base) {
        return [&tags, base](int64_t peer) { return base + tags.at(peer); };
      };
      DType t = DType::F32;
      Stream s = nullptr;
      LocalStatus local =
          checkOwnExchange(role, numDims, sendShape, send, recvShape, recv,
                           numTransfers, table, dtype, stream, t, s);
      if (S.validate) {
        flight->signatures = std::make_unique<SignatureSwap>();
        flight->signatures->post(
            role, dtype, hashExchangeTable(numDims, numTransfers, table),
            local.code, tagOf(kSignatureTagBase));
      }
      if (local.code != DIST_RT_OK) {
        // The peers learn of it from the signature at their wait; this rank
        // reports now, once its signatures are delivered.
        flight->signatures->finish(/*check=*/false);
        local.rethrow();
      }
      if (!role.sends.empty() || !role.recvs.empty() || !role.local.empty())
        flight->pending = S.backend->exchangeStart(
            exchangeCall(role, numDims, sendShape, send, recvShape, recv, table,
                         t),
            tagOf(kBoxTagBase), s);
    }
    const int64_t handle = all.next++;
    all.byHandle.emplace(handle, std::move(flight));
    *request = handle;
  });
}

int32_t exchangeWait(int64_t request) {
  return guard("exchange_wait", [&] {
    requireInit();
    InFlightTable &all = inFlight();
    auto it = all.byHandle.find(request);
    if (it == all.byHandle.end())
      invalid("request " + std::to_string(request) +
              " is not an exchange in flight (started by "
              "distRtExchangeStart and not yet waited for)");
    std::unique_ptr<InFlightExchange> flight = std::move(it->second);
    all.byHandle.erase(it);
    if (flight->signatures) {
      try {
        flight->signatures->finish(/*check=*/true);
      } catch (...) {
        // The peers disagree (or one failed): nothing received is used.
        if (flight->pending)
          flight->pending->cancel();
        throw;
      }
    }
    if (flight->pending)
      flight->pending->wait();
  });
}

} // namespace

extern "C" {

int32_t distRtExchangeStart(int64_t numDims, const int64_t *sendShape,
                            const void *send, const int64_t *recvShape,
                            void *recv, int64_t numTransfers,
                            const int64_t *table, int32_t dtype, void *stream,
                            int64_t *request) {
  return exchangeStart(numDims, sendShape, send, recvShape, recv, numTransfers,
                       table, dtype, stream, request);
}

int32_t distRtExchangeWait(int64_t request) { return exchangeWait(request); }

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
