//===- BoundedJSON.h - JSON reading with a nesting limit --------*- C++ -*-===//
//
// llvm::json::parse (and json::Value's destructor) recurse once per level of
// nesting, so a file of a few hundred kilobytes of `[[[[...` overflows the
// stack. Topology files, plan-cache entries, plan JSON and the C API's
// requests all come from places a user (or another user of a shared
// directory) controls; they are scanned for their nesting depth first and
// refused past kMaxJSONDepth with a clear error instead of a crash.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PLANNER_BOUNDEDJSON_H
#define DIST_PLANNER_BOUNDEDJSON_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace dist::planner {

/// The deepest nesting of arrays and objects any JSON the planner reads may
/// have. Every format it reads needs at most 4 levels (a plan: object,
/// "steps" array, step object, "axes" array); 64 leaves room for any future
/// format and is far below what the recursive parser can take.
constexpr unsigned kMaxJSONDepth = 64;

/// llvm::json::parse, after checking that `text` nests no deeper than
/// kMaxJSONDepth. The error for deeper text names the limit and the byte
/// offset where it was passed.
llvm::Expected<llvm::json::Value> parseBoundedJSON(llvm::StringRef text);

} // namespace dist::planner

#endif // DIST_PLANNER_BOUNDEDJSON_H
