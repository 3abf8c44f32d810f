//===- ReportedLowerBound.h - The lower bound a plan reports ----*- C++ -*-===//

#ifndef DIST_LIB_PLANNER_MOVES_REPORTEDLOWERBOUND_H
#define DIST_LIB_PLANNER_MOVES_REPORTEDLOWERBOUND_H

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

namespace dist::planner::detail {

/// The reported bound: max over devices of the bytes of its target block it
/// does not already hold, times the smallest beta, plus the smallest alpha
/// when anything must move. Layouts must be canonical.
double reportedLowerBound(const Mesh &mesh, const Layout &source,
                          const Layout &target, llvm::ArrayRef<int64_t> shape,
                          int64_t elementBytes, const CostModel &model);

/// The bytes that must cross each axis, at that axis's beta: for an axis a
/// and a value c, the devices with coordinate c on a (a hyperplane H) need
/// every element of their target blocks that no device of H holds; those
/// enter H across a, at most |H| devices' worth per step, each byte paying
/// at least axisSecondsPerByte(a). The largest such bound over axes and
/// values (plus the smallest alpha). Part of reportedLowerBound.
double crossingBound(const Mesh &mesh, const Layout &source,
                     const Layout &target, llvm::ArrayRef<int64_t> shape,
                     int64_t elementBytes, const CostModel &model);

} // namespace dist::planner::detail

#endif // DIST_LIB_PLANNER_MOVES_REPORTEDLOWERBOUND_H
