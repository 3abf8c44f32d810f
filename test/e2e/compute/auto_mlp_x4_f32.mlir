// Auto-sharding (semantics §6a) run on 4 ranks: every layout is free, the
// device model makes replicated compute cost something, memory is ample,
// so the plan is data parallel (the batch split, the weights replicated);
// dist-run feeds the arguments in the chosen layouts and the results equal
// NumPy's on the global tensors.
// RUN: echo '{"device": {"flops": 1e12, "mem_bw": 1e11}}' > %t.json
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --topology %t.json --input random:5 %s --dump %t
// RUN: (grep '^// EXPECT' %s; dist-opt %s --dist-partition=topology=%t.json) > %t.planned.mlir
// RUN: %check_shards %t.planned.mlir %t --input random:5
// RUN: FileCheck %s --input-file %t.planned.mlir
// CHECK-LABEL: func.func @mlp
// CHECK-SAME: #dist.sharding<@m, [{"x"}, {}]>>, %{{.*}}: tensor<24x40xf32, #dist.sharding<@m, [{}, {}]>>, %{{.*}}: tensor<40x24xf32, #dist.sharding<@m, [{}, {}]>>) -> tensor<16x24xf32, #dist.sharding<@m, [{"x"}, {}]>>
// CHECK-NOT: dist.reshard
// EXPECT result0 = np.maximum(arg0 @ arg1, 0) @ arg2
dist.mesh @m = <["x"=4]>
func.func @mlp(%x: tensor<16x24xf32>, %w1: tensor<24x40xf32>, %w2: tensor<40x24xf32>)
    -> tensor<16x24xf32> attributes {dist.auto = @m} {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x40xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x40xf32>) -> tensor<16x40xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x24xf32>, tensor<24x40xf32>) outs(%f1 : tensor<16x40xf32>) -> tensor<16x40xf32>
  %zeros = arith.constant dense<0.0> : tensor<16x40xf32>
  %r = arith.maximumf %h, %zeros : tensor<16x40xf32>
  %e2 = tensor.empty() : tensor<16x24xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x24xf32>) -> tensor<16x24xf32>
  %y = linalg.matmul ins(%r, %w2 : tensor<16x40xf32>, tensor<40x24xf32>) outs(%f2 : tensor<16x24xf32>) -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}
