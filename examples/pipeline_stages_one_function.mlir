// Two pipeline stages in one function (semantics §3c; docs/point-to-point.md):
// a Megatron MLP on ranks 0-3 (tp=4), its output handed to ranks 4-7
// (dp=2 x tp=2, tokens over dp) for a second one. The intermediates carry
// no layouts: dist-partition cuts the function into one stage function per
// mesh and chooses them there.

dist.mesh @s0 = <["tp"=4], devices = [0, 1, 2, 3]>
dist.mesh @s1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>

// EXPECT result0 = np.maximum(np.maximum(arg0 @ arg1, 0) @ arg2 @ arg3, 0) @ arg4
func.func @two_mlp_stages(%x: tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>,
    %w1: tensor<32x64xf32, #dist.sharding<@s0, [{}, {"tp"}]>>,
    %w2: tensor<64x32xf32, #dist.sharding<@s0, [{"tp"}, {}]>>,
    %w3: tensor<32x64xf32, #dist.sharding<@s1, [{}, {"tp"}]>>,
    %w4: tensor<64x32xf32, #dist.sharding<@s1, [{"tp"}, {}]>>)
    -> tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x64xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %a = linalg.matmul ins(%x, %w1 : tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>, tensor<32x64xf32, #dist.sharding<@s0, [{}, {"tp"}]>>)
                     outs(%f1 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %z1 = arith.constant dense<0.0> : tensor<16x64xf32>
  %r = arith.maximumf %a, %z1 : tensor<16x64xf32>
  %e2 = tensor.empty() : tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>
  %h = linalg.matmul ins(%r, %w2 : tensor<16x64xf32>, tensor<64x32xf32, #dist.sharding<@s0, [{"tp"}, {}]>>)
                     outs(%f2 : tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>>
  %s = dist.reshard %h : tensor<16x32xf32, #dist.sharding<@s0, [{}, {}]>> -> tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %e3 = tensor.empty() : tensor<16x64xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %b = linalg.matmul ins(%s, %w3 : tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>, tensor<32x64xf32, #dist.sharding<@s1, [{}, {"tp"}]>>)
                     outs(%f3 : tensor<16x64xf32>) -> tensor<16x64xf32>
  %z2 = arith.constant dense<0.0> : tensor<16x64xf32>
  %q = arith.maximumf %b, %z2 : tensor<16x64xf32>
  %e4 = tensor.empty() : tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %f4 = linalg.fill ins(%zero : f32) outs(%e4 : tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  %y = linalg.matmul ins(%q, %w4 : tensor<16x64xf32>, tensor<64x32xf32, #dist.sharding<@s1, [{"tp"}, {}]>>)
                     outs(%f4 : tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>) -> tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
  return %y : tensor<16x32xf32, #dist.sharding<@s1, [{"dp"}, {}]>>
}
