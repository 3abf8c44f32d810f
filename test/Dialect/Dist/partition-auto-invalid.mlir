// RUN: dist-opt %s -split-input-file --dist-partition=memory-budget=8 -verify-diagnostics

// expected-error @+1 {{'func.func' op has 'dist.auto' = 3 : i64, which does not name a dist.mesh (expected {dist.auto = @mesh})}}
func.func @not_a_symbol(%x: tensor<8xf32>) -> tensor<8xf32> attributes {dist.auto = 3} {
  %y = arith.addf %x, %x : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

dist.mesh @m = <["x"=2]>
// expected-error @+1 {{'func.func' op refers to unknown mesh @nope}}
func.func @unknown_mesh(%x: tensor<8xf32>) -> tensor<8xf32> attributes {dist.auto = @nope} {
  %y = arith.addf %x, %x : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// Without dist.auto an argument without an encoding is still an error.
dist.mesh @m = <["x"=2]>
// expected-error @+1 {{'func.func' op cannot be partitioned: argument #0 needs a tensor type with a #dist.sharding encoding}}
func.func @not_auto(%x: tensor<8xf32>, %y: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %z = arith.addf %y, %y : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %z : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

// A budget nothing fits names the least memory.
dist.mesh @m = <["x"=2]>
// expected-error @+1 {{cannot be partitioned within the memory budget of 8 B per device: the least any choice of layouts needs is 48 B}}
func.func @budget(%x: tensor<8xf32>) -> tensor<8xf32> attributes {dist.auto = @m} {
  %y = arith.addf %x, %x : tensor<8xf32>
  return %y : tensor<8xf32>
}
