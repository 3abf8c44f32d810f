// 10^6 x 10^6 f32 (4 TB): 2 TB per rank on 2 ranks, which no machine dist-run
// runs on holds (fail-memory.test).
dist.mesh @m = <["x"=2]>

func.func @huge(%a: tensor<1000000x1000000xf32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> tensor<1000000x1000000xf32, #dist.sharding<@m, [{}, {"x"}]>> {
  %b = dist.reshard %a : tensor<1000000x1000000xf32, #dist.sharding<@m, [{"x"}, {}]>>
                      -> tensor<1000000x1000000xf32, #dist.sharding<@m, [{}, {"x"}]>>
  return %b : tensor<1000000x1000000xf32, #dist.sharding<@m, [{}, {"x"}]>>
}
