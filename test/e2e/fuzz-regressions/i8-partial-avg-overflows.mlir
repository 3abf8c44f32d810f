// Found by the program fuzzer
// (seed 200397 of --features default: an arith.extsi of an i8 argument that is
// partial = avg, which dist-partition reduces first), reduced by hand to that
// reduction: the mean over b of two i8 copies of 79 comes back as -49. The
// runtime's AVG sums in the element type and then divides (docs/runtime.md), so
// 79 + 79 wraps to -98 before the division; semantics §2 says the mean (check_shards
// sums in int64). Any integer mean whose sum leaves the element type's range
// is wrong the same way (i16, and i32 with large values).
// Fixed: the MPI runtime reduces integer means in 64 bits.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 --input random:398 %s --dump %t
// RUN: %check_shards %s %t --input random:398

dist.mesh @m = <["b"=2]>

func.func @mean(%x: tensor<9xi8, #dist.sharding<@m, [{}], partial = avg {"b"}>>)
    -> tensor<9xi8, #dist.sharding<@m, [{}]>> {
  %r = dist.reshard %x : tensor<9xi8, #dist.sharding<@m, [{}], partial = avg {"b"}>> -> tensor<9xi8, #dist.sharding<@m, [{}]>>
  return %r : tensor<9xi8, #dist.sharding<@m, [{}]>>
}
