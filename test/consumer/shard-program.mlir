shard.grid @grid(shape = 2x4)
func.func @transpose(%arg0: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %s0 = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<64x64xf32>
  %s1 = shard.sharding @grid split_axes = [[1], [0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<64x64xf32>
  return %1 : tensor<64x64xf32>
}
