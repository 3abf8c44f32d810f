//===- dist-opt.cpp - the dist optimizer driver ---------------------------===//
//
// Like mlir-opt, with the dist dialect, passes and pipelines, and the
// upstream dialects and passes dist programs are lowered through.
//
//===----------------------------------------------------------------------===//

#include "dist/InitAllDist.h"
#ifdef DIST_OPT_AUTO_TOPOLOGY
#include "AutoTopology.h"
#include "dist/Dialect/Dist/Transforms/TopologyResolver.h"
#endif

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/FileSystem.h"

#ifdef DIST_OPT_AUTO_TOPOLOGY
/// An address inside this executable, for getMainExecutable.
static void anchor() {}
#endif

int main(int argc, char **argv) {
#ifdef DIST_OPT_AUTO_TOPOLOGY
  // topology=auto: this machine, calibrated once per mesh by the
  // dist-calibrate next to dist-opt, on as many MPI ranks as the module's
  // meshes name (docs/compiler.md). Built with the runtime only.
  std::string self = llvm::sys::fs::getMainExecutable(
      argv[0], reinterpret_cast<void *>(&anchor));
  dist::setTopologyResolver(
      [self](const std::vector<std::pair<std::string, dist::planner::Mesh>>
                 &meshes) {
        return dist::run::autoTopology(
            meshes, dist::run::ranksOf(meshes), "mpi", self,
            {"dist-opt", "topology=auto", "the module"});
      });
#endif
  dist::registerAllDistPasses();
  mlir::DialectRegistry registry;
  dist::registerAllDistDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "dist optimizer driver\n", registry));
}
