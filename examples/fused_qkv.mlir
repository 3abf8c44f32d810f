// A fused QKV weight [q=64; k=16; v=16] written with its rows split
// contiguously over tp=4, resharded so that rank r holds [Q_r; K_r; V_r]
// (docs/segments.md).

dist.mesh @tp = <["tp"=4]>

func.func @qkv(%w: tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"} segments [64, 16, 16], {}]>> {
  %0 = dist.reshard %w : tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"}, {}]>>
      -> tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"} segments [64, 16, 16], {}]>>
  return %0 : tensor<96x8xbf16, #dist.sharding<@tp, [{"tp"} segments [64, 16, 16], {}]>>
}
