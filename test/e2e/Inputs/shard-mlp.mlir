// An upstream-shard program with compute (LLVM 22 syntax): a matmul whose
// contraction dim is split, its square, and a result handed over to columns.
shard.grid @grid(shape = 2)
func.func @mlp(%arg0: tensor<4x8xf32>, %arg1: tensor<8x6xf32>) -> tensor<4x6xf32> {
  %s_k = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %s_rows = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  %s_cols = shard.sharding @grid split_axes = [[], [0]] : !shard.sharding
  %a = shard.shard %arg0 to %s_k : tensor<4x8xf32>
  %b = shard.shard %arg1 to %s_rows : tensor<8x6xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %c = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x6xf32>) outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %t = arith.mulf %c, %c : tensor<4x6xf32>
  %t0 = shard.shard %t to %s_rows : tensor<4x6xf32>
  %t1 = shard.shard %t0 to %s_cols annotate_for_users : tensor<4x6xf32>
  return %t1 : tensor<4x6xf32>
}
