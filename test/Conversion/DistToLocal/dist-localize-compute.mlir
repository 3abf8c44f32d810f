// RUN: dist-opt %s --dist-localize | FileCheck %s
// RUN: dist-opt %s --dist-localize | dist-opt --verify-roundtrip > /dev/null

dist.mesh @m = <["x"=4]>

// Partitioned compute runs unchanged on the local blocks: only the types
// change (10 columns over 4 devices: blocks of 3).
// CHECK-LABEL: func @elementwise
// CHECK-SAME: (%[[A:.*]]: tensor<3x3xf32>) -> tensor<3x3xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[A]] : tensor<3x3xf32>) outs(%[[E]] : tensor<3x3xf32>)
// CHECK: math.exp
// CHECK-NOT: dist.local.shard_index
func.func @elementwise(%a: tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>> {
  %e = tensor.empty() : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %x = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>)
      outs(%e : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>) {
    ^bb0(%in: f32, %out: f32):
      %r = math.exp %in : f32
      linalg.yield %r : f32
  } -> tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
  return %x : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>
}

// A reduction over the unevenly split dim skips the padded iterations:
// valid = clamp(10 - s * 3, 0, 3) with s this device's shard index, and the
// body keeps its accumulator past it.
// CHECK-LABEL: func @masked_sum
// CHECK: %[[S:.*]] = dist.local.shard_index on @m axes = ["x"] : index
// CHECK: %[[START:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK: %[[LEFT:.*]] = arith.subi %{{.*}}, %[[START]] : index
// CHECK: %[[UP:.*]] = arith.minsi %[[LEFT]], %{{.*}} : index
// CHECK: %[[VALID:.*]] = arith.maxsi %[[UP]], %{{.*}} : index
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK: %[[SUM:.*]] = arith.addf %[[ACC]], %[[IN]] : f32
// CHECK: %[[I:.*]] = linalg.index 1 : index
// CHECK: %[[INSIDE:.*]] = arith.cmpi slt, %[[I]], %[[VALID]] : index
// CHECK: %[[KEEP:.*]] = arith.select %[[INSIDE]], %[[SUM]], %[[ACC]] : f32
// CHECK: linalg.yield %[[KEEP]] : f32
// CHECK: } -> tensor<3xf32>
func.func @masked_sum(%a: tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>,
                      %init: tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>)
    -> tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>> {
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<3x10xf32, #dist.sharding<@m, [{}, {"x"}]>>)
      outs(%init : tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) {
    ^bb0(%in: f32, %acc: f32):
      %r = arith.addf %acc, %in : f32
      linalg.yield %r : f32
  } -> tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  return %s : tensor<3xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
}

// A named contraction over an unevenly split dim is generalized to be
// masked.
// CHECK-LABEL: func @masked_matmul
// CHECK: dist.local.shard_index on @m axes = ["x"]
// CHECK: linalg.generic
// CHECK: linalg.index 2 : index
// CHECK: arith.select
// CHECK: } -> tensor<2x2xf32>
func.func @masked_matmul(%a: tensor<2x6xf32, #dist.sharding<@m, [{}, {"x"}]>>,
                         %b: tensor<6x2xf32, #dist.sharding<@m, [{"x"}, {}]>>,
                         %c: tensor<2x2xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>)
    -> tensor<2x2xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>> {
  %r = linalg.matmul ins(%a, %b : tensor<2x6xf32, #dist.sharding<@m, [{}, {"x"}]>>, tensor<6x2xf32, #dist.sharding<@m, [{"x"}, {}]>>)
                     outs(%c : tensor<2x2xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>)
                     -> tensor<2x2xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>
  return %r : tensor<2x2xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>
}

// A reshape view reshapes each device's block in place: the fused QKV rows
// [Q_r; K_r; V_r] (3 x 2 rows of 8) are the expanded heads' block, and back.
// CHECK-LABEL: func @expand_view
// CHECK-SAME: (%[[W:.*]]: tensor<6x8xf32>) -> tensor<3x2x8xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[W]] {{\[}}[0, 1], [2]] output_shape [3, 2, 8] : tensor<6x8xf32> into tensor<3x2x8xf32>
// CHECK: return %[[E]]
// CHECK-LABEL: func @collapse_view
// CHECK-SAME: (%[[H:.*]]: tensor<3x2x8xf32>) -> tensor<6x8xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[H]] {{\[}}[0, 1], [2]] : tensor<3x2x8xf32> into tensor<6x8xf32>
// CHECK: return %[[C]]
dist.mesh @tp = <["tp"=4]>
func.func @expand_view(%w: tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [8, 8, 8], {}]>>)
    -> tensor<3x8x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> {
  %e = tensor.expand_shape %w [[0, 1], [2]] output_shape [3, 8, 8] : tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [8, 8, 8], {}]>> into tensor<3x8x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
  return %e : tensor<3x8x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
}
func.func @collapse_view(%h: tensor<3x8x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>)
    -> tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [8, 8, 8], {}]>> {
  %c = tensor.collapse_shape %h [[0, 1], [2]] : tensor<3x8x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> into tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [8, 8, 8], {}]>>
  return %c : tensor<24x8xf32, #dist.sharding<@tp, [{"tp"} segments [8, 8, 8], {}]>>
}

