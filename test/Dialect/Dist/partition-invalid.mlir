// RUN: dist-opt %s -split-input-file --dist-partition -verify-diagnostics

dist.mesh @m = <["x"=4]>
func.func @unsupported(%a: tensor<4x4xf32, #dist.sharding<@m, [{}, {}]>>,
                       %i: tensor<2x1xindex, #dist.sharding<@m, [{}, {}]>>) -> tensor<2x4xf32, #dist.sharding<@m, [{}, {}]>> {
  // expected-error @+1 {{'tensor.gather' op cannot be partitioned: dist-partition handles ops with a partitioning model}}
  %v = tensor.gather %a[%i] gather_dims([0]) : (tensor<4x4xf32, #dist.sharding<@m, [{}, {}]>>, tensor<2x1xindex, #dist.sharding<@m, [{}, {}]>>) -> tensor<2x4xf32, #dist.sharding<@m, [{}, {}]>>
  return %v : tensor<2x4xf32, #dist.sharding<@m, [{}, {}]>>
}

// -----

dist.mesh @m = <["x"=4]>
// expected-error @+1 {{'func.func' op cannot be partitioned: argument #0 needs a tensor type with a #dist.sharding encoding}}
func.func @unsharded_argument(%a: tensor<4xf32>) -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  %n = linalg.map { math.exp } ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>)
  return %n : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

