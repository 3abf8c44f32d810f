// A 2-layer MLP whose layouts are all left to dist-partition (semantics
// §6a): no argument, result or intermediate has an encoding; dist.auto names
// the mesh. docs/partitioning.md ("Auto-sharding") runs it under a device
// model and several memory budgets.
dist.mesh @m = <["x"=4]>
func.func @mlp(%x: tensor<8192x4096xbf16>, %w1: tensor<4096x16384xbf16>,
               %w2: tensor<16384x4096xbf16>) -> tensor<8192x4096xbf16>
    attributes {dist.auto = @m} {
  %zero = arith.constant 0.0 : bf16
  %e1 = tensor.empty() : tensor<8192x16384xbf16>
  %f1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<8192x16384xbf16>) -> tensor<8192x16384xbf16>
  %h = linalg.matmul ins(%x, %w1 : tensor<8192x4096xbf16>, tensor<4096x16384xbf16>)
                     outs(%f1 : tensor<8192x16384xbf16>) -> tensor<8192x16384xbf16>
  %e2 = tensor.empty() : tensor<8192x4096xbf16>
  %f2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<8192x4096xbf16>) -> tensor<8192x4096xbf16>
  %y = linalg.matmul ins(%h, %w2 : tensor<8192x16384xbf16>, tensor<16384x4096xbf16>)
                     outs(%f2 : tensor<8192x4096xbf16>) -> tensor<8192x4096xbf16>
  return %y : tensor<8192x4096xbf16>
}
