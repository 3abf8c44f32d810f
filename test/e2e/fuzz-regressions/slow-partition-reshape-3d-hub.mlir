// Compile time. Found by the program fuzzer (seed 30026 of --features ci
// --max-ops 8, 38 s), reduced by hand: an argument read by a batch_matmul and
// by an expand_shape on a 2x2x2 mesh took about 32 s in dist-partition (the
// hub's strategies times its consumers', every pair planned); lazy pricing
// of large tables makes it 0.2 s.
// REQUIRES: mpi, mlir, numpy
// RUN: %bounded 10 4096 dist-opt %s --dist-partition -o /dev/null
// RUN: rm -rf %t && dist-run --np 8 --timeout 120 --input random:3 %s --dump %t
// RUN: %check_shards %s %t --input random:3
// EXPECT result0 = arg1.reshape(2, 2, 2, 8)
// EXPECT result1 = 0.5 + np.matmul(arg0.astype(np.float32), arg1.astype(np.float32))
dist.mesh @m = <["a"=2, "tp"=2, "z"=2]>

func.func @fuzz(
    %v16: tensor<2x4x4xf32, #dist.sharding<@m, [{"z"}, {"tp"}, {}]>>,
    %v18: tensor<2x4x8xf32, #dist.sharding<@m, [{"tp", "z"}, {"a"}, {}]>>)
    -> (tensor<2x2x2x8xf32, #dist.sharding<@m, [{"tp", "z"}, {}, {"a"}, {}]>>, tensor<2x4x8xf32, #dist.sharding<@m, [{"a"}, {}, {"z"}]>>) {
  %e1 = tensor.empty() : tensor<2x4x8xf32, #dist.sharding<@m, [{"a"}, {}, {"z"}]>>
  %c2 = arith.constant 0.5 : f32
  %f3 = linalg.fill ins(%c2 : f32) outs(%e1 : tensor<2x4x8xf32, #dist.sharding<@m, [{"a"}, {}, {"z"}]>>) -> tensor<2x4x8xf32, #dist.sharding<@m, [{"a"}, {}, {"z"}]>>
  %v19 = linalg.batch_matmul ins(%v16, %v18 : tensor<2x4x4xf32, #dist.sharding<@m, [{"z"}, {"tp"}, {}]>>, tensor<2x4x8xf32, #dist.sharding<@m, [{"tp", "z"}, {"a"}, {}]>>) outs(%f3 : tensor<2x4x8xf32, #dist.sharding<@m, [{"a"}, {}, {"z"}]>>) -> tensor<2x4x8xf32, #dist.sharding<@m, [{"a"}, {}, {"z"}]>>
  %v25 = tensor.expand_shape %v18 [[0], [1, 2], [3]] output_shape [2, 2, 2, 8] : tensor<2x4x8xf32, #dist.sharding<@m, [{"tp", "z"}, {"a"}, {}]>> into tensor<2x2x2x8xf32>
  %e7 = tensor.empty() : tensor<2x2x2x8xf32, #dist.sharding<@m, [{"tp", "z"}, {}, {"a"}, {}]>>
  %r8 = linalg.copy ins(%v25 : tensor<2x2x2x8xf32>) outs(%e7 : tensor<2x2x2x8xf32, #dist.sharding<@m, [{"tp", "z"}, {}, {"a"}, {}]>>) -> tensor<2x2x2x8xf32, #dist.sharding<@m, [{"tp", "z"}, {}, {"a"}, {}]>>
  return %r8, %v19 : tensor<2x2x2x8xf32, #dist.sharding<@m, [{"tp", "z"}, {}, {"a"}, {}]>>, tensor<2x4x8xf32, #dist.sharding<@m, [{"a"}, {}, {"z"}]>>
}
