// A vocabulary-parallel lookup on a 2-D mesh: the ids split by batch over
// "dp", the table (an integer one: its zero is 0) by rows over "tp"; each
// device looks up its batch rows in its table rows, and the result is split
// over "dp" and a partial sum over "tp". 13 rows on 2 devices: blocks of 7,
// the second holding 6.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:6 %s --dump %t
// RUN: %check_shards %s %t --input random:6
// RUN: dist-opt %s --dist-reshard-pipeline -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// CHECK: modelled cost 0.000e+00 s
// EXPECT result0 = arg1[np.mod(arg0, 13)]
dist.mesh @m = <["dp"=2, "tp"=2]>
func.func @embed(%ids: tensor<4x3xi32, #dist.sharding<@m, [{"dp"}, {}]>>,
                 %table: tensor<13x5xi32, #dist.sharding<@m, [{"tp"}, {}]>>)
    -> tensor<4x3x5xi32, #dist.sharding<@m, [{"dp"}, {}, {}], partial = sum {"tp"}>> {
  %c13 = arith.constant 13 : i32
  %zero = arith.constant 0 : i32
  %e = tensor.empty() : tensor<4x3x5xi32, #dist.sharding<@m, [{"dp"}, {}, {}], partial = sum {"tp"}>>
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, j) -> (b, s)>, affine_map<(b, s, j) -> (b, s, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<4x3xi32, #dist.sharding<@m, [{"dp"}, {}]>>)
      outs(%e : tensor<4x3x5xi32, #dist.sharding<@m, [{"dp"}, {}, {}], partial = sum {"tp"}>>) {
  ^bb0(%id: i32, %out: i32):
    %m = arith.remsi %id, %c13 : i32
    %mp = arith.addi %m, %c13 : i32
    %isneg = arith.cmpi slt, %m, %zero : i32
    %row32 = arith.select %isneg, %mp, %m : i32
    %row = arith.index_cast %row32 : i32 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %table[%row, %j] : tensor<13x5xi32, #dist.sharding<@m, [{"tp"}, {}]>>
    linalg.yield %v : i32
  } -> tensor<4x3x5xi32, #dist.sharding<@m, [{"dp"}, {}, {}], partial = sum {"tp"}>>
  return %r : tensor<4x3x5xi32, #dist.sharding<@m, [{"dp"}, {}, {}], partial = sum {"tp"}>>
}
