// RUN: dist-opt %s -split-input-file --dist-pipeline=microbatches=2 -verify-diagnostics
// Semantics §3c: what dist-pipeline refuses, each at its location.

dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
// expected-error @+1 {{'func.func' op cannot be pipelined: no argument marks its batch dim (dist.batch_dim) (semantics §3c)}}
func.func @no_batch_dim(%x: tensor<8xf32, #dist.sharding<@a, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@b, [{"x"}]>> {
  %r = dist.reshard %x : tensor<8xf32, #dist.sharding<@a, [{"x"}]>> -> tensor<8xf32, #dist.sharding<@b, [{"x"}]>>
  return %r : tensor<8xf32, #dist.sharding<@b, [{"x"}]>>
}

// -----

dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
// expected-error @+1 {{'func.func' op cannot be pipelined: microbatches=2 does not divide the batch extent 7 (semantics §3c)}}
func.func @uneven(%x: tensor<7xf32, #dist.sharding<@a, [{"x"}]>> {dist.batch_dim = 0 : i64}) -> tensor<7xf32, #dist.sharding<@b, [{"x"}]>> {
  %r = dist.reshard %x : tensor<7xf32, #dist.sharding<@a, [{"x"}]>> -> tensor<7xf32, #dist.sharding<@b, [{"x"}]>>
  return %r : tensor<7xf32, #dist.sharding<@b, [{"x"}]>>
}

// -----

dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
// expected-error @+1 {{dist.batch_dim = 2 must name a static dim of a tensor argument, with the same extent on every marked argument}}
func.func @bad_dim(%x: tensor<8xf32, #dist.sharding<@a, [{"x"}]>> {dist.batch_dim = 2 : i64}) -> tensor<8xf32, #dist.sharding<@b, [{"x"}]>> {
  %r = dist.reshard %x : tensor<8xf32, #dist.sharding<@a, [{"x"}]>> -> tensor<8xf32, #dist.sharding<@b, [{"x"}]>>
  return %r : tensor<8xf32, #dist.sharding<@b, [{"x"}]>>
}

// -----

// A sum over the batch (a loss, a weight gradient) is not one microbatch's.
dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
func.func @reduces_batch(%x: tensor<8x4xf32, #dist.sharding<@a, [{}, {}]>> {dist.batch_dim = 0 : i64}) -> tensor<4xf32, #dist.sharding<@b, [{}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@a, [{}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4xf32, #dist.sharding<@a, [{}]>>) -> tensor<4xf32, #dist.sharding<@a, [{}]>>
  // expected-error @+1 {{'linalg.reduce' op cannot be pipelined: it reduces over the batch (semantics §3c: every op runs per microbatch)}}
  %s = linalg.reduce ins(%x : tensor<8x4xf32, #dist.sharding<@a, [{}, {}]>>) outs(%f : tensor<4xf32, #dist.sharding<@a, [{}]>>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %r = dist.reshard %s : tensor<4xf32, #dist.sharding<@a, [{}]>> -> tensor<4xf32, #dist.sharding<@b, [{}]>>
  return %r : tensor<4xf32, #dist.sharding<@b, [{}]>>
}

// -----

// A reshape mixes the batch with another dim.
dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
func.func @reshape(%x: tensor<8x4xf32, #dist.sharding<@a, [{}, {}]>> {dist.batch_dim = 0 : i64}) -> tensor<32xf32, #dist.sharding<@b, [{}]>> {
  // expected-error @+1 {{'tensor.collapse_shape' op cannot be pipelined: dist-pipeline does not follow the batch through it (semantics §3c)}}
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<8x4xf32, #dist.sharding<@a, [{}, {}]>> into tensor<32xf32, #dist.sharding<@a, [{}]>>
  %r = dist.reshard %c : tensor<32xf32, #dist.sharding<@a, [{}]>> -> tensor<32xf32, #dist.sharding<@b, [{}]>>
  return %r : tensor<32xf32, #dist.sharding<@b, [{}]>>
}
