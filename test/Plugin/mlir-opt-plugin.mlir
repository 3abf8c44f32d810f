// Upstream's mlir-opt (LLVM 22, on the shared libMLIR.so) with dist loaded
// as a dialect and pass plugin: it parses dist IR, runs dist's passes and
// pipelines, and imports upstream shard annotations. mlir-opt makes its
// per-pass flags (--canonicalize, ...) before it loads a plugin; the plugin
// adds a flag per dist pass and pipeline when it is loaded, so semantics §7's
// `FILE --dist-lower-reshard` works, as does naming the passes in
// --pass-pipeline (-p) like upstream's own plugin tests do.
// Not in the sanitized build: the instrumented plugin cannot be loaded into
// Debian's uninstrumented mlir-opt-22 (ASan's runtime must come first).
// UNSUPPORTED: sanitize
// RUN: mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %s --dist-lower-reshard | FileCheck %s
// RUN: mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %s --dist-lower-reshard=strategy=greedy | FileCheck %s
// RUN: mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %s --dist-reshard-pipeline | FileCheck %s
// RUN: mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %S/Inputs/shard-annotated.mlir --dist-import-shard --dist-lower-reshard | FileCheck %s --check-prefix=IMPORT
// RUN: mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %s --dist-partition --dist-lower-reshard --dist-localize | FileCheck %s --check-prefix=LOCAL
// RUN: mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %s --dist-to-llvm | FileCheck %s --check-prefix=LLVM
// topology=auto needs a tool that can calibrate; in mlir-opt it is an error
// at the mesh that says to pass a file.
// RUN: not mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %s --dist-lower-reshard=topology=auto 2>&1 | FileCheck %s --check-prefix=AUTO
// AUTO: error: dist-lower-reshard: topology=auto needs a tool that calibrates this machine (dist-opt, dist-run); here, pass a topology file
// RUN: not mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %s --dist-lower-reshard=bogus=1 2>&1 | FileCheck %s --check-prefix=BADOPT
// RUN: not mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %s --pass-pipeline='builtin.module(canonicalize)' --dist-lower-reshard 2>&1 | FileCheck %s --check-prefix=MIXED
// RUN: mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %s --pass-pipeline='builtin.module(dist-lower-reshard)' | FileCheck %s
// RUN: mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %s -p 'builtin.module(dist-reshard-pipeline)' | FileCheck %s
// RUN: mlir-opt --load-dialect-plugin=%dist_plugin --load-pass-plugin=%dist_plugin %S/Inputs/shard-annotated.mlir -p 'builtin.module(dist-import-shard, dist-lower-reshard)' | FileCheck %s --check-prefix=IMPORT
// RUN: mlir-opt --load-pass-plugin=%dist_plugin --help | FileCheck %s --check-prefix=HELP

dist.mesh @m = <["x"=2, "y"=4]>

// CHECK-LABEL: func.func @transpose
// CHECK-SAME: (%[[A:.*]]: tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {}]>>)
// CHECK: %[[B:.*]] = dist.all_to_all %[[A]] axes = ["x"] dim = 0 to_dim = 1
// CHECK: return %[[B]]
func.func @transpose(%a: tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> tensor<16x16xf32, #dist.sharding<@m, [{}, {"x"}]>> {
  %b = dist.reshard %a : tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {}]>>
                      -> tensor<16x16xf32, #dist.sharding<@m, [{}, {"x"}]>>
  return %b : tensor<16x16xf32, #dist.sharding<@m, [{}, {"x"}]>>
}

// IMPORT: dist.mesh @grid = <["0"=2]>
// IMPORT-LABEL: func.func @rows_to_cols
// IMPORT-SAME: (%[[A:.*]]: tensor<8x8xf32, #dist.sharding<@grid, [{"0"}, {}]>>)
// IMPORT: %[[B:.*]] = dist.all_to_all %[[A]] axes = ["0"] dim = 0 to_dim = 1
// IMPORT: return %[[B]]

// LOCAL: dist.local.all_to_all
// LLVM: llvm.func @transpose
// BADOPT: no such option bogus
// MIXED: DistPlugin.so: --dist-lower-reshard cannot be combined with --pass-pipeline; name it inside the pipeline

// HELP: --convert-dist-to-runtime
// HELP: --dist-import-shard
// HELP: --dist-lower-reshard
// HELP: --dist-localize
// HELP: --dist-lower-reshard
// HELP: --dist-partition
// HELP: --dist-reshard-pipeline
// HELP: --dist-to-llvm
