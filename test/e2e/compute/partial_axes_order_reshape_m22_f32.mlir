// A value partial over {"tp", "y"} through expand_shape and
// collapse_shape on a mesh that orders the axes the other way (found by
// the program fuzzer): partial axes are a set, so the two spellings are
// one layout and nothing moves.
// REQUIRES: mpi, mlir, numpy
// RUN: dist-opt %s --dist-reshard-pipeline -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// CHECK: dist-partition: 3 ops partitioned (chooser optimal), 0 reshards inserted, modelled cost 0.000e+00 s
// EXPECT result0 = (arg0 * 2).reshape(8, 4)
dist.mesh @m = <["y"=2, "tp"=2]>
func.func @pr(%a: tensor<8x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"tp", "y"}>>) -> tensor<8x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"tp", "y"}>> {
  %x = tensor.expand_shape %a [[0, 1], [2]] output_shape [2, 4, 4] : tensor<8x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"tp", "y"}>> into tensor<2x4x4xf32>
  %d = arith.addf %x, %x : tensor<2x4x4xf32>
  %c = tensor.collapse_shape %d [[0, 1], [2]] : tensor<2x4x4xf32> into tensor<8x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"tp", "y"}>>
  return %c : tensor<8x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"tp", "y"}>>
}
