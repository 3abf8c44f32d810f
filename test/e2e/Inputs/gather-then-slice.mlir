// An intermediate larger than the arguments and results: the all_gather's
// replicated 1024x1024 f32 (4 MiB per rank) between 512x1024 shards (2 MiB)
// (fail-memory.test).
dist.mesh @m = <["x"=2]>

func.func @gather_then_slice(%a: tensor<1024x1024xf32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> tensor<1024x1024xf32, #dist.sharding<@m, [{}, {"x"}]>> {
  %g = dist.all_gather %a axes = ["x"] dim = 0
      : tensor<1024x1024xf32, #dist.sharding<@m, [{"x"}, {}]>>
     -> tensor<1024x1024xf32, #dist.sharding<@m, [{}, {}]>>
  %s = dist.all_slice %g axes = ["x"] dim = 1
      : tensor<1024x1024xf32, #dist.sharding<@m, [{}, {}]>>
     -> tensor<1024x1024xf32, #dist.sharding<@m, [{}, {"x"}]>>
  return %s : tensor<1024x1024xf32, #dist.sharding<@m, [{}, {"x"}]>>
}
