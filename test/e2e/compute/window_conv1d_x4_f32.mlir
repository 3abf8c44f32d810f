// A window (a 1-D convolution, input indexed by d0 + d1) over a dim split 4
// ways: its loops may not be split, so the input is gathered and the result
// sliced into its layout. The result must still be exact.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:4 %s --dump %t
// RUN: %check_shards %s %t --input random:4
// EXPECT result0 = np.convolve(arg0, arg1[::-1], mode="valid")

dist.mesh @m = <["x"=4]>

func.func @conv(%a: tensor<10xf32, #dist.sharding<@m, [{"x"}]>>,
                %k: tensor<3xf32, #dist.sharding<@m, [{}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %w = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%a, %k : tensor<10xf32, #dist.sharding<@m, [{"x"}]>>, tensor<3xf32, #dist.sharding<@m, [{}]>>)
      outs(%f : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) {
    ^bb0(%in: f32, %kw: f32, %acc: f32):
      %p = arith.mulf %in, %kw : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
  } -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %w : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}
