// Upstream shard annotations dist cannot hold: a dist layout has no halo.
// dist-opt --dist-import-shard reports where and why.
shard.grid @grid(shape = 4)
func.func @stencil(%arg0: tensor<64xf32>) -> tensor<64xf32> {
  %s = shard.sharding @grid split_axes = [[0]] halo_sizes = [1, 1] : !shard.sharding
  %0 = shard.shard %arg0 to %s : tensor<64xf32>
  return %0 : tensor<64xf32>
}
