// Lookups: a table a linalg body reads with tensor.extract at data rows (an
// embedding) becomes an input of the op (the lookup form: map 0 on the rows
// read by data, the loop on the others; its block argument unused), so that
// dist-partition places it like any operand. Splitting its rows (the
// vocabulary-parallel embedding) leaves the result a partial sum; gathering
// the table leaves it whole. The cheaper one is chosen.
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
// RUN: dist-opt %s --dist-reshard-pipeline -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=PLAN
// Every function proven optimal; the column split moves nothing; the
// vocabulary-parallel lookup's only moves are of its result (reduced, then
// gathered by the copy into a replicated result), the small table is
// gathered.
// PLAN: @vocab_parallel: proven optimal
// PLAN: @small_table: proven optimal
// PLAN: @column_split: proven optimal{{.*}}communication 0.000e+00 s
// PLAN: remark: planned {{.*}}: [reduce_scatter {"tp"} dim 1 sum
// PLAN-NOT: all_gather {"tp"} dim 0
// PLAN: remark: planned {{.*}}: [all_gather {"tp"} dim 1
// PLAN: remark: planned {{.*}}: [all_gather {"tp"} dim 0
dist.mesh @tp = <["tp"=4]>
dist.mesh @m = <["dp"=2, "tp"=2]>

// A Llama-sized vocabulary (32000 x 512 f32, 64 MiB) split by rows, as
// PyTorch's RowwiseParallel() splits an nn.Embedding: each device looks up
// its rows; the partial sums are reduced (4 KiB per token batch), never the
// table gathered (48 MiB per device).
// CHECK-LABEL: func @vocab_parallel
// CHECK-SAME: (%[[IDS:.*]]: tensor<2x8xi64, {{.*}}>, %[[TABLE:.*]]: tensor<32000x512xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
// CHECK: %[[E:.*]] = linalg.generic {indexing_maps = [#[[$IDS:.*]], #[[$ROWS:.*]], #[[$OUT:.*]]], {{.*}}} ins(%[[IDS]], %[[TABLE]] : {{.*}}, tensor<32000x512xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) outs({{.*}}) {
// CHECK-NEXT: ^bb0(%{{.*}}: i64, %{{.*}}: f32, %{{.*}}: f32):
// CHECK: tensor.extract %[[TABLE]][
// CHECK: } -> tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}], partial = sum {"tp"}>>
func.func @vocab_parallel(%ids: tensor<2x8xi64, #dist.sharding<@tp, [{}, {}]>>,
                          %table: tensor<32000x512xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}]>> {
  %e = tensor.empty() : tensor<2x8x512xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, j) -> (b, s)>, affine_map<(b, s, j) -> (b, s, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<2x8xi64, #dist.sharding<@tp, [{}, {}]>>) outs(%e : tensor<2x8x512xf32>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %table[%row, %j] : tensor<32000x512xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
    linalg.yield %v : f32
  } -> tensor<2x8x512xf32>
  %c = tensor.empty() : tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}]>>
  %o = linalg.copy ins(%r : tensor<2x8x512xf32>) outs(%c : tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}]>>) -> tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}]>>
  return %o : tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}]>>
}

// A small table (16 x 4) split by rows is cheaper to gather once (one
// step) than to reduce every looked-up row: the lookup reads it whole.
// CHECK-LABEL: func @small_table
// CHECK: %[[WHOLE:.*]] = dist.reshard %{{.*}} -> tensor<16x4xf32, #dist.sharding<@tp, [{}, {}]>>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[WHOLE]] :
// CHECK: tensor.extract %[[WHOLE]][
// CHECK: } -> tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
func.func @small_table(%ids: tensor<8xi64, #dist.sharding<@tp, [{"tp"}]>>,
                       %table: tensor<16x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %e = tensor.empty() : tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(t, j) -> (t)>, affine_map<(t, j) -> (t, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64, #dist.sharding<@tp, [{"tp"}]>>)
      outs(%e : tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%row, %j] : tensor<16x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
    linalg.yield %v : f32
  } -> tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %r : tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}

