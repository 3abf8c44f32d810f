// Reductions over a sequence dim of 10 split 4 ways (blocks of 3, the last
// with 2 padding slots): sum of exp and max of negative values, left partial;
// and a mean, reduced. Padding must never take part.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:5 %s --dump %t
// RUN: %check_shards %s %t --input random:5
// EXPECT result0 = np.exp(arg0).sum(axis=1)
// EXPECT result1 = (-np.abs(arg0) - 1).max(axis=1)
// EXPECT result2 = arg0.mean(axis=1)

dist.mesh @m = <["x"=4]>

func.func @uneven(%a: tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> (tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>,
        tensor<3xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>,
        tensor<3xf32, #dist.sharding<@m, [{}]>>) {
  %zero = arith.constant 0.0 : f32
  %e = math.exp %a : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %i0 = tensor.empty() : tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  %f0 = linalg.fill ins(%zero : f32) outs(%i0 : tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) -> tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  %s = linalg.reduce ins(%e : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>) outs(%f0 : tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  // -|a| - 1: every value negative, so zero padding would win a max.
  %abs = math.absf %a : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %neg = arith.negf %abs : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %ones = arith.constant dense<1.0> : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %shifted = arith.subf %neg, %ones : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %ninf = arith.constant 0xFF800000 : f32
  %i1 = tensor.empty() : tensor<3xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>
  %f1 = linalg.fill ins(%ninf : f32) outs(%i1 : tensor<3xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>) -> tensor<3xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>
  %mx = linalg.reduce ins(%shifted : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>) outs(%f1 : tensor<3xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  // mean = sum / 10
  %i2 = tensor.empty() : tensor<3xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%i2 : tensor<3xf32>) -> tensor<3xf32>
  %sum = linalg.reduce ins(%a : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>) outs(%f2 : tensor<3xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %ten = arith.constant dense<10.0> : tensor<3xf32>
  %mean = arith.divf %sum, %ten : tensor<3xf32>
  %i3 = tensor.empty() : tensor<3xf32, #dist.sharding<@m, [{}]>>
  %out = linalg.copy ins(%mean : tensor<3xf32>) outs(%i3 : tensor<3xf32, #dist.sharding<@m, [{}]>>) -> tensor<3xf32, #dist.sharding<@m, [{}]>>
  return %s, %mx, %out : tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>, tensor<3xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>, tensor<3xf32, #dist.sharding<@m, [{}]>>
}
