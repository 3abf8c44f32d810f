//===- DistPlugin.cpp - dist as an mlir-opt dialect and pass plugin -------===//
//
//   mlir-opt-22 --load-dialect-plugin=DistPlugin.so
//               --load-pass-plugin=DistPlugin.so FILE --dist-lower-reshard
//
// The host already registers every upstream dialect, interface model, pass
// and pipeline; registering upstream pipelines a second time is a fatal
// error, so the plugin adds only what dist itself defines.
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

#include "llvm/Config/llvm-config.h"

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Dist", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            dist::registerDistDialect(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Dist", LLVM_VERSION_STRING,
          []() { dist::registerDistOwnPasses(); }};
}
