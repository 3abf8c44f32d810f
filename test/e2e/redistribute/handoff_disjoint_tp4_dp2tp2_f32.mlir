// A pipeline hand-off between disjoint stages: stage 0 is tp=4 on ranks
// 0-3 (rows split), stage 1 is dp=2 x tp=2 on ranks 4-7 (columns split).
// Ranks 0-3 write no dump for the result (it lives on stage 1).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 8 --timeout 120 %s --dump %t | FileCheck %s --check-prefix=OUT
// RUN: %check_shards %s %t
// RUN: not ls %t/result0.rank0.npy
// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s
// OUT: ran on 8 ranks
// OUT-SAME: 1 result(s), each from the ranks of its mesh, written to
// CHECK: dist.redistribute %{{.*}} : tensor<32x16xf32, #dist.sharding<@s0, [{"tp"}, {}]>> -> tensor<32x16xf32, #dist.sharding<@s1,

dist.mesh @s0 = <["tp"=4], devices = [0, 1, 2, 3]>
dist.mesh @s1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>

func.func @handoff(%a: tensor<32x16xf32, #dist.sharding<@s0, [{"tp"}, {}]>>)
    -> tensor<32x16xf32, #dist.sharding<@s1, [{}, {"tp"}]>> {
  %0 = dist.reshard %a
      : tensor<32x16xf32, #dist.sharding<@s0, [{"tp"}, {}]>>
     -> tensor<32x16xf32, #dist.sharding<@s1, [{}, {"tp"}]>>
  return %0 : tensor<32x16xf32, #dist.sharding<@s1, [{}, {"tp"}]>>
}
