// Megatron MLP with sequence parallelism in and out, written in the global
// view (docs/partitioning.md): x split by tokens, w1 by columns, w2 by rows.

dist.mesh @tp = <["tp"=4]>

func.func @megatron_mlp(%x: tensor<16x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>>,
                        %w1: tensor<24x96xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                        %w2: tensor<96x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<16x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x96xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x96xf32>) -> tensor<16x96xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<24x96xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
                     outs(%f1 : tensor<16x96xf32>) -> tensor<16x96xf32>
  %zeros = arith.constant dense<0.0> : tensor<16x96xf32>
  %r = arith.maximumf %h, %zeros : tensor<16x96xf32>
  %e2 = tensor.empty() : tensor<16x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) -> tensor<16x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %y = linalg.matmul ins(%r, %w2 : tensor<16x96xf32>, tensor<96x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
                     outs(%f2 : tensor<16x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) -> tensor<16x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %y : tensor<16x24xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}
