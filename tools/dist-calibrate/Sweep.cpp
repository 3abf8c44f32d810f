//===- Sweep.cpp - dist-calibrate's message sizes -------------------------===//

#include "Sweep.h"

#include "llvm/ADT/Twine.h"

#include <limits>

using namespace dist::calibrate;

static llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

llvm::Expected<int64_t> dist::calibrate::parseBytes(llvm::StringRef text) {
  llvm::StringRef digits = text.trim();
  int64_t unit = 1;
  for (auto [suffix, scale] :
       {std::pair<llvm::StringRef, int64_t>{"KiB", int64_t(1) << 10},
        {"MiB", int64_t(1) << 20},
        {"GiB", int64_t(1) << 30}})
    if (digits.consume_back(suffix)) {
      unit = scale;
      break;
    }
  uint64_t value = 0;
  if (digits.empty() || digits.getAsInteger(10, value) || value == 0)
    return fail("'" + text +
                "' is not a size in bytes (a positive integer, optionally "
                "with KiB, MiB or GiB)");
  if (value > uint64_t(std::numeric_limits<int64_t>::max() / unit))
    return fail("'" + text + "' is too large");
  return int64_t(value) * unit;
}

llvm::Expected<std::vector<int64_t>>
dist::calibrate::parseSweep(llvm::StringRef text) {
  auto [loText, hiText] = text.split(':');
  if (!text.contains(':'))
    return fail("--sizes '" + text + "' is not LO:HI (e.g. 1KiB:64MiB)");
  llvm::Expected<int64_t> lo = parseBytes(loText);
  if (!lo)
    return lo.takeError();
  llvm::Expected<int64_t> hi = parseBytes(hiText);
  if (!hi)
    return hi.takeError();
  if (*hi > kMaxSweepBytes)
    return fail("--sizes: " + hiText +
                " per device is more than the 1 GiB "
                "a sweep may use (an all_gather's result is p times it)");
  std::vector<int64_t> sizes;
  for (int64_t n = *lo; n <= *hi; n *= 4)
    sizes.push_back(n);
  if (sizes.size() < 3)
    return fail("--sizes " + text + " gives " + llvm::Twine(sizes.size()) +
                " message size(s) (LO, 4 LO, 16 LO, ... up to HI); fitting "
                "alpha and beta needs at least 3");
  return sizes;
}