// A unit dim split with padding (one device holds the row, the others pad)
// expands to unit dims that may carry the axis on either one: both hold the
// same bytes, so both are views (the program fuzzer's seed 800025, where
// dist-partition paired them from the result side).
// CHECK-LABEL: func @expand_unit_group_outer
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 1, 8] : tensor<1x8xi64> into tensor<1x1x8xi64>
// CHECK-LABEL: func @expand_unit_group_inner
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2]] output_shape [1, 1, 8] : tensor<1x8xi64> into tensor<1x1x8xi64>
func.func @expand_unit_group_outer(%v: tensor<1x8xi64, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<1x1x8xi64, #dist.sharding<@tp, [{"tp"}, {}, {}]>> {
  %e = tensor.expand_shape %v [[0, 1], [2]] output_shape [1, 1, 8] : tensor<1x8xi64, #dist.sharding<@tp, [{"tp"}, {}]>> into tensor<1x1x8xi64, #dist.sharding<@tp, [{"tp"}, {}, {}]>>
  return %e : tensor<1x1x8xi64, #dist.sharding<@tp, [{"tp"}, {}, {}]>>
}
func.func @expand_unit_group_inner(%v: tensor<1x8xi64, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<1x1x8xi64, #dist.sharding<@tp, [{}, {"tp"}, {}]>> {
  %e = tensor.expand_shape %v [[0, 1], [2]] output_shape [1, 1, 8] : tensor<1x8xi64, #dist.sharding<@tp, [{"tp"}, {}]>> into tensor<1x1x8xi64, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
  return %e : tensor<1x1x8xi64, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
}

// linalg.index of a split loop yields the global index: the local one plus
// this device's block offset s * 3 (10 rows over 4 devices).
// CHECK-LABEL: func @global_index
// CHECK: %[[S:.*]] = dist.local.shard_index on @m axes = ["x"] : index
// CHECK: linalg.generic
// CHECK: %[[LOCAL:.*]] = linalg.index 0 : index
// CHECK: %[[B:.*]] = arith.constant 3 : index
// CHECK: %[[OFF:.*]] = arith.muli %[[S]], %[[B]] : index
// CHECK: %[[GLOBAL:.*]] = arith.addi %[[LOCAL]], %[[OFF]] : index
// CHECK: arith.index_cast %[[GLOBAL]] : index to i32
// CHECK: } -> tensor<3x2xi32>
func.func @global_index(%a: tensor<10x2xi32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> tensor<10x2xi32, #dist.sharding<@m, [{"x"}, {}]>> {
  %e = tensor.empty() : tensor<10x2xi32, #dist.sharding<@m, [{"x"}, {}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<10x2xi32, #dist.sharding<@m, [{"x"}, {}]>>)
      outs(%e : tensor<10x2xi32, #dist.sharding<@m, [{"x"}, {}]>>) {
    ^bb0(%in: i32, %out: i32):
      %i = linalg.index 0 : index
      %v = arith.index_cast %i : index to i32
      %r = arith.addi %in, %v : i32
      linalg.yield %r : i32
  } -> tensor<10x2xi32, #dist.sharding<@m, [{"x"}, {}]>>
  return %r : tensor<10x2xi32, #dist.sharding<@m, [{"x"}, {}]>>
}

