//===- FuzzSupport.h - Shared pieces of the libFuzzer harnesses -*- C++ -*-===//
//
// The harnesses (utils/fuzz.sh builds and runs them) feed arbitrary bytes to
// every reader of outside input. A harness fails only by crashing, by a
// sanitizer report, or by an invariant it checks with fuzzCheck: a wrong
// answer must be as loud as a crash.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TEST_FUZZ_FUZZSUPPORT_H
#define DIST_TEST_FUZZ_FUZZSUPPORT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace dist::fuzz {

/// Requests on meshes up to this size are planned. Larger ones cost time
/// that grows with the mesh by design (bounded, and tested in
/// test/Tools/dist-plan/huge-inputs.test); the fuzzers are after crashes and
/// wrong answers, and 10^6 executions need fast inputs. (The planner
/// harness found the 46321-device slowdown under this limit.)
constexpr int64_t kMaxFuzzedDevices = int64_t(1) << 16;

/// A search that runs long is not a finding (it ends in a clear error after
/// kMaxSearchSeconds): harnesses that plan cap it at this.
constexpr double kFuzzSearchSeconds = 0.05;

/// Aborts (a libFuzzer crash, with the input saved) when `ok` is false.
inline void fuzzCheck(bool ok, const char *what) {
  if (ok)
    return;
  std::fprintf(stderr, "fuzz invariant broken: %s\n", what);
  std::abort();
}

/// Drops an error: invalid input is expected, only crashes count.
template <typename T> bool ok(llvm::Expected<T> &value) {
  if (value)
    return true;
  llvm::consumeError(value.takeError());
  return false;
}
inline bool ok(llvm::Error error) {
  if (!error)
    return true;
  llvm::consumeError(std::move(error));
  return false;
}

/// The input split at newlines into exactly `n` fields (missing ones empty,
/// the last one takes the rest), so that one input states a whole request.
inline std::vector<llvm::StringRef> fields(llvm::StringRef text, size_t n) {
  std::vector<llvm::StringRef> out;
  for (size_t i = 0; i + 1 < n; ++i) {
    auto [head, tail] = text.split('\n');
    out.push_back(head);
    text = tail;
  }
  out.push_back(text);
  return out;
}

} // namespace dist::fuzz

#endif // DIST_TEST_FUZZ_FUZZSUPPORT_H
