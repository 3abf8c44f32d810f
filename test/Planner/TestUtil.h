//===- TestUtil.h - Helpers shared by the planner unit tests ----*- C++ -*-===//
#ifndef DIST_TEST_PLANNER_TESTUTIL_H
#define DIST_TEST_PLANNER_TESTUTIL_H

#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <sys/resource.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#define DIST_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DIST_TEST_ASAN 1
#endif
#endif
#ifndef DIST_TEST_ASAN
#define DIST_TEST_ASAN 0
#endif

namespace dist::planner::test {

/// Parses or fails the test with the parser's message.
inline Mesh mesh(llvm::StringRef text) {
  llvm::Expected<Mesh> m = Mesh::parse(text);
  if (!m) {
    ADD_FAILURE() << llvm::toString(m.takeError());
    return *Mesh::create({{"x", 1}});
  }
  return std::move(*m);
}

inline Layout layout(const Mesh &m, llvm::StringRef text) {
  llvm::Expected<Layout> l = parseLayout(m, text);
  if (!l) {
    ADD_FAILURE() << llvm::toString(l.takeError());
    return Layout();
  }
  return std::move(*l);
}

/// The message of an expected error, or "<success>".
template <typename T> std::string errorOf(llvm::Expected<T> value) {
  if (value)
    return "<success>";
  return llvm::toString(value.takeError());
}
inline std::string errorOf(llvm::Error error) {
  if (!error)
    return "<success>";
  return llvm::toString(std::move(error));
}

/// Caps this process's address space at `mebibytes` and kills it (SIGALRM)
/// after `seconds`. Reproducers of inputs that used to exhaust memory, hang
/// or overflow the stack call it first inside EXPECT_EXIT, whose child
/// process it bounds, so that a regression fails the test and nothing else.
/// Under AddressSanitizer, which reserves terabytes of shadow address space,
/// the cap is ASan's own hard_rss_limit_mb (utils/check.sh --sanitize).
inline void boundThisProcess(unsigned seconds, unsigned mebibytes) {
#if DIST_TEST_ASAN
  (void)mebibytes;
  seconds *= 2;
#else
  rlimit limit{rlim_t(mebibytes) << 20, rlim_t(mebibytes) << 20};
  setrlimit(RLIMIT_AS, &limit);
#endif
  alarm(seconds);
}

} // namespace dist::planner::test

#endif
