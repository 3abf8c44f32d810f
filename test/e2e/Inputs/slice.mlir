// A local slice only: no collective, so there is nothing to break.
dist.mesh @m = <["x"=2]>

func.func @slice(%a: tensor<8xi32, #dist.sharding<@m, [{}]>>)
    -> tensor<8xi32, #dist.sharding<@m, [{"x"}]>> {
  %b = dist.reshard %a : tensor<8xi32, #dist.sharding<@m, [{}]>>
                      -> tensor<8xi32, #dist.sharding<@m, [{"x"}]>>
  return %b : tensor<8xi32, #dist.sharding<@m, [{"x"}]>>
}
