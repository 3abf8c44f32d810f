//===- dist-opt.cpp - the dist optimizer driver ---------------------------===//
//
// Like mlir-opt, with the dist dialect and passes plus the upstream dialects
// and passes dist programs are written in and lowered through.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  dist::registerDistPassesAndPipelines();
  mlir::DialectRegistry registry;
  registry.insert<dist::DistDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect, mlir::tensor::TensorDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dist optimizer driver\n", registry));
}
