// Columns split over tp=4 moved into rows split per segment [24, 4, 4]:
// one all_to_all whose chunks each hold a rank's block of every segment.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:12 %s --dump %t
// RUN: %check_shards %s %t --input random:12
// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s
// CHECK: dist.all_to_all {{.*}} dim = 1 to_dim = 0
// CHECK-NOT: dist.redistribute

dist.mesh @tp = <["tp"=4]>

func.func @cols_to_segments(%x: tensor<32x16xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
    -> tensor<32x16xf32, #dist.sharding<@tp, [{"tp"} segments [24, 4, 4], {}]>> {
  %0 = dist.reshard %x : tensor<32x16xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
      -> tensor<32x16xf32, #dist.sharding<@tp, [{"tp"} segments [24, 4, 4], {}]>>
  return %0 : tensor<32x16xf32, #dist.sharding<@tp, [{"tp"} segments [24, 4, 4], {}]>>
}
