// One all_gather on 4 devices: the program the runtime-failure tests break.
dist.mesh @m = <["x"=4]>

func.func @gather(%a: tensor<64x8xf32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> tensor<64x8xf32, #dist.sharding<@m, [{}, {}]>> {
  %b = dist.reshard %a : tensor<64x8xf32, #dist.sharding<@m, [{"x"}, {}]>>
                      -> tensor<64x8xf32, #dist.sharding<@m, [{}, {}]>>
  return %b : tensor<64x8xf32, #dist.sharding<@m, [{}, {}]>>
}
