// The same move written step by step with explicit collectives. Each op's
// verifier recomputes the layout its move produces, so a wrong step (say,
// gathering an axis that is not minor-most) is rejected at parse time.
dist.mesh @mesh = <["x"=2, "y"=2, "z"=2]>

func.func @fsdp_gather(%w: tensor<8192x1024xf32, #dist.sharding<@mesh, [{"x", "y", "z"}, {}]>>)
    -> tensor<8192x1024xf32, #dist.sharding<@mesh, [{}, {}]>> {
  // FSDP: gather a fully sharded weight before use, innermost axes first.
  %0 = dist.all_gather %w axes = ["z"] dim = 0
      : tensor<8192x1024xf32, #dist.sharding<@mesh, [{"x", "y", "z"}, {}]>>
     -> tensor<8192x1024xf32, #dist.sharding<@mesh, [{"x", "y"}, {}]>>
  %1 = dist.all_gather %0 axes = ["x", "y"] dim = 0
      : tensor<8192x1024xf32, #dist.sharding<@mesh, [{"x", "y"}, {}]>>
     -> tensor<8192x1024xf32, #dist.sharding<@mesh, [{}, {}]>>
  return %1 : tensor<8192x1024xf32, #dist.sharding<@mesh, [{}, {}]>>
}
