// Six reshards of the kinds a transformer layer needs, for the cache tests.
dist.mesh @mesh = <["dp"=2, "tp"=4]>
func.func @layer(%x: tensor<256x128xf32, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>,
                 %p: tensor<256x128xf32, #dist.sharding<@mesh, [{"dp"}, {}], partial = sum {"tp"}>>,
                 %w: tensor<128x512xbf16, #dist.sharding<@mesh, [{"dp"}, {"tp"}]>>) {
  %0 = dist.reshard %x : tensor<256x128xf32, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>> -> tensor<256x128xf32, #dist.sharding<@mesh, [{"dp"}, {}]>>
  %1 = dist.reshard %p : tensor<256x128xf32, #dist.sharding<@mesh, [{"dp"}, {}], partial = sum {"tp"}>> -> tensor<256x128xf32, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>>
  %2 = dist.reshard %p : tensor<256x128xf32, #dist.sharding<@mesh, [{"dp"}, {}], partial = sum {"tp"}>> -> tensor<256x128xf32, #dist.sharding<@mesh, [{"dp"}, {}]>>
  %3 = dist.reshard %w : tensor<128x512xbf16, #dist.sharding<@mesh, [{"dp"}, {"tp"}]>> -> tensor<128x512xbf16, #dist.sharding<@mesh, [{}, {"tp"}]>>
  %4 = dist.reshard %w : tensor<128x512xbf16, #dist.sharding<@mesh, [{"dp"}, {"tp"}]>> -> tensor<128x512xbf16, #dist.sharding<@mesh, [{"tp"}, {"dp"}]>>
  %5 = dist.reshard %x : tensor<256x128xf32, #dist.sharding<@mesh, [{"dp", "tp"}, {}]>> -> tensor<256x128xf32, #dist.sharding<@mesh, [{"dp"}, {"tp"}]>>
  return
}
