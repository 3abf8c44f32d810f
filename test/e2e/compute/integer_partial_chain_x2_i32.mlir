// Integers, checked exactly: a contraction over a dim split unevenly (7 over
// 2) after elementwise ops leaves a partial sum; a linear op (times 3, plus
// another partial) keeps it partial; a non-linear op (max with 0) needs the
// reduced value.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 --input random:2 %s --dump %t
// RUN: %check_shards %s %t --input random:2
// EXPECT result0 = 3 * ((arg0 * 2) @ arg1) + (arg0 * 2) @ arg1
// EXPECT result1 = np.maximum(4 * ((arg0 * 2) @ arg1), 0)

dist.mesh @m = <["x"=2]>

func.func @ints(%a: tensor<3x7xi32, #dist.sharding<@m, [{}, {"x"}]>>,
                %b: tensor<7x2xi32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> (tensor<3x2xi32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>,
        tensor<3x2xi32, #dist.sharding<@m, [{}, {}]>>) {
  %two = arith.constant dense<2> : tensor<3x7xi32, #dist.sharding<@m, [{}, {"x"}]>>
  %a2 = arith.muli %a, %two : tensor<3x7xi32, #dist.sharding<@m, [{}, {"x"}]>>
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<3x2xi32>
  %f = linalg.fill ins(%zero : i32) outs(%e : tensor<3x2xi32>) -> tensor<3x2xi32>
  %p = linalg.matmul ins(%a2, %b : tensor<3x7xi32, #dist.sharding<@m, [{}, {"x"}]>>, tensor<7x2xi32, #dist.sharding<@m, [{"x"}, {}]>>)
                     outs(%f : tensor<3x2xi32>) -> tensor<3x2xi32>
  %three = arith.constant dense<3> : tensor<3x2xi32>
  %p3 = arith.muli %p, %three : tensor<3x2xi32>
  %lin = arith.addi %p3, %p : tensor<3x2xi32>
  %e1 = tensor.empty() : tensor<3x2xi32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>
  %out0 = linalg.copy ins(%lin : tensor<3x2xi32>) outs(%e1 : tensor<3x2xi32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>) -> tensor<3x2xi32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>
  %zeros = arith.constant dense<0> : tensor<3x2xi32>
  %relu = arith.maxsi %lin, %zeros : tensor<3x2xi32>
  %e2 = tensor.empty() : tensor<3x2xi32, #dist.sharding<@m, [{}, {}]>>
  %out1 = linalg.copy ins(%relu : tensor<3x2xi32>) outs(%e2 : tensor<3x2xi32, #dist.sharding<@m, [{}, {}]>>) -> tensor<3x2xi32, #dist.sharding<@m, [{}, {}]>>
  return %out0, %out1 : tensor<3x2xi32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>, tensor<3x2xi32, #dist.sharding<@m, [{}, {}]>>
}
