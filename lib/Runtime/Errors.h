//===- Errors.h - The C ABI's error policy ----------------------*- C++ -*-===//
//
// Inside the runtime a failure is an Error exception (Types.h) carrying a
// DIST_RT_ERR_* code. At the C ABI every entry point runs its body in
// guard(), which turns the exception into the policy of DistRuntime.h:
// print "dist-runtime: rank R: <op>: <reason>" and end the job
// (the default), or record it for distRtLastError and return the code.
// Nothing thrown inside the runtime crosses the C ABI.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_ERRORS_H
#define DIST_LIB_RUNTIME_ERRORS_H

#include "Types.h"

#include <cstdint>
#include <exception>
#include <new>
#include <string>

namespace dist::rt {

/// Applies the error policy to a failure of `op`: records it, and unless
/// errors are returned, prints it and ends the job. Returns `code`.
int32_t fail(const char *op, int32_t code, const std::string &reason);

/// Throws Error(INVALID_ARGUMENT).
[[noreturn]] void invalid(const std::string &reason);

/// Throws Error(STATE) unless the runtime is initialised and not finalised.
void requireInit();

/// Runs `body`, turning any exception into the error policy. Nothing thrown
/// inside the runtime crosses the C ABI.
template <typename F> int32_t guard(const char *op, F &&body) noexcept {
  try {
    body();
    return DIST_RT_OK;
  } catch (const Error &e) {
    return fail(op, e.code(), e.what());
  } catch (const std::bad_alloc &) {
    return fail(op, DIST_RT_ERR_BACKEND, "out of host memory");
  } catch (const std::exception &e) {
    return fail(op, DIST_RT_ERR_BACKEND, e.what());
  } catch (...) {
    return fail(op, DIST_RT_ERR_BACKEND, "unknown internal failure");
  }
}

/// guard() for entry points that return a value: `onError` on failure.
template <typename T, typename F>
T guardValue(const char *op, T onError, F &&body) noexcept {
  T result = onError;
  if (guard(op, [&] { result = body(); }) != DIST_RT_OK)
    return onError;
  return result;
}

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_ERRORS_H
