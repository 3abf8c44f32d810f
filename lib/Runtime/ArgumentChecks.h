//===- ArgumentChecks.h - Checks of the C ABI's arguments -------*- C++ -*-===//
//
// The checks every entry point applies to what the caller passed, before
// anything moves: counts the backend can carry, sizes that do not
// overflow, non-null and non-overlapping buffers, reductions the backend
// supports. Each throws Error with the reason the caller sees.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_ARGUMENTCHECKS_H
#define DIST_LIB_RUNTIME_ARGUMENTCHECKS_H

#include "Types.h"

#include <cstddef>
#include <cstdint>

namespace dist::rt {

/// `count` as a size: non-negative (INVALID_ARGUMENT) and within the
/// backend's per-call limit (UNSUPPORTED). `what` names it in the message.
size_t checkCount(int64_t count, const char *what);

/// count * multiplier elements of `t` in bytes; INVALID_ARGUMENT on
/// overflow.
size_t bytesOf(size_t count, size_t multiplier, DType t);

/// A buffer of `bytes` > 0 must not be null; `name` names it.
void checkBuffer(const void *p, size_t bytes, const char *name);

/// Whether two byte ranges share a byte (empty ranges share none).
bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes);

/// Converts and checks a dtype and reduction that the backend must be able
/// to combine; `op` receives the reduction.
DType checkReducible(int32_t dtype, int32_t redop, RedOp &op);

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_ARGUMENTCHECKS_H
