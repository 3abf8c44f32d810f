// A transpose of a broadcast whose input dim is split (found by the
// program fuzzer): upstream's canonicalization of transpose(broadcast)
// rebuilds the pair with types that drop their layouts, so the reshard
// pipeline canonicalizes only reshards on sharded global IR.
// REQUIRES: mpi, mlir, numpy
// RUN: dist-opt %s --dist-reshard-pipeline | FileCheck %s
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// CHECK-LABEL: func @tb
// CHECK: linalg.broadcast
// CHECK: linalg.transpose {{.*}} outs(%{{.*}} : tensor<6x4xi32, #dist.sharding<@m, [{}, {"x"}]>>)
// EXPECT result0 = np.broadcast_to(arg0[:, None], (4, 6)).T.copy()
dist.mesh @m = <["x"=2]>
func.func @tb(%a: tensor<4xi32, #dist.sharding<@m, [{"x"}]>>) -> tensor<6x4xi32, #dist.sharding<@m, [{}, {"x"}]>> {
  %e = tensor.empty() : tensor<4x6xi32>
  %b = linalg.broadcast ins(%a : tensor<4xi32, #dist.sharding<@m, [{"x"}]>>) outs(%e : tensor<4x6xi32>) dimensions = [1]
  %e2 = tensor.empty() : tensor<6x4xi32, #dist.sharding<@m, [{}, {"x"}]>>
  %t = linalg.transpose ins(%b : tensor<4x6xi32>) outs(%e2 : tensor<6x4xi32, #dist.sharding<@m, [{}, {"x"}]>>) permutation = [1, 0]
  return %t : tensor<6x4xi32, #dist.sharding<@m, [{}, {"x"}]>>
}