// On an interleaved dim (segments [8, 4, 4] over 4 devices: local rows
// [0, 2) of segment 0, [2, 3) of segment 1, [3, 4) of segment 2) the global
// index is chosen by the segment the local row lies in:
// segment i at local lo_i holds start_i + s * B_i + (local - lo_i).
// CHECK-LABEL: func @global_index_segments
// CHECK: %[[S:.*]] = dist.local.shard_index on @m axes = ["x"] : index
// CHECK: ^bb0
// CHECK: %[[LOCAL:.*]] = linalg.index 0 : index
// CHECK: %[[S2:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK: %[[OFF2:.*]] = arith.addi %[[S2]], %{{.*}} : index
// CHECK: %[[SEG2:.*]] = arith.addi %[[LOCAL]], %[[OFF2]] : index
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[IN1:.*]] = arith.cmpi slt, %[[LOCAL]], %[[C3]] : index
// CHECK: %[[S1:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK: %[[C6:.*]] = arith.constant 6 : index
// CHECK: %[[OFF1:.*]] = arith.addi %[[S1]], %[[C6]] : index
// CHECK: %[[SEG1:.*]] = arith.addi %[[LOCAL]], %[[OFF1]] : index
// CHECK: %[[PICK1:.*]] = arith.select %[[IN1]], %[[SEG1]], %[[SEG2]] : index
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: %[[IN0:.*]] = arith.cmpi slt, %[[LOCAL]], %[[C2]] : index
// CHECK: %[[S0:.*]] = arith.muli %[[S]], %{{.*}} : index
// CHECK: %[[SEG0:.*]] = arith.addi %[[LOCAL]], %[[S0]] : index
// CHECK: %[[GLOBAL:.*]] = arith.select %[[IN0]], %[[SEG0]], %[[PICK1]] : index
// CHECK: arith.index_cast %[[GLOBAL]] : index to i32
// CHECK: } -> tensor<4xi32>
func.func @global_index_segments(%a: tensor<16xi32, #dist.sharding<@m, [{"x"} segments [8, 4, 4]]>>)
    -> tensor<16xi32, #dist.sharding<@m, [{"x"} segments [8, 4, 4]]>> {
  %e = tensor.empty() : tensor<16xi32, #dist.sharding<@m, [{"x"} segments [8, 4, 4]]>>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<16xi32, #dist.sharding<@m, [{"x"} segments [8, 4, 4]]>>)
      outs(%e : tensor<16xi32, #dist.sharding<@m, [{"x"} segments [8, 4, 4]]>>) {
    ^bb0(%in: i32, %out: i32):
      %i = linalg.index 0 : index
      %v = arith.index_cast %i : index to i32
      linalg.yield %v : i32
  } -> tensor<16xi32, #dist.sharding<@m, [{"x"} segments [8, 4, 4]]>>
  return %r : tensor<16xi32, #dist.sharding<@m, [{"x"} segments [8, 4, 4]]>>
}

// Segment 1 of [8, 4, 4] over 4 devices is local rows [2, 3) of every
// block; a dim without axes keeps its offset.
// CHECK-LABEL: func @slice_segment
// CHECK-SAME: (%[[W:.*]]: tensor<4x6xf32>) -> tensor<1x3xf32>
// CHECK: %[[K:.*]] = tensor.extract_slice %[[W]][2, 1] [1, 3] [1, 1] : tensor<4x6xf32> to tensor<1x3xf32>
// CHECK: return %[[K]]
func.func @slice_segment(%w: tensor<16x6xf32, #dist.sharding<@m, [{"x"} segments [8, 4, 4], {}]>>)
    -> tensor<4x3xf32, #dist.sharding<@m, [{"x"}, {}]>> {
  %k = tensor.extract_slice %w[8, 1] [4, 3] [1, 1] : tensor<16x6xf32, #dist.sharding<@m, [{"x"} segments [8, 4, 4], {}]>> to tensor<4x3xf32, #dist.sharding<@m, [{"x"}, {}]>>
  return %k : tensor<4x3xf32, #dist.sharding<@m, [{"x"}, {}]>>
}

// Padding a split dim pads every block by ceil(low / 4) and ceil(high / 4).
// CHECK-LABEL: func @pad_blocks
// CHECK-SAME: (%[[A:.*]]: tensor<2xf32>) -> tensor<4xf32>
// CHECK: tensor.pad %[[A]] low[1] high[1]
// CHECK: } : tensor<2xf32> to tensor<4xf32>
func.func @pad_blocks(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<13xf32, #dist.sharding<@m, [{"x"} segments [3, 8, 2]]>> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %a low[3] high[2] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<8xf32, #dist.sharding<@m, [{"x"}]>> to tensor<13xf32, #dist.sharding<@m, [{"x"} segments [3, 8, 2]]>>
  return %p : tensor<13xf32, #dist.sharding<@m, [{"x"} segments [3, 8, 2]]>>
}