// The table split by columns (ColwiseParallel on an nn.Embedding): the
// column loop splits alike, and each device reads its columns of every row;
// nothing moves. On a 2-D mesh the ids stay split by batch over "dp".
// CHECK-LABEL: func @column_split
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<4x6xi64, #dist.sharding<@m, [{"dp"}, {}]>>, tensor<100x8xbf16, #dist.sharding<@m, [{}, {"tp"}]>>)
// CHECK: } -> tensor<4x6x8xbf16, #dist.sharding<@m, [{"dp"}, {}, {"tp"}]>>
// CHECK-NOT: dist.reshard
func.func @column_split(%ids: tensor<4x6xi64, #dist.sharding<@m, [{"dp"}, {}]>>,
                        %table: tensor<100x8xbf16, #dist.sharding<@m, [{}, {"tp"}]>>)
    -> tensor<4x6x8xbf16, #dist.sharding<@m, [{"dp"}, {}, {"tp"}]>> {
  %e = tensor.empty() : tensor<4x6x8xbf16, #dist.sharding<@m, [{"dp"}, {}, {"tp"}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, j) -> (b, s)>, affine_map<(b, s, j) -> (b, s, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<4x6xi64, #dist.sharding<@m, [{"dp"}, {}]>>)
      outs(%e : tensor<4x6x8xbf16, #dist.sharding<@m, [{"dp"}, {}, {"tp"}]>>) {
  ^bb0(%id: i64, %out: bf16):
    %row = arith.index_cast %id : i64 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %table[%row, %j] : tensor<100x8xbf16, #dist.sharding<@m, [{}, {"tp"}]>>
    linalg.yield %v : bf16
  } -> tensor<4x6x8xbf16, #dist.sharding<@m, [{"dp"}, {}, {"tp"}]>>
  return %r : tensor<4x6x8xbf16, #dist.sharding<@m, [{"dp"}, {}, {"tp"}]>>
}

// A body that does more with the looked-up value than convert it (here a
// scale) is not a lookup whose rows may be split: here the table moves to
// a column split instead (an all-to-all), and the columns are looked up.
// CHECK-LABEL: func @scaled_lookup
// CHECK: %[[COLS:.*]] = dist.reshard %{{.*}} -> tensor<32000x512xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
// CHECK: tensor.extract %[[COLS]][
func.func @scaled_lookup(%ids: tensor<2x8xi64, #dist.sharding<@tp, [{}, {}]>>,
                         %table: tensor<32000x512xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}]>> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(b, s, j) -> (b, s)>, affine_map<(b, s, j) -> (b, s, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<2x8xi64, #dist.sharding<@tp, [{}, {}]>>) outs(%e : tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}]>>) {
  ^bb0(%id: i64, %out: f32):
    %row = arith.index_cast %id : i64 to index
    %j = linalg.index 2 : index
    %v = tensor.extract %table[%row, %j] : tensor<32000x512xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
    %s = arith.mulf %v, %two : f32
    linalg.yield %s : f32
  } -> tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}]>>
  return %r : tensor<2x8x512xf32, #dist.sharding<@tp, [{}, {}, {}]>>
}

// An index that mixes a loop position with data (a window into the table)
// is not a lookup: the table is copied whole before the op, as any tensor a
// body reads.
// CHECK-LABEL: func @not_a_lookup
// CHECK: %[[COPY:.*]] = linalg.copy ins(%{{.*}} : tensor<16x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
// CHECK: %[[WHOLE:.*]] = dist.reshard %[[COPY]] {{.*}} -> tensor<16x4xf32, #dist.sharding<@tp, [{}, {}]>>
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<8xi64, {{.*}}>) outs(
// CHECK: tensor.extract %[[WHOLE]][
func.func @not_a_lookup(%ids: tensor<8xi64, #dist.sharding<@tp, [{"tp"}]>>,
                        %table: tensor<16x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %e = tensor.empty() : tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(t, j) -> (t)>, affine_map<(t, j) -> (t, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<8xi64, #dist.sharding<@tp, [{"tp"}]>>)
      outs(%e : tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) {
  ^bb0(%id: i64, %out: f32):
    %t = linalg.index 0 : index
    %row0 = arith.index_cast %id : i64 to index
    %row = arith.addi %row0, %t : index
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%row, %j] : tensor<16x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
    linalg.yield %v : f32
  } -> tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %r : tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}
