//===- Exchange.cpp - Tables of distRtExchange ----------------------------===//

#include "Exchange.h"
#include "Types.h"

#include <algorithm>
#include <map>
#include <string>

namespace dist::rt {

namespace {

[[noreturn]] void invalid(const std::string &reason) {
  throw Error(DIST_RT_ERR_INVALID_ARGUMENT, reason);
}

std::string field(const char *name, int64_t d) {
  return std::string(name) + "[" + std::to_string(d) + "]";
}

std::string entryName(int64_t k) { return "table entry " + std::to_string(k); }

} // namespace

int64_t ExchangeEntry::elements() const {
  int64_t n = 1;
  for (int d = 0; d < numDims; ++d)
    n *= size()[d];
  return n;
}

void requireLocalExchangeTable(int64_t numDims, int64_t numTransfers,
                               const int64_t *table) {
  for (int64_t k = 0; k < numTransfers; ++k) {
    ExchangeEntry e = exchangeEntry(table, numDims, k);
    if (e.src() != e.dst())
      invalid(entryName(k) + ": srcRank = " + std::to_string(e.src()) +
              " and dstRank = " + std::to_string(e.dst()) +
              " differ; a local exchange copies within each rank only");
  }
}

void validateExchangeTable(int64_t numDims, int64_t numTransfers,
                           const int64_t *table, int64_t worldSize) {
  if (numDims < 0 || numDims > DIST_RT_MAX_COPY_DIMS)
    invalid("numDims " + std::to_string(numDims) + " is outside [0, " +
            std::to_string(DIST_RT_MAX_COPY_DIMS) + "]");
  if (numTransfers < 0)
    invalid("numTransfers is negative (" + std::to_string(numTransfers) + ")");
  if (numTransfers > 0 && !table)
    invalid("the table is null but numTransfers is " +
            std::to_string(numTransfers));
  for (int64_t k = 0; k < numTransfers; ++k) {
    ExchangeEntry e = exchangeEntry(table, numDims, k);
    const std::pair<const char *, int64_t> ranks[] = {{"srcRank", e.src()},
                                                      {"dstRank", e.dst()}};
    for (const auto &[name, r] : ranks)
      if (r < 0 || r >= worldSize)
        invalid(entryName(k) + ": " + name + " = " + std::to_string(r) +
                " is not a rank of the " + std::to_string(worldSize) +
                "-rank job");
    int64_t n = 1;
    for (int64_t d = 0; d < numDims; ++d) {
      if (e.srcOffset()[d] < 0)
        invalid(entryName(k) + ": " + field("srcOffset", d) + " = " +
                std::to_string(e.srcOffset()[d]) + " is negative");
      if (e.dstOffset()[d] < 0)
        invalid(entryName(k) + ": " + field("dstOffset", d) + " = " +
                std::to_string(e.dstOffset()[d]) + " is negative");
      if (e.size()[d] < 0)
        invalid(entryName(k) + ": " + field("size", d) + " = " +
                std::to_string(e.size()[d]) + " is negative");
      if (__builtin_mul_overflow(n, e.size()[d], &n))
        invalid(entryName(k) + ": the box's element count overflows");
    }
  }
}

void checkExchangeBounds(int64_t numDims, int64_t numTransfers,
                         const int64_t *table, int64_t rank,
                         const int64_t *sendShape, const int64_t *recvShape) {
  for (int64_t k = 0; k < numTransfers; ++k) {
    ExchangeEntry e = exchangeEntry(table, numDims, k);
    if ((e.src() != rank && e.dst() != rank) || e.elements() == 0)
      continue;
    for (int side = 0; side < 2; ++side) {
      const bool sending = side == 0;
      if ((sending ? e.src() : e.dst()) != rank)
        continue;
      const int64_t *shape = sending ? sendShape : recvShape;
      const int64_t *offset = sending ? e.srcOffset() : e.dstOffset();
      const char *shapeName = sending ? "sendShape" : "recvShape";
      const char *offsetName = sending ? "srcOffset" : "dstOffset";
      if (numDims > 0 && !shape)
        invalid(entryName(k) + ": this rank " +
                (sending ? "sends" : "receives") + " a box but " + shapeName +
                " is null");
      for (int64_t d = 0; d < numDims; ++d) {
        if (shape[d] < 0)
          invalid(field(shapeName, d) + " = " + std::to_string(shape[d]) +
                  " is negative");
        int64_t end;
        if (__builtin_add_overflow(offset[d], e.size()[d], &end) ||
            end > shape[d])
          invalid(entryName(k) + ": " + field(offsetName, d) + " + " +
                  field("size", d) + " = " + std::to_string(offset[d]) + " + " +
                  std::to_string(e.size()[d]) + " exceeds " +
                  field(shapeName, d) + " = " + std::to_string(shape[d]));
      }
    }
  }
}

uint64_t hashExchangeTable(int64_t numDims, int64_t numTransfers,
                           const int64_t *table) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  mix(numDims);
  mix(numTransfers);
  const int64_t words = numTransfers * exchangeEntryWords(numDims);
  for (int64_t i = 0; i < words; ++i)
    mix(table[i]);
  return h;
}

