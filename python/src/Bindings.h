//===- Bindings.h - pieces of the dist_mlir._dist extension -----*- C++ -*-===//
//
// The extension is a thin layer over the C++ libraries: it converts values,
// turns llvm::Error into Python exceptions and releases the GIL around long
// work. Everything user-facing (placements, argument checking, docs) lives in
// the pure-Python package, which is easier to read and to change.
//
// Exceptions: this file is compiled with -fexceptions, LLVM and MLIR are not.
// A C++ exception must therefore never unwind through an LLVM or MLIR frame:
// callbacks that LLVM/MLIR invoke only record what happened, and the binding
// code throws after the library call has returned.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PYTHON_BINDINGS_H
#define DIST_PYTHON_BINDINGS_H

#include "llvm/Support/Error.h"

#include <pybind11/pybind11.h>

#include <stdexcept>
#include <string>

namespace dist::python {

/// Raised as dist_mlir.NoPlanError (a ValueError): the request is valid but
/// no sequence of moves reaches the target (e.g. under max_peak_bytes).
struct NoPlanFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Raised as dist_mlir.CompileError (a ValueError): parsing, verifying or a
/// pass failed; the message is the diagnostics as dist-opt prints them.
struct CompileFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Consumes `error` and throws it as a Python ValueError, prefixed by
/// `context` ("src: ...") when given.
[[noreturn]] void throwValueError(llvm::Error error,
                                  const std::string &context = {});

template <typename T>
T unwrapOrThrow(llvm::Expected<T> value, const std::string &context = {}) {
  if (!value)
    throwValueError(value.takeError(), context);
  return std::move(*value);
}

void bindPlanner(pybind11::module_ &m);
/// Defines compile(); without MLIR it raises a RuntimeError saying so.
void bindCompiler(pybind11::module_ &m);

} // namespace dist::python

#endif // DIST_PYTHON_BINDINGS_H
