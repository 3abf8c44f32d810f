// A topology whose device gives only a memory budget: its flops and memory
// bandwidth are the default device's (semantics §3b), so auto-sharding
// prices compute as without a file and stays within the budget. (When
// fields left out were 0, every plan priced compute at infinity and the
// program "could not be partitioned".) The results equal NumPy's.
// RUN: echo '{"device": {"memory": 80000}}' > %t.json
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --topology %t.json --input random:5 %s --dump %t
// RUN: (grep '^// EXPECT' %s; dist-opt %s --dist-partition=topology=%t.json) > %t.planned.mlir
// RUN: %check_shards %t.planned.mlir %t --input random:5
// RUN: dist-opt %s --dist-partition=topology=%t.json -dist-remarks -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: dist-partition: @mlp: proven optimal; modelled compute {{[1-9]}}
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