ExchangeRole exchangeRole(int64_t numDims, int64_t numTransfers,
                          const int64_t *table, int64_t rank) {
  ExchangeRole role;
  std::map<int64_t, ExchangePeer> sends, recvs;
  std::vector<int64_t> named;
  for (int64_t k = 0; k < numTransfers; ++k) {
    ExchangeEntry e = exchangeEntry(table, numDims, k);
    named.push_back(e.src());
    named.push_back(e.dst());
    if (e.src() != rank && e.dst() != rank)
      continue;
    role.named = true;
    const int64_t n = e.elements();
    if (n == 0)
      continue;
    if (e.src() == rank && e.dst() == rank) {
      role.local.push_back(k);
      continue;
    }
    ExchangePeer &peer = e.src() == rank ? sends[e.dst()] : recvs[e.src()];
    peer.rank = e.src() == rank ? e.dst() : e.src();
    peer.entries.push_back(k);
    peer.elements += n;
  }
  std::sort(named.begin(), named.end());
  named.erase(std::unique(named.begin(), named.end()), named.end());
  role.participants = std::move(named);
  for (auto &entry : sends)
    role.sends.push_back(std::move(entry.second));
  for (auto &entry : recvs)
    role.recvs.push_back(std::move(entry.second));
  return role;
}

void exchangePairCounts(const ExchangeRole &role, int64_t peer, int64_t &toPeer,
                        int64_t &fromPeer) {
  toPeer = fromPeer = 0;
  for (const ExchangePeer &p : role.sends)
    if (p.rank == peer)
      toPeer = p.elements;
  for (const ExchangePeer &p : role.recvs)
    if (p.rank == peer)
      fromPeer = p.elements;
}

void rowMajorStrides(int64_t numDims, const int64_t *shape, int64_t *strides) {
  int64_t s = 1;
  for (int64_t d = numDims; d-- > 0;) {
    strides[d] = s;
    s *= shape[d];
  }
}

int64_t rowMajorOffset(int64_t numDims, const int64_t *shape,
                       const int64_t *offset) {
  int64_t o = 0;
  for (int64_t d = 0; d < numDims; ++d)
    o = o * shape[d] + offset[d];
  return o;
}

bool boxIsContiguous(int64_t numDims, const int64_t *shape,
                     const int64_t *size) {
  // Leading dims of size 1, then at most one partial dim, then full dims.
  int64_t d = 0;
  while (d < numDims && size[d] == 1)
    ++d;
  if (d == numDims)
    return true;
  ++d; // the partial (or full) outermost dim that has more than one row
  for (; d < numDims; ++d)
    if (size[d] != shape[d])
      return false;
  return true;
}

BoxCopy boxPackCopy(int64_t numDims, const int64_t *shape,
                    const int64_t *offset, const int64_t *size,
                    size_t elemBytes, const void *tensor, const void *packed,
                    bool toPacked) {
  int64_t tensorStrides[DIST_RT_MAX_COPY_DIMS];
  int64_t packedStrides[DIST_RT_MAX_COPY_DIMS];
  rowMajorStrides(numDims, shape, tensorStrides);
  rowMajorStrides(numDims, size, packedStrides);
  char *box =
      static_cast<char *>(const_cast<void *>(tensor)) +
      rowMajorOffset(numDims, shape, offset) * static_cast<int64_t>(elemBytes);
  char *pk = static_cast<char *>(const_cast<void *>(packed));
  BoxCopy c;
  if (toPacked) {
    c.plan = makeCopyPlan(numDims, size, tensorStrides, packedStrides,
                          elemBytes, box, pk);
    c.src = box;
    c.dst = pk;
  } else {
    c.plan = makeCopyPlan(numDims, size, packedStrides, tensorStrides,
                          elemBytes, pk, box);
    c.src = pk;
    c.dst = box;
  }
  return c;
}

BoxCopy boxCopy(int64_t numDims, const int64_t *size, const int64_t *srcShape,
                const int64_t *srcOffset, const void *src,
                const int64_t *dstShape, const int64_t *dstOffset,
                const void *dst, size_t elemBytes) {
  int64_t srcStrides[DIST_RT_MAX_COPY_DIMS], dstStrides[DIST_RT_MAX_COPY_DIMS];
  rowMajorStrides(numDims, srcShape, srcStrides);
  rowMajorStrides(numDims, dstShape, dstStrides);
  const int64_t e = static_cast<int64_t>(elemBytes);
  BoxCopy c;
  c.src = static_cast<const char *>(src) +
          rowMajorOffset(numDims, srcShape, srcOffset) * e;
  c.dst = static_cast<char *>(const_cast<void *>(dst)) +
          rowMajorOffset(numDims, dstShape, dstOffset) * e;
  c.plan = makeCopyPlan(numDims, size, srcStrides, dstStrides, elemBytes, c.src,
                        c.dst);
  return c;
}

} // namespace dist::rt
