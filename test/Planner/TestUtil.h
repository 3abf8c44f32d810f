//===- TestUtil.h - Helpers shared by the planner unit tests ----*- C++ -*-===//
#ifndef DIST_TEST_PLANNER_TESTUTIL_H
#define DIST_TEST_PLANNER_TESTUTIL_H

#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

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

} // namespace dist::planner::test

#endif
