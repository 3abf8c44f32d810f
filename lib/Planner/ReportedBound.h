//===- ReportedBound.h - The lower bound a plan reports ---------*- C++ -*-===//

#ifndef DIST_LIB_PLANNER_REPORTEDBOUND_H
#define DIST_LIB_PLANNER_REPORTEDBOUND_H

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

namespace dist::planner::detail {

/// Issue 3's bound: max over devices of the bytes of its target block it
/// does not already hold, times the smallest beta, plus the smallest alpha
/// when anything must move. Layouts must be canonical.
double reportedLowerBound(const Mesh &mesh, const Layout &source,
                          const Layout &target, llvm::ArrayRef<int64_t> shape,
                          int64_t elementBytes, const CostModel &model);

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_REPORTEDBOUND_H
