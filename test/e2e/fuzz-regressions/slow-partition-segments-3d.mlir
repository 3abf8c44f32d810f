// Compile time. Found by the program fuzzer (seed 6 of --features ci of an
// earlier version: 75 s for 5 ops), minimized: one batch_matmul on a 2x2x2
// mesh whose result is bound to an uneven segmented layout. dist-partition
// priced every pair of candidate layouts with the planner (thousands, each
// milliseconds with segments on 3 axes): 4-5 s here. Pairs of large tables
// are now priced lazily (a lower bound, the exact cost only when a choice
// uses the pair): well under a second.
// REQUIRES: mpi, mlir, numpy
// RUN: %bounded 10 4096 dist-opt %s --dist-partition -o /dev/null
// RUN: rm -rf %t && dist-run --np 8 --timeout 120 --input random:7 %s --dump %t
// RUN: %check_shards %s %t --input random:7
// EXPECT result0 = (v13 := np.asarray(arg1).astype(np.float32),
// ...   v11 := np.asarray(arg0).astype(np.float32),
// ...   v12 := np.full((8, 2, 1), np.float32(0.0)) + np.matmul(v13, v11),
// ...   v12)[-1]
dist.mesh @m = <["b"=2, "a"=2, "sp"=2]>

func.func @fuzz(
    %v11: tensor<8x8x1xf32, #dist.sharding<@m, [{}, {}, {}]>>,
    %v13: tensor<8x2x8xf32, #dist.sharding<@m, [{}, {}, {}]>>)
    -> tensor<8x2x1xf32, #dist.sharding<@m, [{"sp"} segments [3, 4, 1], {}, {}]>> {
  %e1 = tensor.empty() : tensor<8x2x1xf32>
  %c2 = arith.constant 0.0 : f32
  %f3 = linalg.fill ins(%c2 : f32) outs(%e1 : tensor<8x2x1xf32>) -> tensor<8x2x1xf32>
  %v12 = linalg.batch_matmul ins(%v13, %v11 : tensor<8x2x8xf32, #dist.sharding<@m, [{}, {}, {}]>>, tensor<8x8x1xf32, #dist.sharding<@m, [{}, {}, {}]>>) outs(%f3 : tensor<8x2x1xf32>) -> tensor<8x2x1xf32>
  %e4 = tensor.empty() : tensor<8x2x1xf32, #dist.sharding<@m, [{"sp"} segments [3, 4, 1], {}, {}]>>
  %r5 = linalg.copy ins(%v12 : tensor<8x2x1xf32>) outs(%e4 : tensor<8x2x1xf32, #dist.sharding<@m, [{"sp"} segments [3, 4, 1], {}, {}]>>) -> tensor<8x2x1xf32, #dist.sharding<@m, [{"sp"} segments [3, 4, 1], {}, {}]>>
  return %r5 : tensor<8x2x1xf32, #dist.sharding<@m, [{"sp"} segments [3, 4, 1], {}, {}]>>
}