// A lookup form (dist-partition's, TableReads.h) whose table rows are split
// (30 rows over 4 devices: blocks of 8, 6 on the last) and whose columns
// follow the column loop: the per-device op drops the table input and
// reads the local table at the local row (id - 8 s, clamped into the
// block), contributing -0.0 for ids outside [8 s, 8 s + count); the column
// index is the loop's local position.
// CHECK-LABEL: func @lookup_rows_split
// CHECK-SAME: (%[[IDS:.*]]: tensor<6xi64>, %[[T:.*]]: tensor<8x4xf32>) -> tensor<6x4xf32>
// CHECK: %[[S:.*]] = dist.local.shard_index on @m axes = ["x"] : index
// CHECK: %[[FIRST:.*]] = arith.muli %[[S]], %c8
// CHECK: %[[COUNT:.*]] = arith.maxsi
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], {{.*}}} ins(%[[IDS]] : tensor<6xi64>) outs(%{{.*}} : tensor<6x4xf32>)
// CHECK: ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[ROW:.*]] = arith.index_cast %[[ID]]
// CHECK: %[[COL:.*]] = linalg.index 1 : index
// CHECK: %[[OFF:.*]] = arith.subi %[[ROW]], %[[FIRST]]
// CHECK: %[[GE:.*]] = arith.cmpi sge, %[[OFF]], %[[ZERO:.*]] : index
// CHECK: %[[LT:.*]] = arith.cmpi slt, %[[OFF]], %[[COUNT]]
// CHECK: %[[IN:.*]] = arith.andi %[[GE]], %[[LT]]
// CHECK: %[[SAFE:.*]] = arith.select %[[IN]], %[[OFF]], %[[ZERO]]
// CHECK: %[[V:.*]] = tensor.extract %[[T]][%[[SAFE]], %[[COL]]] : tensor<8x4xf32>
// CHECK: %[[NEG0:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[R:.*]] = arith.select %[[IN]], %[[V]], %[[NEG0]]
// CHECK: linalg.yield %[[R]]
func.func @lookup_rows_split(%ids: tensor<6xi64, #dist.sharding<@m, [{}]>>,
                             %t: tensor<30x4xf32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> tensor<6x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>> {
  %e = tensor.empty() : tensor<6x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (0, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids, %t : tensor<6xi64, #dist.sharding<@m, [{}]>>, tensor<30x4xf32, #dist.sharding<@m, [{"x"}, {}]>>)
      outs(%e : tensor<6x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>) {
  ^bb0(%id: i64, %unused: f32, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %t[%row, %j] : tensor<30x4xf32, #dist.sharding<@m, [{"x"}, {}]>>
    linalg.yield %v : f32
  } -> tensor<6x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>
  return %r : tensor<6x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>
}

// The table split by columns as the column loop: the local table is read
// at the local column, the row as the data says; nothing is masked.
// CHECK-LABEL: func @lookup_columns_split
// CHECK-SAME: (%[[IDS:.*]]: tensor<6xi64>, %[[T:.*]]: tensor<30x1xf32>) -> tensor<6x1xf32>
// CHECK-NOT: dist.local.shard_index
// CHECK: ^bb0(%[[ID:.*]]: i64, %{{.*}}: f32):
// CHECK: %[[ROW:.*]] = arith.index_cast %[[ID]]
// CHECK: %[[COL:.*]] = linalg.index 1 : index
// CHECK: %[[V:.*]] = tensor.extract %[[T]][%[[ROW]], %[[COL]]] : tensor<30x1xf32>
// CHECK-NEXT: linalg.yield %[[V]]
func.func @lookup_columns_split(%ids: tensor<6xi64, #dist.sharding<@m, [{}]>>,
                                %t: tensor<30x4xf32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> tensor<6x4xf32, #dist.sharding<@m, [{}, {"x"}]>> {
  %e = tensor.empty() : tensor<6x4xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (0, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids, %t : tensor<6xi64, #dist.sharding<@m, [{}]>>, tensor<30x4xf32, #dist.sharding<@m, [{}, {"x"}]>>)
      outs(%e : tensor<6x4xf32, #dist.sharding<@m, [{}, {"x"}]>>) {
  ^bb0(%id: i64, %unused: f32, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %t[%row, %j] : tensor<30x4xf32, #dist.sharding<@m, [{}, {"x"}]>>
    linalg.yield %v : f32
  } -> tensor<6x4xf32, #dist.sharding<@m, [{}, {"x"}]>>
  return %r : tensor<6x4xf32, #dist.sharding<@m, [{}, {"x"}]>>
}
