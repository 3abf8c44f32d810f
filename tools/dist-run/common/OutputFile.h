//===- OutputFile.h - write a file, every failure an error ------*- C++ -*-===//
//
// Part of dist-run's common code (tools/dist-run/common): LLVM's Support
// library only. Job files, .npy dumps, object files and bytecode are all
// written the same way: open, fill, close, and report a failure at any of
// the three (a full disk shows only when the stream is closed) as an error
// that names the file.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_OUTPUTFILE_H
#define DIST_TOOLS_DIST_RUN_COMMON_OUTPUTFILE_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace dist::run {

/// Creates (or truncates) `path` and lets `fill` write it. An error from
/// `fill` is returned as it is; failing to open or to write the file is
/// "cannot write '<path>': <reason>".
llvm::Error writeOutputFile(
    llvm::StringRef path,
    llvm::function_ref<llvm::Error(llvm::raw_pwrite_stream &)> fill);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_OUTPUTFILE_H
