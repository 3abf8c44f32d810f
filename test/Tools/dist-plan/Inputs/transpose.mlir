// The 2x4 layout transpose as a reshard, for the shared-cache test.
dist.mesh @mesh = <["x"=2, "y"=4]>
func.func @transpose(%a: tensor<1024x1024xf32, #dist.sharding<@mesh, [{"x"}, {"y"}]>>)
    -> tensor<1024x1024xf32, #dist.sharding<@mesh, [{"y"}, {"x"}]>> {
  %b = dist.reshard %a : tensor<1024x1024xf32, #dist.sharding<@mesh, [{"x"}, {"y"}]>> -> tensor<1024x1024xf32, #dist.sharding<@mesh, [{"y"}, {"x"}]>>
  return %b : tensor<1024x1024xf32, #dist.sharding<@mesh, [{"y"}, {"x"}]>>
}
