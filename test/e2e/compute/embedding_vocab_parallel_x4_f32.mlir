// A vocabulary-parallel embedding lookup: the table arrives split by rows
// over "tp" (30 rows on 4 devices: blocks of 8, the last holding 6), each
// device looks up the ids that fall in its rows and contributes zero for
// the others, and the result is a partial sum over "tp" (result0, as its
// type binds) or, reduced, replicated (result1). No device ever holds the
// whole table. The ids are any i64 (random inputs): the row is id mod 30,
// as NumPy's mod (>= 0).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:5 %s --dump %t
// RUN: %check_shards %s %t --input random:5
// RUN: dist-opt %s --dist-reshard-pipeline -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// CHECK-NOT: all_gather
// CHECK: remark: planned {{.*}}: [all_reduce {"tp"}
// EXPECT result0 = arg1[np.mod(arg0, 30)]
// EXPECT result1 = arg1[np.mod(arg0, 30)]
dist.mesh @tp = <["tp"=4]>
func.func @embed(%ids: tensor<2x8xi64, #dist.sharding<@tp, [{}, {}]>>,
                 %table: tensor<30x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> (tensor<2x8x4xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>>,
        tensor<2x8x4xf32, #dist.sharding<@tp, [{}, {}, {}]>>) {
  %c30 = arith.constant 30 : i64
  %zero64 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<2x8x4xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>>
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, j) -> (b, s)>, affine_map<(b, s, j) -> (b, s, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<2x8xi64, #dist.sharding<@tp, [{}, {}]>>)
      outs(%e : tensor<2x8x4xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>>) {
  ^bb0(%id: i64, %out: f32):
    %m = arith.remsi %id, %c30 : i64
    %mp = arith.addi %m, %c30 : i64
    %isneg = arith.cmpi slt, %m, %zero64 : i64
    %row64 = arith.select %isneg, %mp, %m : i64
    %row = arith.index_cast %row64 : i64 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %table[%row, %j] : tensor<30x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
    linalg.yield %v : f32
  } -> tensor<2x8x4xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>>
  %full = dist.reshard %r : tensor<2x8x4xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>>
                         -> tensor<2x8x4xf32, #dist.sharding<@tp, [{}, {}, {}]>>
  return %r, %full : tensor<2x8x4xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>>,
                     tensor<2x8x4xf32, #dist.sharding<@tp, [{}, {}, {}]>>
}
