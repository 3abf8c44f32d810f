//===- dist-opt.cpp - the dist optimizer driver ---------------------------===//
//
// Like mlir-opt, with the dist dialect, passes and pipelines, and the
// upstream dialects and passes dist programs are lowered through.
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  dist::registerAllDistPasses();
  mlir::DialectRegistry registry;
  dist::registerAllDistDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dist optimizer driver\n", registry));
}
