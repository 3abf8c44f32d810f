// A topology file's local.beta (semantics §3b) prices the copies of every
// step in the pass as in dist-plan. The slice writes 64x16xf32 = 4096 bytes
// per device: 4.096e-07 s at 1e-10 s/B, free without the file. The gather
// also copies its own 4096-byte block into the result, on top of the
// defaults' 3 alpha + 3 x 4096 beta.
// RUN: dist-opt %s --dist-lower-reshard -dist-remarks 2>&1 | FileCheck %s --check-prefix=FREE
// RUN: dist-opt %s --dist-lower-reshard="topology=%S/Inputs/local-copies.json" -dist-remarks 2>&1 \
// RUN:   | FileCheck %s --check-prefix=PRICED
// RUN: dist-plan --mesh '<["x"=4]>' --shape 64x64xf32 --from '[{}, {}]' --to '[{}, {"x"}]' \
// RUN:   --topology %S/Inputs/local-copies.json | FileCheck %s --check-prefix=PLAN-SLICE
// RUN: dist-plan --mesh '<["x"=4]>' --shape 64x64xf32 --from '[{"x"}, {}]' --to '[{}, {}]' \
// RUN:   --topology %S/Inputs/local-copies.json | FileCheck %s --check-prefix=PLAN-GATHER

dist.mesh @mesh = <["x"=4]>

// FREE: lower-reshard-local-copies.mlir:[[@LINE+4]]:{{.*}} cost 0.000e+00 s
// PRICED: lower-reshard-local-copies.mlir:[[@LINE+3]]:{{.*}} cost 4.096e-07 s
// PLAN-SLICE: optimal plan: 1 step, cost 0.410 us
func.func @slice(%a: tensor<64x64xf32, #dist.sharding<@mesh, [{}, {}]>>) -> tensor<64x64xf32, #dist.sharding<@mesh, [{}, {"x"}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@mesh, [{}, {}]>> -> tensor<64x64xf32, #dist.sharding<@mesh, [{}, {"x"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@mesh, [{}, {"x"}]>>
}

// FREE: lower-reshard-local-copies.mlir:[[@LINE+4]]:{{.*}} cost 3.003e-05 s
// PRICED: lower-reshard-local-copies.mlir:[[@LINE+3]]:{{.*}} cost 3.044e-05 s
// PLAN-GATHER: optimal plan: 1 step, cost 30.443 us
func.func @gather(%a: tensor<64x64xf32, #dist.sharding<@mesh, [{"x"}, {}]>>) -> tensor<64x64xf32, #dist.sharding<@mesh, [{}, {}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@mesh, [{"x"}, {}]>> -> tensor<64x64xf32, #dist.sharding<@mesh, [{}, {}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@mesh, [{}, {}]>>
}
