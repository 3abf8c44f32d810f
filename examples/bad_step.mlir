// An invalid step: "x" is not the minor-most axis of dim 0 ("y" is), so it
// cannot be gathered first. dist-opt reports where and why.
dist.mesh @mesh = <["x"=2, "y"=4]>

func.func @bad(%a: tensor<64xf32, #dist.sharding<@mesh, [{"x", "y"}]>>)
    -> tensor<64xf32, #dist.sharding<@mesh, [{"y"}]>> {
  %b = dist.all_gather %a axes = ["x"] dim = 0
      : tensor<64xf32, #dist.sharding<@mesh, [{"x", "y"}]>>
     -> tensor<64xf32, #dist.sharding<@mesh, [{"y"}]>>
  return %b : tensor<64xf32, #dist.sharding<@mesh, [{"y"}]>>
}
