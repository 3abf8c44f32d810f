// One value returned at two positions crashed dist-to-llvm in
// buffer-results-to-out-params (the allocation was hoisted into both
// out-parameters and erased twice). Each out-parameter now gets its own
// buffer: the all_gather writes into the first, which is copied into the
// second (a device copy with target=gpu).
// RUN: dist-opt %s --dist-to-llvm="moves=collective" --split-input-file | FileCheck %s
// RUN: dist-opt %s --dist-to-llvm="target=gpu moves=collective" --split-input-file | FileCheck %s --check-prefix=GPU
// The step before the promotion, on its own:
// RUN: dist-opt %s --dist-reshard-pipeline --dist-localize --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" --dist-distinct-result-buffers --buffer-results-to-out-params="hoist-static-allocs modify-public-functions" --split-input-file | FileCheck %s --check-prefix=OUT

dist.mesh @m = <["x"=2]>

// A computed (gathered) value returned twice: the input's descriptor, then
// two out-parameters.
// CHECK-LABEL: llvm.func @gathered_twice
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64, %{{[^:]*}}: i64)
// CHECK: llvm.call @distRtAllGather
// CHECK: "llvm.intr.memcpy"
// CHECK: llvm.return
// GPU-LABEL: llvm.func @gathered_twice
// GPU: llvm.call @distRtAllGather
// GPU: llvm.call @distRtCopyStrided
// GPU: llvm.return
// OUT-LABEL: func @gathered_twice
// OUT-SAME: (%[[IN:.*]]: memref<4x4xf32>, %[[OUT0:.*]]: memref<8x4xf32>, %[[OUT1:.*]]: memref<8x4xf32>)
// OUT: dist.buffer.all_gather %[[IN]], %[[OUT0]]
// OUT: memref.copy %[[OUT0]], %[[OUT1]]
// OUT: return
func.func @gathered_twice(%a: tensor<8x4xf32, #dist.sharding<@m, [{"x"}, {}]>>) -> (tensor<8x4xf32, #dist.sharding<@m, [{}, {}]>>, tensor<8x4xf32, #dist.sharding<@m, [{}, {}]>>) {
  %b = dist.reshard %a : tensor<8x4xf32, #dist.sharding<@m, [{"x"}, {}]>> -> tensor<8x4xf32, #dist.sharding<@m, [{}, {}]>>
  return %b, %b : tensor<8x4xf32, #dist.sharding<@m, [{}, {}]>>, tensor<8x4xf32, #dist.sharding<@m, [{}, {}]>>
}

// -----

dist.mesh @m = <["x"=2]>

// An argument returned twice: copied into each out-parameter.
// CHECK-LABEL: llvm.func @argument_twice
// CHECK: "llvm.intr.memcpy"
// CHECK: "llvm.intr.memcpy"
// CHECK: llvm.return
// GPU-LABEL: llvm.func @argument_twice
// GPU: llvm.call @distRtCopyStrided
// GPU: llvm.call @distRtCopyStrided
// OUT-LABEL: func @argument_twice
// OUT-SAME: (%[[IN:.*]]: memref<4x4xf32>, %[[OUT0:.*]]: memref<4x4xf32>, %[[OUT1:.*]]: memref<4x4xf32>)
// OUT-DAG: memref.copy %[[IN]], %[[OUT0]]
// OUT-DAG: memref.copy %{{.*}}, %[[OUT1]]
func.func @argument_twice(%a: tensor<8x4xf32, #dist.sharding<@m, [{"x"}, {}]>>) -> (tensor<8x4xf32, #dist.sharding<@m, [{"x"}, {}]>>, tensor<8x4xf32, #dist.sharding<@m, [{"x"}, {}]>>) {
  return %a, %a : tensor<8x4xf32, #dist.sharding<@m, [{"x"}, {}]>>, tensor<8x4xf32, #dist.sharding<@m, [{"x"}, {}]>>
}
