//===- Exchange.h - Tables of distRtExchange --------------------*- C++ -*-===//
//
// The pure index math behind distRtExchange (semantics §3 redistribute): table
// validation, hashing, what one rank does, and the copy plans between a
// box of a row-major tensor and a packed buffer or another tensor. No MPI
// here, so that it is unit-tested on its own and shared by every backend.
//
// A table lists transfers of 2 + 3*numDims int64 words each:
//   srcRank, dstRank, srcOffset[numDims], dstOffset[numDims], size[numDims]
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_RUNTIME_EXCHANGE_H
#define DIST_LIB_RUNTIME_EXCHANGE_H

#include "CopyPlan.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dist::rt {

/// Words per transfer of a table over `numDims` dims.
inline int64_t exchangeEntryWords(int64_t numDims) { return 2 + 3 * numDims; }

/// One transfer of a table: a view of its words.
struct ExchangeEntry {
  const int64_t *words = nullptr;
  int numDims = 0;

  int64_t src() const { return words[0]; }
  int64_t dst() const { return words[1]; }
  const int64_t *srcOffset() const { return words + 2; }
  const int64_t *dstOffset() const { return words + 2 + numDims; }
  const int64_t *size() const { return words + 2 + 2 * numDims; }
  /// Elements of the box (0 for an empty box). Valid on a validated table.
  int64_t elements() const;
};

inline ExchangeEntry exchangeEntry(const int64_t *table, int64_t numDims,
                                   int64_t index) {
  return {table + index * exchangeEntryWords(numDims),
          static_cast<int>(numDims)};
}

/// Checks what every rank can check alike (the table is the same on every
/// rank): numDims in [0, DIST_RT_MAX_COPY_DIMS], numTransfers >= 0, a table
/// pointer when there are transfers, ranks in [0, worldSize), offsets and
/// sizes >= 0, box element counts that do not overflow. Throws
/// Error(INVALID_ARGUMENT) naming the entry and the field.
void validateExchangeTable(int64_t numDims, int64_t numTransfers,
                           const int64_t *table, int64_t worldSize);

/// After validateExchangeTable, for distRtExchangeLocal: every transfer is a
/// local copy (srcRank == dstRank). Throws Error(INVALID_ARGUMENT) naming the
/// first entry that is not.
void requireLocalExchangeTable(int64_t numDims, int64_t numTransfers,
                               const int64_t *table);

/// Checks the transfers that name `rank` against its shapes: a box it sends
/// must lie inside sendShape, a box it receives inside recvShape. A shape
/// may be null when no non-empty box needs it. Throws
/// Error(INVALID_ARGUMENT) naming the entry and the field.
void checkExchangeBounds(int64_t numDims, int64_t numTransfers,
                         const int64_t *table, int64_t rank,
                         const int64_t *sendShape, const int64_t *recvShape);

/// A 64-bit FNV-1a hash of numDims, numTransfers and every word of the
/// table, so that ranks can cheaply check that they run the same exchange.
uint64_t hashExchangeTable(int64_t numDims, int64_t numTransfers,
                           const int64_t *table);

/// The transfers between this rank and one other rank in one direction.
struct ExchangePeer {
  int64_t rank = -1;
  std::vector<int64_t> entries; ///< indices of non-empty boxes, table order
  int64_t elements = 0;         ///< sum of their element counts
};

/// What one rank does in a (validated) exchange.
struct ExchangeRole {
  /// The table names this rank (as sender or receiver of any transfer,
  /// empty boxes included). A rank that is not named returns at once.
  bool named = false;
  /// Every rank the table names, ascending (this rank included when named).
  std::vector<int64_t> participants;
  std::vector<ExchangePeer> sends; ///< by peer rank, ascending
  std::vector<ExchangePeer> recvs; ///< by peer rank, ascending
  std::vector<int64_t> local;      ///< non-empty local copies, table order
  bool sendsData() const { return !sends.empty() || !local.empty(); }
  bool receivesData() const { return !recvs.empty() || !local.empty(); }
};

ExchangeRole exchangeRole(int64_t numDims, int64_t numTransfers,
                          const int64_t *table, int64_t rank);

/// Elements a rank sends to `peer` and receives from it (empty boxes and
/// local copies count nothing): the counts the signature check compares.
void exchangePairCounts(const ExchangeRole &role, int64_t peer, int64_t &toPeer,
                        int64_t &fromPeer);

/// Row-major strides (in elements) of a contiguous tensor of `shape`.
void rowMajorStrides(int64_t numDims, const int64_t *shape, int64_t *strides);

/// Element offset of `offset` in a row-major tensor of `shape`.
int64_t rowMajorOffset(int64_t numDims, const int64_t *shape,
                       const int64_t *offset);

/// Whether the box `size` at `offset` is one contiguous run of a row-major
/// tensor of `shape` (then it can be sent or received in place).
bool boxIsContiguous(int64_t numDims, const int64_t *shape,
                     const int64_t *size);

/// A copy plan with the pointers it runs on (the boxes' first elements).
struct BoxCopy {
  CopyPlan plan;
  const void *src = nullptr;
  void *dst = nullptr;
};

/// The copy between the box (`offset`, `size`) of a row-major tensor of
/// `shape` at `tensor` and a packed row-major buffer of the box at `packed`:
/// tensor -> packed when toPacked, else packed -> tensor.
BoxCopy boxPackCopy(int64_t numDims, const int64_t *shape,
                    const int64_t *offset, const int64_t *size,
                    size_t elemBytes, const void *tensor, const void *packed,
                    bool toPacked);

/// The copy of the box `size` from (srcShape, srcOffset) of `src` to
/// (dstShape, dstOffset) of `dst`, both row-major tensors.
BoxCopy boxCopy(int64_t numDims, const int64_t *size, const int64_t *srcShape,
                const int64_t *srcOffset, const void *src,
                const int64_t *dstShape, const int64_t *dstOffset,
                const void *dst, size_t elemBytes);

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_EXCHANGE_H
