// Free intermediates whose best layout needs no communication at all, on a
// 2-D mesh: tanh, a splat scale, a transpose and back, a broadcast and a
// reduction over the broadcast dim, a residual add. Nothing moves.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:6 %s --dump %t
// RUN: %check_shards %s %t --input random:6
// RUN: dist-opt %s --dist-reshard-pipeline | FileCheck %s
// CHECK-NOT: dist.all_
// CHECK-NOT: dist.reduce_scatter
// CHECK-NOT: dist.permute
// EXPECT result0 = 3 * (2 * np.tanh(arg0)) + arg0

dist.mesh @m = <["dp"=2, "tp"=2]>

func.func @chain(%a: tensor<6x10xf64, #dist.sharding<@m, [{"dp"}, {"tp"}]>>)
    -> tensor<6x10xf64, #dist.sharding<@m, [{"dp"}, {"tp"}]>> {
  %t = math.tanh %a : tensor<6x10xf64, #dist.sharding<@m, [{"dp"}, {"tp"}]>>
  %two = arith.constant dense<2.0> : tensor<6x10xf64>
  %e0 = tensor.empty() : tensor<6x10xf64>
  %s = linalg.map { arith.mulf } ins(%t, %two : tensor<6x10xf64, #dist.sharding<@m, [{"dp"}, {"tp"}]>>, tensor<6x10xf64>) outs(%e0 : tensor<6x10xf64>)
  %e1 = tensor.empty() : tensor<10x6xf64>
  %tr = linalg.transpose ins(%s : tensor<6x10xf64>) outs(%e1 : tensor<10x6xf64>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<6x10xf64>
  %back = linalg.transpose ins(%tr : tensor<10x6xf64>) outs(%e2 : tensor<6x10xf64>) permutation = [1, 0]
  %e3 = tensor.empty() : tensor<6x10x3xf64>
  %b = linalg.broadcast ins(%back : tensor<6x10xf64>) outs(%e3 : tensor<6x10x3xf64>) dimensions = [2]
  %zero = arith.constant 0.0 : f64
  %e4 = tensor.empty() : tensor<6x10xf64>
  %f4 = linalg.fill ins(%zero : f64) outs(%e4 : tensor<6x10xf64>) -> tensor<6x10xf64>
  %sum = linalg.reduce ins(%b : tensor<6x10x3xf64>) outs(%f4 : tensor<6x10xf64>) dimensions = [2]
    (%in: f64, %acc: f64) {
      %r = arith.addf %in, %acc : f64
      linalg.yield %r : f64
    }
  %e5 = tensor.empty() : tensor<6x10xf64, #dist.sharding<@m, [{"dp"}, {"tp"}]>>
  %out = linalg.map { arith.addf } ins(%sum, %a : tensor<6x10xf64>, tensor<6x10xf64, #dist.sharding<@m, [{"dp"}, {"tp"}]>>) outs(%e5 : tensor<6x10xf64, #dist.sharding<@m, [{"dp"}, {"tp"}]>>)
  return %out : tensor<6x10xf64, #dist.sharding<@m, [{"dp"}, {"tp"}]>>
}
