//===- ErrorCapture.h - What runtime code throws, for tests -----*- C++ -*-===//
//
// The runtime's pure code reports failures by throwing Error (Types.h); the
// unit tests check the code and the message the C ABI would pass on.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_TEST_RUNTIME_ERRORCAPTURE_H
#define DIST_TEST_RUNTIME_ERRORCAPTURE_H

#include "../../lib/Runtime/Types.h"

#include <cstdint>
#include <string>

namespace dist::rt::test {

/// The code `f` throws, or DIST_RT_OK.
template <typename F> int32_t errorCode(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.code();
  }
  return DIST_RT_OK;
}

/// The message `f` throws, or "".
template <typename F> std::string errorText(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

/// "<code>: <message>" of what `f` throws, or "no error".
template <typename F> std::string errorReport(F &&f) {
  try {
    f();
  } catch (const Error &e) {
    return std::to_string(e.code()) + ": " + e.what();
  }
  return "no error";
}

} // namespace dist::rt::test

#endif // DIST_TEST_RUNTIME_ERRORCAPTURE_H
