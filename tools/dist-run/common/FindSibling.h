//===- FindSibling.h - a tool next to this one ------------------*- C++ -*-===//
//
// Part of dist-run's common code (tools/dist-run/common): LLVM's Support
// library only. The fronts (dist-run, dist-calibrate) start dist-mpirun and
// their rank programs, which are installed next to them.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_TOOLS_DIST_RUN_COMMON_FINDSIBLING_H
#define DIST_TOOLS_DIST_RUN_COMMON_FINDSIBLING_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>

namespace dist::run {

/// A program next to the executable `self` (build or install tree: they
/// are always side by side), else on PATH. No build path is compiled in,
/// so an installed tree can be moved.
std::optional<std::string> findSibling(llvm::StringRef self,
                                       llvm::StringRef name);

} // namespace dist::run

#endif // DIST_TOOLS_DIST_RUN_COMMON_FINDSIBLING_H
