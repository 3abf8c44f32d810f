//===- Module.cpp - the dist_mlir._dist extension module ------------------===//
//
// Private to the dist_mlir package: import dist_mlir, not this module.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

PYBIND11_MODULE(_dist, m) {
  m.doc() = "Private C++ layer of dist_mlir (planner and compiler bindings).";
  dist::python::bindPlanner(m);
  dist::python::bindCompiler(m);
}
