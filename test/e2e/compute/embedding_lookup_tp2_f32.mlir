// An embedding lookup as exporters write it (torch-mlir's lowering of
// aten.embedding): a linalg.generic over the ids whose body reads the table
// with tensor.extract at the looked-up row. The table arrives split by
// vocabulary rows (PyTorch's RowwiseParallel on an nn.Embedding), the ids and
// the result by tokens. The table is small (16 x 4): gathering it whole
// once (an all-gather) is cheaper than looking it up vocabulary-parallel
// (gathering the ids, then reducing the looked-up rows), so each device
// then looks up its own tokens in the whole table
// (embedding_vocab_parallel_x4_f32.mlir runs the other choice).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 --input random:4 %s --dump %t
// RUN: %check_shards %s %t --input random:4
// RUN: dist-opt %s --dist-reshard-pipeline -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: planned {{.*}}: [all_gather {"tp"} dim 0
// EXPECT result0 = arg1[np.mod(arg0, 16)]
dist.mesh @tp = <["tp"=2]>
func.func @embed(%ids: tensor<8xi64, #dist.sharding<@tp, [{"tp"}]>>,
                 %table: tensor<16x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %c16 = arith.constant 16 : i64
  %zero64 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(t, j) -> (t)>, affine_map<(t, j) -> (t, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64, #dist.sharding<@tp, [{"tp"}]>>)
      outs(%e : tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) {
  ^bb0(%id: i64, %out: f32):
    // random ids are any i64: the row is id mod 16, as NumPy's mod (>= 0)
    %m = arith.remsi %id, %c16 : i64
    %mp = arith.addi %m, %c16 : i64
    %isneg = arith.cmpi slt, %m, %zero64 : i64
    %row64 = arith.select %isneg, %mp, %m : i64
    %row = arith.index_cast %row64 : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%row, %j] : tensor<16x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
    linalg.yield %v : f32
  } -> tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %r : tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}
