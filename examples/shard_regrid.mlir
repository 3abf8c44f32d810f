// An upstream-shard program (LLVM 22 syntax): rows over grid axis 0 and
// columns over axis 1, resharded so that both axes split the columns.
shard.grid @grid(shape = 2x2)
func.func @regrid(%arg0: tensor<6x10xf32>) -> tensor<6x10xf32> {
  %s0 = shard.sharding @grid split_axes = [[0], [1]] : !shard.sharding
  %0 = shard.shard %arg0 to %s0 : tensor<6x10xf32>
  %s1 = shard.sharding @grid split_axes = [[], [1, 0]] : !shard.sharding
  %1 = shard.shard %0 to %s1 annotate_for_users : tensor<6x10xf32>
  return %1 : tensor<6x10xf32>
}
