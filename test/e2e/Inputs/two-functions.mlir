// Two public functions (dist-run needs --entry) and a private one.
dist.mesh @m = <["x"=2]>

func.func @gather(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{}]>> {
  %b = dist.reshard %a : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
                      -> tensor<8xf32, #dist.sharding<@m, [{}]>>
  return %b : tensor<8xf32, #dist.sharding<@m, [{}]>>
}

func.func @scatter(%a: tensor<8xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %b = dist.reshard %a : tensor<8xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
                      -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %b : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

func.func private @helper(%a: tensor<8xf32, #dist.sharding<@m, [{}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{}]>> {
  return %a : tensor<8xf32, #dist.sharding<@m, [{}]>>
}
