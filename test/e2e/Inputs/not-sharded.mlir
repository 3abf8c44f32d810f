// The entry takes a plain tensor: dist-run cannot know who holds what.
dist.mesh @m = <["x"=2]>

func.func @plain(%a: tensor<8xf32>, %b: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{}]>> {
  %c = dist.reshard %b : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
                      -> tensor<8xf32, #dist.sharding<@m, [{}]>>
  return %c : tensor<8xf32, #dist.sharding<@m, [{}]>>
}
