// RUN: dist-opt %s --dist-localize --split-input-file -verify-diagnostics

dist.mesh @m = <["x"=4]>
func.func @reshard_left(%a: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<16xf32, #dist.sharding<@m, [{}]>> {
  // expected-error @+1 {{'dist.reshard' op must be lowered first: run dist-lower-reshard before dist-localize}}
  %b = dist.reshard %a : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xf32, #dist.sharding<@m, [{}]>>
  return %b : tensor<16xf32, #dist.sharding<@m, [{}]>>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @compute_on_sharded(%a: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<16xf32, #dist.sharding<@m, [{"x"}]>> {
  // expected-error @+1 {{'arith.addf' op cannot be localized: dist-localize rewrites dist collectives, calls, returns, loops and the compute dist-partition produces (ops with a partitioning model) on sharded tensors; run dist-partition first}}
  %b = arith.addf %a, %a : tensor<16xf32, #dist.sharding<@m, [{"x"}]>>
  return %b : tensor<16xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

// Unknown meshes and axes in a signature: the verifier reports them before
// the pass runs (test/Dialect/Dist/invalid.mlir has the other places).
dist.mesh @m = <["x"=4]>
// expected-error @+1 {{argument 0 of @unknown_mesh refers to unknown mesh @nowhere}}
func.func @unknown_mesh(%a: tensor<16xf32, #dist.sharding<@nowhere, [{"x"}]>>) {
  return
}

// -----

dist.mesh @m = <["x"=4]>
// expected-error @+1 {{argument 0 of @unknown_axis: mesh @m has no axis "q"}}
func.func @unknown_axis(%a: tensor<16xf32, #dist.sharding<@m, [{"q"}]>>) {
  return
}

// -----

dist.mesh @tp = <["tp"=4]>
func.func @reshape_not_a_view(%a: tensor<12x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) -> tensor<3x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> {
  // expected-error @+1 {{'tensor.expand_shape' op is not a view of its operand's layout [{"tp"}, {}]: dim 0: axis "tp" would split a reshaped dim (extent 3) that its major axes split into only 1 parts; a block is then not one run of the flattened dim (dist-partition reshards the operand first)}}
  %b = tensor.expand_shape %a [[0, 1], [2]] output_shape [3, 4, 8] : tensor<12x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>> into tensor<3x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
  return %b : tensor<3x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
}

// -----

dist.mesh @tp = <["tp"=4]>
func.func @reshape_other_layout(%a: tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) -> tensor<4x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> {
  // expected-error @+1 {{'tensor.expand_shape' op is not a view: the operand's layout [{"tp"}, {}] reshapes to [{"tp"}, {}, {}], not [{}, {"tp"}, {}] (dist-partition reshards where needed)}}
  %b = tensor.expand_shape %a [[0, 1], [2]] output_shape [4, 4, 8] : tensor<16x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>> into tensor<4x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
  return %b : tensor<4x4x8xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>
}

// -----

dist.mesh @tp = <["tp"=4]>
func.func @reshape_half_sharded(%a: tensor<4x4x8xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>) -> tensor<16x8xf32> {
  // expected-error @+1 {{'tensor.collapse_shape' op cannot be localized: a reshape needs its operand and result sharded on the same mesh}}
  %b = tensor.collapse_shape %a [[0, 1], [2]] : tensor<4x4x8xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>> into tensor<16x8xf32>
  return %b : tensor<16x8xf32>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @misaligned_slice(%a: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  // expected-error @+1 {{'tensor.extract_slice' op cannot be localized: the slice is not aligned with the blocks of its split dims (dist-partition reshards it into a layout where it is)}}
  %p = tensor.extract_slice %a[3] [8] [1] : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> to tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %p : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @slice_layout(%w: tensor<16xf32, #dist.sharding<@m, [{"x"} segments [8, 4, 4]]>>)
    -> tensor<4xf32, #dist.sharding<@m, [{}]>> {
  // expected-error @+1 {{'tensor.extract_slice' op cannot be localized: the slice of layout [{"x"} segments [8, 4, 4]] is [{"x"}], not [{}]}}
  %k = tensor.extract_slice %w[8] [4] [1] : tensor<16xf32, #dist.sharding<@m, [{"x"} segments [8, 4, 4]]>> to tensor<4xf32, #dist.sharding<@m, [{}]>>
  return %k : tensor<4xf32, #dist.sharding<@m, [{}]>>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @pad_layout(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<11xf32, #dist.sharding<@m, [{"x"}]>> {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' op cannot be localized: its operands' layouts give the result [{"x"} segments [2, 8, 1]], not [{"x"}]}}
  %p = tensor.pad %a low[2] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<8xf32, #dist.sharding<@m, [{"x"}]>> to tensor<11xf32, #dist.sharding<@m, [{"x"}]>>
  return %p : tensor<11xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @concat_layout(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>, %b: tensor<4xf32, #dist.sharding<@m, [{}]>>)
    -> tensor<12xf32, #dist.sharding<@m, [{"x"}]>> {
  // expected-error @+1 {{'tensor.concat' op cannot be localized: its operands are not split alike}}
  %c = tensor.concat dim(0) %a, %b : (tensor<8xf32, #dist.sharding<@m, [{"x"}]>>, tensor<4xf32, #dist.sharding<@m, [{}]>>) -> tensor<12xf32, #dist.sharding<@m, [{"x"}]>>
  return %c : tensor<12xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

// A lookup whose table rows are split must yield a partial sum over the
// rows' axes: each device finds only the ids in its rows.
dist.mesh @m = <["x"=4]>
func.func @lookup_rows_not_partial(%ids: tensor<6xi64, #dist.sharding<@m, [{}]>>,
                                   %t: tensor<30x4xf32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> tensor<6x4xf32, #dist.sharding<@m, [{}, {}]>> {
  %e = tensor.empty() : tensor<6x4xf32, #dist.sharding<@m, [{}, {}]>>
  // expected-error @+1 {{'linalg.generic' op cannot be localized: the table it looks up (operand #1) has its rows (dim 0 of 2) split, so each device finds only the ids in its rows: every result must be a partial sum over those axes}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (0, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids, %t : tensor<6xi64, #dist.sharding<@m, [{}]>>, tensor<30x4xf32, #dist.sharding<@m, [{"x"}, {}]>>)
      outs(%e : tensor<6x4xf32, #dist.sharding<@m, [{}, {}]>>) {
  ^bb0(%id: i64, %unused: f32, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %t[%row, %j] : tensor<30x4xf32, #dist.sharding<@m, [{"x"}, {}]>>
    linalg.yield %v : f32
  } -> tensor<6x4xf32, #dist.sharding<@m, [{}, {}]>>
  return %r : tensor<6x4xf32, #dist.sharding<@m, [{}, {}]>>
}

// -----

// ... and its body must be a plain lookup (a scale would be summed too).
dist.mesh @m = <["x"=4]>
func.func @lookup_rows_scaled(%ids: tensor<6xi64, #dist.sharding<@m, [{}]>>,
                              %t: tensor<30x4xf32, #dist.sharding<@m, [{"x"}, {}]>>)
    -> tensor<6x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<6x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>
  // expected-error @+1 {{'linalg.generic' op cannot be localized: the table it looks up (operand #1) has its rows split, which needs every result to be the looked-up value}}
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (0, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%ids, %t : tensor<6xi64, #dist.sharding<@m, [{}]>>, tensor<30x4xf32, #dist.sharding<@m, [{"x"}, {}]>>)
      outs(%e : tensor<6x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>) {
  ^bb0(%id: i64, %unused: f32, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %t[%row, %j] : tensor<30x4xf32, #dist.sharding<@m, [{"x"}, {}]>>
    %s = arith.addf %v, %one : f32
    linalg.yield %s : f32
  } -> tensor<6x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>
  return %r : tensor<6x4xf32, #dist.sharding<@m, [{}, {}], partial = sum {"x"}>>
}

// -----

// A split tensor a body reads from outside, not in the lookup form: the
// local body would read the local block at global positions.
dist.mesh @m = <["x"=4]>
func.func @captured_split(%ids: tensor<6xi64, #dist.sharding<@m, [{}]>>,
                          %t: tensor<32xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<6xf32, #dist.sharding<@m, [{}]>> {
  %e = tensor.empty() : tensor<6xf32, #dist.sharding<@m, [{}]>>
  // expected-error @+1 {{'linalg.generic' op cannot be localized: its body reads a tensor defined outside it (by `tensor.extract`); pass it as an input of the op instead (dist-partition does, or reads it whole)}}
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                       iterator_types = ["parallel"]}
      ins(%ids : tensor<6xi64, #dist.sharding<@m, [{}]>>)
      outs(%e : tensor<6xf32, #dist.sharding<@m, [{}]>>) {
  ^bb0(%id: i64, %o: f32):
    %row = arith.index_cast %id : i64 to index
    %v = tensor.extract %t[%row] : tensor<32xf32, #dist.sharding<@m, [{"x"}]>>
    linalg.yield %v : f32
  } -> tensor<6xf32, #dist.sharding<@m, [{}]>>
  return %r : tensor<6xf32, #dist.sharding<@m, [{}]>>
}
