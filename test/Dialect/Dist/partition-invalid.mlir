// RUN: dist-opt %s -split-input-file --dist-partition -verify-diagnostics

dist.mesh @m = <["x"=4]>
func.func @non_splat(%a: tensor<4xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>> {
  // expected-error @+1 {{'arith.constant' op cannot be partitioned: only splat tensor constants are supported (pass other constants as arguments)}}
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  %s = linalg.map { arith.addf } ins(%a, %c : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>, tensor<4xf32>)
                  outs(%e : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>)
  return %s : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @unsupported(%a: tensor<4x4xf32, #dist.sharding<@m, [{}, {}]>>,
                       %i: tensor<2x1xindex, #dist.sharding<@m, [{}, {}]>>) -> tensor<2x4xf32, #dist.sharding<@m, [{}, {}]>> {
  // expected-error @+1 {{'tensor.gather' op cannot be partitioned: dist-partition handles ops with a partitioning model}}
  %v = tensor.gather %a[%i] gather_dims([0]) : (tensor<4x4xf32, #dist.sharding<@m, [{}, {}]>>, tensor<2x1xindex, #dist.sharding<@m, [{}, {}]>>) -> tensor<2x4xf32, #dist.sharding<@m, [{}, {}]>>
  return %v : tensor<2x4xf32, #dist.sharding<@m, [{}, {}]>>
}

// -----

dist.mesh @m = <["x"=4]>
// expected-error @+1 {{'func.func' op cannot be partitioned: argument #0 needs a tensor type with a #dist.sharding encoding}}
func.func @unsharded_argument(%a: tensor<4xf32>) -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  %n = linalg.map { math.exp } ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>)
  return %n : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

dist.mesh @a = <["x"=2]>
dist.mesh @b = <["x"=2]>
// expected-error @+1 {{'func.func' op cannot be partitioned: its compute uses tensors on several meshes}}
func.func @two_meshes(%a: tensor<4xf32, #dist.sharding<@a, [{"x"}]>>, %b: tensor<4xf32, #dist.sharding<@b, [{"x"}]>>)
    -> tensor<4xf32, #dist.sharding<@a, [{"x"}]>> {
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>
  %s = linalg.map { arith.addf } ins(%a, %b : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>, tensor<4xf32, #dist.sharding<@b, [{"x"}]>>)
                  outs(%e : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>)
  return %s : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>
}
