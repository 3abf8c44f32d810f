// A computing program (semantics §6) for check_shards.py's EXPECT directive:
// check-shards-expect.test feeds the checker hand-made dumps of it, and
// run-compute-expect.test runs it with dist-run. Result 0: rows split
// unevenly (3 rows on 2 devices: rank 1 holds row 2 and a padding row).
// Result 1: integer partial sums over "x".
dist.mesh @m = <["x"=2]>

// EXPECT result0 = arg0 @ arg1
// EXPECT result1 = arg2.sum(
// ...                 axis=1)
func.func @compute(%a: tensor<3x4xf32, #dist.sharding<@m, [{"x"}, {}]>>,
                   %b: tensor<4x2xf32, #dist.sharding<@m, [{}, {}]>>,
                   %c: tensor<3x4xi32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> (tensor<3x2xf32, #dist.sharding<@m, [{"x"}, {}]>>,
        tensor<3xi32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) {
  %zf = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<3x2xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %acc = linalg.fill ins(%zf : f32) outs(%e0 : tensor<3x2xf32, #dist.sharding<@m, [{"x"}, {}]>>) -> tensor<3x2xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %r0 = linalg.matmul
      ins(%a, %b : tensor<3x4xf32, #dist.sharding<@m, [{"x"}, {}]>>,
                   tensor<4x2xf32, #dist.sharding<@m, [{}, {}]>>)
      outs(%acc : tensor<3x2xf32, #dist.sharding<@m, [{"x"}, {}]>>) -> tensor<3x2xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %zi = arith.constant 0 : i32
  %e1 = tensor.empty() : tensor<3xi32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  %init = linalg.fill ins(%zi : i32) outs(%e1 : tensor<3xi32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) -> tensor<3xi32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  %r1 = linalg.reduce ins(%c : tensor<3x4xi32, #dist.sharding<@m, [{}, {"x"}]>>)
                      outs(%init : tensor<3xi32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) dimensions = [1]
    (%in: i32, %out: i32) {
      %s = arith.addi %in, %out : i32
      linalg.yield %s : i32
    }
  return %r0, %r1 : tensor<3x2xf32, #dist.sharding<@m, [{"x"}, {}]>>, tensor<3xi32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
}
