// A 2-D "transpose" of the layout on a 2x4 mesh: rows split by x and columns
// by y become rows split by y and columns by x. Every device ends up with a
// different block than it started with; the planner decides how (all-to-alls,
// or a single permute, depending on the topology).
dist.mesh @mesh = <["x"=2, "y"=4]>

func.func @transpose(%a: tensor<1024x1024xf32, #dist.sharding<@mesh, [{"x"}, {"y"}]>>)
    -> tensor<1024x1024xf32, #dist.sharding<@mesh, [{"y"}, {"x"}]>> {
  %b = dist.reshard %a
      : tensor<1024x1024xf32, #dist.sharding<@mesh, [{"x"}, {"y"}]>>
     -> tensor<1024x1024xf32, #dist.sharding<@mesh, [{"y"}, {"x"}]>>
  return %b : tensor<1024x1024xf32, #dist.sharding<@mesh, [{"y"}, {"x"}]>>
}
