// A minimal compiler that embeds dist through its CMake package: registers
// dist's dialects and passes, imports an upstream-shard program and lowers
// its reshards to planned collectives.
//
//   consumer-opt FILE.mlir
#include "dist/InitAllDist.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

int main(int argc, char **argv) {
  if (argc != 2) {
    llvm::errs() << "usage: consumer-opt FILE.mlir\n";
    return 2;
  }
  mlir::DialectRegistry registry;
  dist::registerAllDistDialects(registry);
  dist::registerAllDistPasses();
  mlir::MLIRContext context(registry);

  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(argv[1], &context);
  if (!module)
    return 1;
  mlir::PassManager pm(&context);
  if (mlir::failed(mlir::parsePassPipeline(
          "dist-import-shard,dist-reshard-pipeline", pm)) ||
      mlir::failed(pm.run(*module)))
    return 1;
  module->print(llvm::outs());
  return 0;
}
