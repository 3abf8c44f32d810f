//===- InitAllDist.h - register what dist programs use ----------*- C++ -*-===//
//
// One place that knows which dialects, interface models, passes and
// pipelines a dist program needs, for dist-opt, dist-run, the Python
// bindings and embedding compilers alike.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_INITALLDIST_H
#define DIST_INITALLDIST_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dist {

/// The dist dialect, the upstream dialects our pipelines produce, and the
/// bufferization models they rely on.
void registerAllDistDialects(mlir::DialectRegistry &registry);

/// dist passes and pipelines (dist-lower-reshard, dist-reshard-pipeline,
/// dist-localize, convert-dist-to-runtime, dist-to-llvm), plus the upstream
/// passes they are built from.
void registerAllDistPasses();

} // namespace dist

#endif // DIST_INITALLDIST_H
