//===- ArgumentChecks.cpp - Checks of the C ABI's arguments ---------------===//

#include "ArgumentChecks.h"

#include "Errors.h"
#include "State.h"

#include <string>

namespace dist::rt {

size_t checkCount(int64_t count, const char *what) {
  if (count < 0)
    invalid(std::string(what) + " is negative (" + std::to_string(count) + ")");
  if (static_cast<uint64_t>(count) > S.backend->maxCount())
    throw Error(DIST_RT_ERR_UNSUPPORTED,
                std::string(what) + " " + std::to_string(count) +
                    " exceeds the " + S.backendName + " backend's limit of " +
                    std::to_string(S.backend->maxCount()) +
                    " elements per call");
  return static_cast<size_t>(count);
}

size_t bytesOf(size_t count, size_t multiplier, DType t) {
  size_t r;
  if (__builtin_mul_overflow(count, multiplier, &r) ||
      __builtin_mul_overflow(r, dtypeSize(t), &r))
    invalid("buffer size overflows");
  return r;
}

void checkBuffer(const void *p, size_t bytes, const char *name) {
  if (bytes > 0 && !p)
    invalid(std::string(name) + " buffer is null");
}

bool overlaps(const void *a, size_t aBytes, const void *b, size_t bBytes) {
  if (aBytes == 0 || bBytes == 0)
    return false;
  auto x = reinterpret_cast<uintptr_t>(a);
  auto y = reinterpret_cast<uintptr_t>(b);
  return x < y + bBytes && y < x + aBytes;
}

DType checkReducible(int32_t dtype, int32_t redop, RedOp &op) {
  DType t = toDType(dtype);
  op = toRedOp(redop);
  checkReduction(t, op);
  if (!S.backend->supportsReduction(t, op))
    throw Error(DIST_RT_ERR_UNSUPPORTED,
                std::string("the ") + S.backendName + " backend cannot " +
                    redOpName(op) + "-reduce " + dtypeName(t));
  return t;
}

} // namespace dist::rt
