// RUN: dist-opt %s --dist-localize --split-input-file -verify-diagnostics

dist.mesh @m = <["x"=4]>
func.func @reshard_left(%a: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<16xf32, #dist.sharding<@m, [{}]>> {
  // expected-error @+1 {{'dist.reshard' op must be lowered first: run dist-lower-reshard before dist-localize}}
  %b = dist.reshard %a : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xf32, #dist.sharding<@m, [{}]>>
  return %b : tensor<16xf32, #dist.sharding<@m, [{}]>>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @compute_on_sharded(%a: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<16xf32, #dist.sharding<@m, [{"x"}]>> {
  // expected-error @+1 {{'arith.addf' op cannot be localized: dist-localize rewrites dist collectives, calls, returns and the compute dist-partition produces (linalg ops, tensor.empty) on sharded tensors; run dist-partition first}}
  %b = arith.addf %a, %a : tensor<16xf32, #dist.sharding<@m, [{"x"}]>>
  return %b : tensor<16xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

dist.mesh @m = <["x"=4]>
// expected-error @+1 {{'func.func' op uses unknown mesh @nowhere}}
func.func @unknown_mesh(%a: tensor<16xf32, #dist.sharding<@nowhere, [{"x"}]>>) {
  return
}

// -----

dist.mesh @m = <["x"=4]>
// expected-error @+1 {{'func.func' op mesh @m has no axis "q"}}
func.func @unknown_axis(%a: tensor<16xf32, #dist.sharding<@m, [{"q"}]>>) {
  return
}
