//===- DistPlugin.cpp - dist as an mlir-opt dialect and pass plugin -------===//
//
//   mlir-opt-22 --load-dialect-plugin=DistPlugin.so
//               --load-pass-plugin=DistPlugin.so FILE --dist-lower-reshard
//
// (or with the passes in --pass-pipeline / -p, as for any plugin).
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

#include "llvm/ADT/StringExtras.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace {

namespace cl = llvm::cl;

/// mlir-opt makes one flag per registered pass (`--canonicalize`) before it
/// loads any plugin, so a plugin's passes are otherwise reachable only
/// inside `--pass-pipeline` / `-p`. The pass plugin is loaded while the
/// command line is parsed, at its `--load-pass-plugin`, and the options the
/// later arguments are looked up in may still grow: the plugin adds a flag
/// per dist pass and pipeline, each appending itself (with its options:
/// `--dist-lower-reshard=strategy=greedy`) to the pipeline mlir-opt runs,
/// which it hands over as `--pass-pipeline`. So
///   mlir-opt-22 --load-pass-plugin=DistPlugin.so FILE --dist-lower-reshard
/// works as semantics §7 writes it. Upstream pass flags cannot be mixed in (the
/// host refuses --pass-pipeline with individual pass flags); name them in
/// the pipeline instead.
class PassFlags {
public:
  void expose(llvm::StringRef name) {
    if (cl::getRegisteredOptions().count(name))
      return; // the host knows it already (dist-opt)
    // Never destroyed: the host's parser keeps pointers to its options for
    // the life of the process.
    new cl::opt<std::string>(
        name, cl::ValueOptional,
        cl::desc("Run the dist pass or pipeline of this name (DistPlugin.so)"),
        cl::callback([this, name = name.str()](const std::string &options) {
          append(options.empty() ? name : name + "{" + options + "}");
        }));
  }

private:
  void append(std::string element) {
    auto *pipeline = static_cast<cl::opt<std::string> *>(
        cl::getRegisteredOptions().lookup("pass-pipeline"));
    if (!pipeline) {
      llvm::errs() << "DistPlugin.so: this host has no --pass-pipeline "
                      "option; name the dist passes in its pipeline\n";
      std::exit(1);
    }
    if (elements.empty() && pipeline->getNumOccurrences()) {
      llvm::errs() << "DistPlugin.so: --" << element
                   << " cannot be combined with --pass-pipeline; name it "
                      "inside the pipeline\n";
      std::exit(1);
    }
    elements.push_back(std::move(element));
    std::string text = "builtin.module(" + llvm::join(elements, ",") + ")";
    if (pipeline->getNumOccurrences() == 0)
      pipeline->addOccurrence(0, "pass-pipeline", text);
    else
      pipeline->setValue(text);
  }

  std::vector<std::string> elements;
};

void exposePassFlags() {
  static PassFlags flags;
  for (llvm::StringRef name : dist::getDistOwnPassNames())
    flags.expose(name);
}

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK mlir::DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Dist", LLVM_VERSION_STRING,
          [](mlir::DialectRegistry *registry) {
            dist::registerDistDialect(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK mlir::PassPluginLibraryInfo
mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "Dist", LLVM_VERSION_STRING, []() {
            dist::registerDistOwnPasses();
            exposePassFlags();
          }};
}
