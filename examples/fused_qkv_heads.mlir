// A fused QKV projection whose weight rows are split per segment over tp=4
// (rank r holds [Q_r; K_r; V_r]): the projection runs on the interleaved
// rows where they are, the output is viewed as [3, heads, head_dim, tokens],
// each of Q, K and V is scaled differently (a broadcast over the projection
// dim), and the heads are merged back. Nothing moves; every element is
// checked against NumPy on the global tensors.
// EXPECT result0 = ((arg0 @ arg1).reshape(3, 4, 8, 6) * arg2.reshape(3, 1, 1, 1)).reshape(96, 6)

dist.mesh @tp = <["tp"=4]>

#proj = affine_map<(p, h, d, t) -> (p, h, d, t)>
#scale = affine_map<(p, h, d, t) -> (p)>

func.func @qkv(%w: tensor<96x16xf32, #dist.sharding<@tp, [{"tp"} segments [32, 32, 32], {}]>>,
               %x: tensor<16x6xf32, #dist.sharding<@tp, [{}, {}]>>,
               %s: tensor<3xf32, #dist.sharding<@tp, [{}]>>)
    -> tensor<96x6xf32, #dist.sharding<@tp, [{"tp"} segments [32, 32, 32], {}]>> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<96x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<96x6xf32>) -> tensor<96x6xf32>
  %y = linalg.matmul ins(%w, %x : tensor<96x16xf32, #dist.sharding<@tp, [{"tp"} segments [32, 32, 32], {}]>>, tensor<16x6xf32, #dist.sharding<@tp, [{}, {}]>>)
                     outs(%f : tensor<96x6xf32>) -> tensor<96x6xf32>
  %heads = tensor.expand_shape %y [[0, 1, 2], [3]] output_shape [3, 4, 8, 6] : tensor<96x6xf32> into tensor<3x4x8x6xf32>
  %e2 = tensor.empty() : tensor<3x4x8x6xf32>
  %scaled = linalg.generic {indexing_maps = [#proj, #scale, #proj],
                            iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%heads, %s : tensor<3x4x8x6xf32>, tensor<3xf32, #dist.sharding<@tp, [{}]>>)
      outs(%e2 : tensor<3x4x8x6xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<3x4x8x6xf32>
  %merged = tensor.collapse_shape %scaled [[0, 1, 2], [3]] : tensor<3x4x8x6xf32> into tensor<96x6xf32, #dist.sharding<@tp, [{"tp"} segments [32, 32, 32], {}]>>
  return %merged : tensor<96x6xf32, #dist.sharding<@tp, [{"tp"} segments [32, 32, 32], {}]>>
}
