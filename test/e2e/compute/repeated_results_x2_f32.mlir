// One value returned at several positions (dist-to-llvm once crashed in
// buffer-results-to-out-params, which hoisted the one allocation into two
// out-parameters): a planned reshard's result, an argument and a computed
// value, each returned twice. Every result is checked against the inputs.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// EXPECT result4 = arg0 * 2 + 1
// EXPECT result5 = arg0 * 2 + 1

dist.mesh @m = <["x"=2]>

func.func @repeated(%a: tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> (tensor<8x6xf32, #dist.sharding<@m, [{}, {"x"}]>>,
        tensor<8x6xf32, #dist.sharding<@m, [{}, {"x"}]>>,
        tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>,
        tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>,
        tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>,
        tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>) {
  %b = dist.reshard %a : tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>> -> tensor<8x6xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %two = arith.constant dense<2.0> : tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %one = arith.constant dense<1.0> : tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %d = arith.mulf %a, %two : tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %c = arith.addf %d, %one : tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>
  return %b, %b, %a, %a, %c, %c
      : tensor<8x6xf32, #dist.sharding<@m, [{}, {"x"}]>>,
        tensor<8x6xf32, #dist.sharding<@m, [{}, {"x"}]>>,
        tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>,
        tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>,
        tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>,
        tensor<8x6xf32, #dist.sharding<@m, [{"x"}, {}]>>
}
