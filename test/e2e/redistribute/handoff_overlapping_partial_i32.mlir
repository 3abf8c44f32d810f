// Overlapping meshes and a partial source: the sum over stage 0's tp axis
// (ranks 0-3) is reduce-scattered there first, then sent to a tp=2 mesh on
// ranks 3 and 2 (both also in stage 0: their own shares are local copies).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:11 %s --dump %t
// RUN: %check_shards %s %t --input random:11
// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s
// CHECK: dist.reduce_scatter
// CHECK: dist.redistribute

dist.mesh @s0 = <["tp"=4]>
dist.mesh @s1 = <["tp"=2], devices = [3, 2]>

func.func @reduce_then_send(%a: tensor<12x5xi32, #dist.sharding<@s0, [{}, {}], partial = sum {"tp"}>>)
    -> tensor<12x5xi32, #dist.sharding<@s1, [{"tp"}, {}]>> {
  %0 = dist.reshard %a
      : tensor<12x5xi32, #dist.sharding<@s0, [{}, {}], partial = sum {"tp"}>>
     -> tensor<12x5xi32, #dist.sharding<@s1, [{"tp"}, {}]>>
  return %0 : tensor<12x5xi32, #dist.sharding<@s1, [{"tp"}, {}]>>
}
