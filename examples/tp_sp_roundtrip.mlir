// The activation layouts of a tensor- plus sequence-parallel MLP block on a
// dp=2 x tp=4 mesh (see docs/tutorial.md). Between the reshards a real model
// runs the column- and row-parallel GEMMs; here the layouts are the point.
dist.mesh @mesh = <["dp"=2, "tp"=4]>

func.func @mlp_block(%x: tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>)
    -> tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>> {
  %full = dist.reshard %x
      : tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>
     -> tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp"}, {}]>>
  %partial = dist.reshard %full
      : tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp"}, {}]>>
     -> tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp"}, {}], partial = sum {"tp"}>>
  %y = dist.reshard %partial
      : tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp"}, {}], partial = sum {"tp"}>>
     -> tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>
  return %y : tensor<4096x1024xbf16, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>
}
