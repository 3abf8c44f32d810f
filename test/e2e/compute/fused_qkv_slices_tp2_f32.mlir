// Q, K and V out of a fused projection whose weight is interleaved
// (segments [16, 4, 4]: GQA's 16 query and 4 + 4 kv columns over tp=2):
// each extract_slice takes one segment of every device's block, so the
// projection and the three slices move nothing.
// REQUIRES: mpi, mlir, numpy
// RUN: dist-opt %s --dist-partition -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 --input random:1 %s --dump %t
// RUN: %check_shards %s %t --input random:1
// CHECK: 4 ops partitioned (chooser optimal), 0 reshards inserted, modelled cost 0.000e+00 s
// EXPECT result0 = (arg0 @ arg1)[:, 0:16]
// EXPECT result1 = (arg0 @ arg1)[:, 16:20]
// EXPECT result2 = (arg0 @ arg1)[:, 20:24]

dist.mesh @tp = <["tp"=2]>

func.func @qkv(%x: tensor<4x8xf32, #dist.sharding<@tp, [{}, {}]>>,
               %w: tensor<8x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>)
    -> (tensor<4x16xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x24xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x24xf32>) -> tensor<4x24xf32>
  %qkv = linalg.matmul ins(%x, %w : tensor<4x8xf32, #dist.sharding<@tp, [{}, {}]>>, tensor<8x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>)
                       outs(%f : tensor<4x24xf32>) -> tensor<4x24xf32>
  %q = tensor.extract_slice %qkv[0, 0] [4, 16] [1, 1] : tensor<4x24xf32> to tensor<4x16xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  %k = tensor.extract_slice %qkv[0, 16] [4, 4] [1, 1] : tensor<4x24xf32> to tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  %v = tensor.extract_slice %qkv[0, 20] [4, 4] [1, 1] : tensor<4x24xf32> to tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  return %q, %k, %v : tensor<4x16xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
}
