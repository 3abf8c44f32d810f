// A residual MLP over 4 layers as an scf.for over stacked weights: the
// carried activation, the per-layer slices at the loop's index and the
// hoisted move of the stacked weights run on every rank as in the
// global program.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:3 %s --dump %t
// RUN: %check_shards %s %t --input random:3
// EXPECT result0 = (lambda x, w: [x := np.maximum(x @ w[l], 0) + x for l in range(4)][-1])(arg0, arg1)
dist.mesh @tp = <["tp"=4]>
func.func @layers(%x: tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>,
                  %w: tensor<4x16x16xf32, #dist.sharding<@tp, [{}, {}, {"tp"}]>>)
    -> tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %l = %c0 to %c4 step %c1 iter_args(%h = %x) -> (tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>) {
    %wl = tensor.extract_slice %w[%l, 0, 0] [1, 16, 16] [1, 1, 1] : tensor<4x16x16xf32, #dist.sharding<@tp, [{}, {}, {"tp"}]>> to tensor<16x16xf32>
    %e = tensor.empty() : tensor<8x16xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
    %y = linalg.matmul ins(%h, %wl : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>, tensor<16x16xf32>) outs(%f : tensor<8x16xf32>) -> tensor<8x16xf32>
    %z = arith.constant dense<0.0> : tensor<8x16xf32>
    %a = arith.maximumf %y, %z : tensor<8x16xf32>
    %e2 = tensor.empty() : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>
    %n = linalg.add ins(%a, %h : tensor<8x16xf32>, tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>) outs(%e2 : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>) -> tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>
    scf.yield %n : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>
  }
  return %r : tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>
}