// Semantics §3c: each op computes on one mesh (a function's compute may
// span several meshes, cut into stages: partition-stages.mlir).
dist.mesh @a = <["x"=2]>
dist.mesh @b = <["x"=2]>
func.func @two_meshes(%a: tensor<4xf32, #dist.sharding<@a, [{"x"}]>>, %b: tensor<4xf32, #dist.sharding<@b, [{"x"}]>>)
    -> tensor<4xf32, #dist.sharding<@a, [{"x"}]>> {
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>
  // expected-error @+1 {{'linalg.map' op cannot be partitioned: it uses tensors on @a and @b (semantics §3c: each op computes on one mesh; a dist.reshard moves a tensor to another)}}
  %s = linalg.map { arith.addf } ins(%a, %b : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>, tensor<4xf32, #dist.sharding<@b, [{"x"}]>>)
                  outs(%e : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>)
  return %s : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>
}

// -----

// An op without layouts between two meshes.
dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
func.func @free_between(%a: tensor<4xf32, #dist.sharding<@a, [{"x"}]>>, %b: tensor<4xf32, #dist.sharding<@b, [{"x"}]>>)
    -> tensor<4xf32> {
  %ex = tensor.empty() : tensor<4xf32>
  %x = linalg.map { arith.negf } ins(%a : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>) outs(%ex : tensor<4xf32>)
  %y = linalg.map { arith.negf } ins(%b : tensor<4xf32, #dist.sharding<@b, [{"x"}]>>) outs(%ex : tensor<4xf32>)
  // expected-error @+1 {{'arith.addf' op cannot be partitioned: it exchanges values with ops on @a and @b (semantics §3c: each op computes on one mesh; a dist.reshard moves a tensor to another)}}
  %s = arith.addf %x, %y : tensor<4xf32>
  return %s : tensor<4xf32>
}

// -----

// A scalar computed on one stage's ranks is not there on another's.
dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
func.func @scalar_crossing(%a: tensor<4xf32, #dist.sharding<@a, [{}]>>, %b: tensor<4xf32, #dist.sharding<@b, [{"x"}]>>)
    -> tensor<4xf32, #dist.sharding<@b, [{"x"}]>> {
  %c0 = arith.constant 0 : index
  %s = tensor.extract %a[%c0] : tensor<4xf32, #dist.sharding<@a, [{}]>>
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@b, [{"x"}]>>
  // expected-error @+1 {{'linalg.fill' op cannot be partitioned: it uses a value computed on @a while it computes on @b (semantics §3c: values go from one mesh to another as tensors, through a dist.reshard)}}
  %f = linalg.fill ins(%s : f32) outs(%e : tensor<4xf32, #dist.sharding<@b, [{"x"}]>>) -> tensor<4xf32, #dist.sharding<@b, [{"x"}]>>
  %r = arith.addf %f, %b : tensor<4xf32, #dist.sharding<@b, [{"x"}]>>
  return %r : tensor<4xf32, #dist.sharding<@b, [{"x"}]>>
}

// -----

// A tensor that goes from one stage to a later one on the same mesh is a
// stage's result and a stage's argument: it needs a layout.
dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
func.func @free_between_stages(%a: tensor<4xf32, #dist.sharding<@a, [{"x"}]>>)
    -> tensor<4xf32, #dist.sharding<@a, [{"x"}]>> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{'linalg.map' op cannot be partitioned: its result goes from one stage to a later one on the same mesh without a layout (give it a #dist.sharding type)}}
  %n = linalg.map { arith.negf } ins(%a : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>) outs(%e : tensor<4xf32>)
  %to_b = dist.reshard %a : tensor<4xf32, #dist.sharding<@a, [{"x"}]>> -> tensor<4xf32, #dist.sharding<@b, [{"x"}]>>
  %m = math.exp %to_b : tensor<4xf32, #dist.sharding<@b, [{"x"}]>>
  %back = dist.reshard %m : tensor<4xf32, #dist.sharding<@b, [{"x"}]>> -> tensor<4xf32, #dist.sharding<@a, [{"x"}]>>
  %e2 = tensor.empty() : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>
  %r = linalg.map { arith.addf } ins(%n, %back : tensor<4xf32>, tensor<4xf32, #dist.sharding<@a, [{"x"}]>>) outs(%e2 : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>)
  return %r : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>
}

// -----

// Loops other than scf.for are not partitioned.
dist.mesh @m = <["x"=4]>
func.func @while_loop(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>, %go: i1)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  // expected-error @+1 {{'scf.while' op cannot be partitioned: dist-partition handles scf.for loops, not this region op}}
  %r = scf.while (%x = %a) : (tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
    scf.condition(%go) %x : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  } do {
  ^bb0(%x: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>):
    scf.yield %x : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  }
  return %r : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

// Slices need static sizes.
dist.mesh @m = <["x"=4]>
func.func @dynamic_slice(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>, %n: index) {
  // expected-error @+1 {{'tensor.extract_slice' op cannot be partitioned: its shapes are dynamic; dist-partition needs static shapes}}
  %s = tensor.extract_slice %a[0] [%n] [1] : tensor<8xf32, #dist.sharding<@m, [{"x"}]>> to tensor<?xf32>
  return
}

// -----

// Padding amounts must be static.
dist.mesh @m = <["x"=4]>
func.func @dynamic_pad(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>, %n: index) {
  %zero = arith.constant 0.0 : f32
  // expected-error @+1 {{'tensor.pad' op cannot be partitioned: its shapes are dynamic; dist-partition needs static shapes}}
  %p = tensor.pad %a low[%n] high[0] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<8xf32, #dist.sharding<@m, [{"x"}]>> to tensor<?xf32>
  return
}

// -----

// A layout on the signature must be a #dist.sharding that fits the tensor.
dist.mesh @m = <["x"=4]>
// expected-error @+1 {{'func.func' op argument 0 has 'dist.sharding' = "rows", which is not a #dist.sharding}}
func.func @not_a_sharding(%a: tensor<4xf32> {dist.sharding = "rows"}) -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  %c = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  return %c : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

dist.mesh @m = <["x"=4]>
// expected-error @+1 {{'func.func' op argument 0 sharding has 2 dim entries but the tensor has rank 1}}
func.func @wrong_rank(%a: tensor<4xf32> {dist.sharding = #dist.sharding<@m, [{"x"}, {}]>}) -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  %c = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  return %c : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

dist.mesh @m = <["x"=4]>
// expected-error @+1 {{'func.func' op result 0 has a layout both in its type and in 'dist.sharding'}}
func.func @twice(%a: tensor<4xf32, #dist.sharding<@m, [{"x"}]>>) -> (tensor<4xf32, #dist.sharding<@m, [{"x"}]>> {dist.sharding = #dist.sharding<@m, [{}]>}) {
  return %a : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

// Nothing names a mesh: the message says how to give one.
// expected-error @+1 {{cannot be partitioned: none of its tensors has a #dist.sharding type, so it has no mesh (give an argument or result a layout, in its type or as {dist.sharding = ...}, or let dist choose them all: attributes {dist.auto = @mesh})}}
func.func @no_mesh(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %c = linalg.copy ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %c : tensor<4xf32>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @op_layout_not_a_sharding(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'linalg.copy' op result has 'dist.sharding' = "rows", which is not a #dist.sharding}}
  %c = linalg.copy {dist.sharding = "rows"} ins(%a : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %e2 = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %r = linalg.copy ins(%c : tensor<8xf32>) outs(%e2 : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %r : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @op_layout_on_two_results(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = tensor.empty() : tensor<8xf32>
  // expected-error @+1 {{'linalg.generic' op has a layout ('dist.sharding') but 2 results; a layout belongs to an op of one tensor result}}
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"], dist.sharding = #dist.sharding<@m, [{"x"}]>}
      ins(%a : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) outs(%e, %e : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%v: f32, %o: f32, %p: f32):
    linalg.yield %v, %v : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  %e2 = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %c = linalg.copy ins(%r#0 : tensor<8xf32>) outs(%e2 : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %c : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @elided_constant(%a: tensor<4xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>> {
  // expected-error @+1 {{'arith.constant' op cannot be partitioned: its value, resource 'missing', is not in the module (was it printed with its constants elided?)}}
  %c = arith.constant dense_resource<missing> : tensor<4xf32>
  %e = tensor.empty() : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  %s = linalg.map { arith.addf } ins(%a, %c : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>, tensor<4xf32>)
                  outs(%e : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>)
  return %s : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
}

// -----

// A typo in a signature layout's axis: at the argument, with the mesh's axes.
dist.mesh @m = <["dp"=2, "tp"=2]>
func.func @signature_axis_typo(%w: tensor<8x8xf32>,
    // expected-error @+1 {{argument 1 of @signature_axis_typo uses axis "pt", which mesh @m does not have (its axes: "dp", "tp"; did you mean "tp"?)}}
    %x: tensor<8x8xf32> {dist.sharding = #dist.sharding<@m, [{"pt"}, {}]>})
    -> tensor<8x8xf32> attributes {dist.auto = @m} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x8xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  %m = linalg.matmul ins(%x, %w : tensor<8x8xf32>, tensor<8x8xf32>) outs(%f : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %m : tensor<8x8xf32>
}

// -----

// A batch dim an exporter left symbolic: said at the argument, before
// anything that reads its size.
dist.mesh @m = <["x"=2]>
// expected-error @+1 {{argument 0 of @dynamic_batch has the dynamic shape 'tensor<?x16xf32>'; dist-partition needs static shapes (compile once per shape: the front doors export the example's shapes)}}
func.func @dynamic_batch(%a: tensor<?x16xf32>, %w: tensor<16x8xf32, #dist.sharding<@m, [{}, {"x"}]>>) -> tensor<?x8xf32> attributes {dist.auto = @m} {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<?x16xf32>
  %e = tensor.empty(%n) : tensor<?x8xf32>
  %z = arith.constant 0.0 : f32
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x8xf32>) -> tensor<?x8xf32>
  %r = linalg.matmul ins(%a, %w : tensor<?x16xf32>, tensor<16x8xf32, #dist.sharding<@m, [{}, {"x"}]>>) outs(%f : tensor<?x8xf32>) -> tensor<?x8xf32>
  return %r : tensor<?x8xf32>
}

// -----

dist.mesh @m = <["x"=2]>
// expected-error @+1 {{'func.func' op result 0 has the dynamic shape 'tensor<?xf32>'; dist-partition needs static shapes}}
func.func @dynamic_result(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>, %n: index) -> tensor<?xf32> {
  %s = tensor.extract_slice %a[0] [%n] [1] : tensor<8xf32, #dist.sharding<@m, [{"x"}]>> to tensor<?xf32>
  return %s : tensor<?xf32>
}

// -----

// Auto-sharding chooses layouts on one mesh.
dist.mesh @a = <["x"=2], devices = [0, 1]>
dist.mesh @b = <["x"=2], devices = [2, 3]>
// expected-error @+1 {{'func.func' op cannot be partitioned: dist.auto chooses layouts on one mesh, but its compute uses @a and @b (semantics §3c: give the stages' arguments layouts)}}
func.func @auto_two_meshes(%a: tensor<4xf32, #dist.sharding<@a, [{"x"}]>>) -> tensor<4xf32, #dist.sharding<@b, [{"x"}]>>
    attributes {dist.auto = @a} {
  %n = arith.negf %a : tensor<4xf32, #dist.sharding<@a, [{"x"}]>>
  %r = dist.reshard %n : tensor<4xf32, #dist.sharding<@a, [{"x"}]>> -> tensor<4xf32, #dist.sharding<@b, [{"x"}]>>
  return %r : tensor<4xf32, #dist.sharding<@b, [{"x"}]>>
}
