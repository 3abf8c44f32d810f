//===- InitAllDist.h - register what dist programs use ----------*- C++ -*-===//
//
// One place that knows which dialects, interface models, passes and
// pipelines a dist program needs, for dist-opt, dist-run, the Python
// bindings and embedding compilers alike.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_INITALLDIST_H
#define DIST_INITALLDIST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dist {

/// The dist dialect, the upstream dialects our pipelines produce (and the
/// `shard` dialect dist-import-shard reads), and the bufferization models
/// they rely on.
void registerAllDistDialects(mlir::DialectRegistry &registry);

/// dist passes and pipelines (dist-lower-reshard, dist-reshard-pipeline,
/// dist-localize, convert-dist-to-runtime, dist-to-llvm, dist-import-shard),
/// plus the upstream passes they are built from.
void registerAllDistPasses();

/// Only what dist defines: the dist dialect and its interface models, for a
/// host that registers the upstream dialects itself (mlir-opt, DistPlugin.so).
void registerDistDialect(mlir::DialectRegistry &registry);

/// Only dist's own passes and pipelines, for a host that registers the
/// upstream ones itself (registering an upstream pipeline twice is fatal).
void registerDistOwnPasses();

/// The command-line names of the passes and pipelines registerDistOwnPasses
/// registers (`dist-lower-reshard`, ..., `dist-to-llvm`).
llvm::ArrayRef<llvm::StringRef> getDistOwnPassNames();

} // namespace dist

#endif // DIST_INITALLDIST_H
