// Two pipeline stages on disjoint ranks (docs/point-to-point.md). Stage 0 is a
// layer on ranks 0-3 (tp=4) with its input split by tokens; its output is
// handed to stage 1 on ranks 4-7 (dp=2 x tp=2), whose layer splits tokens
// over dp and w1's columns over tp. Each stage is its own function on its
// own mesh (pipeline_stages_one_function.mlir writes both in one function);
// the hand-off between them is one dist.reshard across meshes, which
// dist-lower-reshard plans (semantics §3a).

dist.mesh @stage0 = <["tp"=4], devices = [0, 1, 2, 3]>
dist.mesh @stage1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>

// h = relu(x @ w0), tokens over tp.
func.func private @stage0_layer(%x: tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>,
                                %w0: tensor<32x32xf32, #dist.sharding<@stage0, [{}, {}]>>)
    -> tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>
  %h = linalg.matmul ins(%x, %w0 : tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>, tensor<32x32xf32, #dist.sharding<@stage0, [{}, {}]>>)
                     outs(%f : tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>
  %zeros = arith.constant dense<0.0> : tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>
  %r = arith.maximumf %h, %zeros : tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>
  return %r : tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>
}

// y = s @ w1, tokens over dp, columns over tp.
func.func private @stage1_layer(%s: tensor<16x32xf32, #dist.sharding<@stage1, [{"dp"}, {}]>>,
                                %w1: tensor<32x24xf32, #dist.sharding<@stage1, [{}, {"tp"}]>>)
    -> tensor<16x24xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x24xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<16x24xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>>) -> tensor<16x24xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>>
  %y = linalg.matmul ins(%s, %w1 : tensor<16x32xf32, #dist.sharding<@stage1, [{"dp"}, {}]>>, tensor<32x24xf32, #dist.sharding<@stage1, [{}, {"tp"}]>>)
                     outs(%f : tensor<16x24xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>>) -> tensor<16x24xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>>
  return %y : tensor<16x24xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>>
}

// EXPECT result0 = np.maximum(arg0 @ arg1, 0) @ arg2
func.func @two_stages(%x: tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>,
                      %w0: tensor<32x32xf32, #dist.sharding<@stage0, [{}, {}]>>,
                      %w1: tensor<32x24xf32, #dist.sharding<@stage1, [{}, {"tp"}]>>)
    -> tensor<16x24xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>> {
  %h = call @stage0_layer(%x, %w0) : (tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>, tensor<32x32xf32, #dist.sharding<@stage0, [{}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>
  %s = dist.reshard %h : tensor<16x32xf32, #dist.sharding<@stage0, [{"tp"}, {}]>>
                      -> tensor<16x32xf32, #dist.sharding<@stage1, [{"dp"}, {}]>>
  %y = call @stage1_layer(%s, %w1) : (tensor<16x32xf32, #dist.sharding<@stage1, [{"dp"}, {}]>>, tensor<32x24xf32, #dist.sharding<@stage1, [{}, {"tp"}]>>) -> tensor<16x24xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>>
  return %y : tensor<16x24xf32, #dist.sharding<@stage1, [{"dp"}, {"tp"}]>>
}
