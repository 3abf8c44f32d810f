// Found by the program fuzzer
// (seed 100221 of --features ci, before the reshard-of-constant switch),
// minimized: dist.reshard of a linalg.fill whose type is encoded is refused:
// "'dist.reshard' op cannot be partitioned: operand #0 needs a tensor type with
// a #dist.sharding encoding". dist-partition materializes constants in the
// layout of their use and drops the fill's own encoding, which leaves the
// reshard an unencoded operand. Splat constants (arith.constant dense) read by
// a reshard are refused the same way.
// Fixed: a constant a dist.reshard reads keeps its layout.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 1 --timeout 120 --input random:222 %s --dump %t
// RUN: %check_shards %s %t --input random:222
// EXPECT result0 = (v5 := np.full((1, 1), np.float32(1.5)),
// ...   v6 := v5,
// ...   v6)[-1]
dist.mesh @m = <["y"=1]>

func.func @fuzz()
    -> tensor<1x1xf32, #dist.sharding<@m, [{}, {}]>> {
  %e1 = tensor.empty() : tensor<1x1xf32, #dist.sharding<@m, [{}, {}]>>
  %c2 = arith.constant 1.5 : f32
  %v5 = linalg.fill ins(%c2 : f32) outs(%e1 : tensor<1x1xf32, #dist.sharding<@m, [{}, {}]>>) -> tensor<1x1xf32, #dist.sharding<@m, [{}, {}]>>
  %v6 = dist.reshard %v5 : tensor<1x1xf32, #dist.sharding<@m, [{}, {}]>> -> tensor<1x1xf32, #dist.sharding<@m, [{}, {}]>>
  return %v6 : tensor<1x1xf32, #dist.sharding<@m, [{}, {}]>>
}
