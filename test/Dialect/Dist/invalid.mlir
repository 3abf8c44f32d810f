// RUN: dist-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

//===----------------------------------------------------------------------===//
// dist.mesh
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'dist.mesh' op mesh axis "x" appears more than once}}
dist.mesh @m = <["x"=2, "x"=4]>

// -----

// expected-error @+1 {{mesh axis "x" has size 0; sizes must be at least 1}}
dist.mesh @m = <["x"=0]>

// -----

// expected-error @+1 {{mesh axis "y" has size -4; sizes must be at least 1}}
dist.mesh @m = <["x"=2, "y"=-4]>

// -----

// expected-error @+1 {{mesh axis names must not be empty}}
dist.mesh @m = <["x"=2, ""=2]>

// -----

// expected-error @+1 {{mesh device id 2 appears more than once; devices must be distinct ranks}}
dist.mesh @m = <["x"=2, "y"=2], devices = [0, 1, 2, 2]>

// -----

// expected-error @+1 {{mesh devices list has 3 entries but the mesh has 4 devices}}
dist.mesh @m = <["x"=2, "y"=2], devices = [0, 1, 2]>

// -----

// expected-error @+1 {{mesh device id -5 (entry 1) is not a rank in 0..2^31-1}}
dist.mesh @m = <["x"=2], devices = [0, -5]>

// -----

// expected-error @+1 {{a mesh needs at least one axis}}
dist.mesh @m = <[]>

// -----

// expected-error @+1 {{expected '='}}
dist.mesh @m = <["x" 2]>

// -----

// expected-error @+1 {{expected integer value}}
dist.mesh @m = <["x"=two]>

// -----

// expected-error @+1 {{expected 'devices'}}
dist.mesh @m = <["x"=2], ids = [0, 1]>

// -----

// expected-error @+1 {{integer value too large}}
dist.mesh @m = <["x"=99999999999999999999]>

// -----

//===----------------------------------------------------------------------===//
// #dist.sharding
//===----------------------------------------------------------------------===//

dist.mesh @m = <["x"=2, "y"=4]>
// expected-error @+1 {{mesh axis "x" is used more than once in the sharding}}
func.func private @f(tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {"x"}]>>)

// -----

dist.mesh @m = <["x"=2, "y"=4]>
// expected-error @+1 {{mesh axis "y" is used more than once in the sharding}}
func.func private @f(tensor<16x16xf32, #dist.sharding<@m, [{"y"}, {}], partial = sum {"y"}>>)

// -----

dist.mesh @m = <["x"=2, "y"=4]>
// expected-error @+1 {{sharding has 1 dim entries but the tensor has rank 2}}
func.func private @f(tensor<16x16xf32, #dist.sharding<@m, [{"x"}]>>)

// -----

dist.mesh @m = <["x"=2, "y"=4]>
// expected-error @+1 {{sharded tensors must have a static shape}}
func.func private @f(tensor<?x16xf32, #dist.sharding<@m, [{"x"}, {}]>>)

// -----

dist.mesh @m = <["x"=2, "y"=4]>
// expected-error @+1 {{unknown reduction kind 'mean' (expected sum, max, min, prod or avg)}}
func.func private @f(tensor<16xf32, #dist.sharding<@m, [{}], partial = mean {"x"}>>)

// -----

dist.mesh @m = <["x"=2, "y"=4]>
// expected-error @+1 {{'partial' clause must name at least one axis}}
func.func private @f(tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {}>>)

// -----

dist.mesh @m = <["x"=2, "y"=4]>
// expected-error @+1 {{mesh axis names must be non-empty}}
func.func private @f(tensor<16xf32, #dist.sharding<@m, [{""}]>>)

// -----

dist.mesh @m = <["x"=2, "y"=4]>
// expected-error @+1 {{expected '}'}}
func.func private @f(tensor<16xf32, #dist.sharding<@m, [{"x" "y"}]>>)

// -----

dist.mesh @m = <["x"=2, "y"=4]>
// expected-error @+1 {{unbalanced '[' character in pretty dialect name}}
func.func private @f(tensor<16xf32, #dist.sharding<@m, [{"x"}>>)

// -----

// expected-error @+2 {{invalid kind of attribute specified}}
// expected-error @+1 {{failed to parse Dist_ShardingAttr parameter 'mesh'}}
func.func private @f(tensor<16xf32, #dist.sharding<[{"x"}]>>)

// -----

dist.mesh @m = <["x"=2, "y"=4]>
// expected-error @+1 {{expected 'partial'}}
func.func private @f(tensor<16xf32, #dist.sharding<@m, [{"x"}], sum {"y"}>>)

// -----

//===----------------------------------------------------------------------===//
// Symbol resolution
//===----------------------------------------------------------------------===//

// The dist ops resolve the meshes and axes of their own types.
dist.mesh @m = <["x"=2, "y"=4]>
func.func @unknown_mesh(%arg0: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{'dist.reshard' op refers to unknown mesh @nope}}
  %0 = dist.reshard %arg0 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xf32, #dist.sharding<@nope, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @unknown_axis(%arg0: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{mesh @m has no axis "z"}}
  %0 = dist.reshard %arg0 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xf32, #dist.sharding<@m, [{"z"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @unknown_partial_axis(%arg0: tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) {
  // expected-error @+1 {{mesh @m has no axis "w"}}
  %0 = dist.all_reduce %arg0 axes = ["x"] reduction = sum : tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>> -> tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {"w"}>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @unknown_collective_axis(%arg0: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{mesh @m has no axis "q"}}
  %0 = dist.all_gather %arg0 axes = ["q"] dim = 0 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xf32, #dist.sharding<@m, [{}]>>
  return
}

// -----

// Every other sharded type is checked wherever it appears (a
// signature naming a mesh or an axis that does not exist was accepted).
// A symbol that is not a mesh is no mesh.
// expected-error @+1 {{argument 0 of @mesh_is_not_a_mesh refers to unknown mesh @mesh_is_not_a_mesh}}
func.func @mesh_is_not_a_mesh(%arg0: tensor<16xf32, #dist.sharding<@mesh_is_not_a_mesh, [{}]>>) {
  return
}

// -----

dist.mesh @m = <["x"=2]>
// expected-error @+1 {{argument 1 of @signature_unknown_mesh refers to unknown mesh @nope}}
func.func @signature_unknown_mesh(%a: tensor<8xf32, #dist.sharding<@m, [{}]>>, %b: tensor<8xf32, #dist.sharding<@nope, [{}]>>) {
  return
}

// -----

dist.mesh @m = <["x"=2]>
// expected-error @+1 {{argument 0 of @signature_unknown_axis: mesh @m has no axis "q"}}
func.func @signature_unknown_axis(%a: tensor<8x4xf32, #dist.sharding<@m, [{"q"}, {}]>>) -> tensor<8x4xf32, #dist.sharding<@m, [{"q"}, {}]>> {
  return %a : tensor<8x4xf32, #dist.sharding<@m, [{"q"}, {}]>>
}

// -----

// A typo in an axis: located at the argument, with the mesh's axes and the
// one it likely meant.
dist.mesh @m = <["dp"=2, "tp"=2]>
func.func @axis_typo(%w: tensor<8x8xf32, #dist.sharding<@m, [{}, {"tp"}]>>,
                     // expected-error @+1 {{argument 1 of @axis_typo: mesh @m has no axis "pt" (its axes: "dp", "tp"; did you mean "tp"?)}}
                     %x: tensor<8x8xf32, #dist.sharding<@m, [{"pt"}, {}]>>) {
  return
}

// -----

dist.mesh @m = <["x"=2]>
// expected-error @+1 {{'func.func' op result 0 refers to unknown mesh @nope}}
func.func private @result_unknown_mesh(%a: tensor<8xf32, #dist.sharding<@m, [{}]>>) -> tensor<8xf32, #dist.sharding<@nope, [{}]>>

// -----

dist.mesh @m = <["x"=2]>
// expected-error @+1 {{'func.func' op result 1: mesh @m has no axis "q"}}
func.func private @declaration_partial_axis() -> (tensor<8xf32, #dist.sharding<@m, [{}]>>, tensor<8xf32, #dist.sharding<@m, [{}], partial = sum {"q"}>>)

// -----

// Nested in another type (a function type attribute's types are not
// values; a tuple result is one).
dist.mesh @m = <["x"=2]>
func.func @nested(%a: tensor<8xf32, #dist.sharding<@m, [{}]>>) {
  // expected-error @+1 {{'test.op' op result 0 refers to unknown mesh @nope}}
  %t = "test.op"() : () -> tuple<i32, tensor<8xf32, #dist.sharding<@nope, [{}]>>>
  return
}

// -----

dist.mesh @m = <["x"=2]>
func.func @op_result(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{'tensor.empty' op result 0: mesh @m has no axis "y"}}
  %e = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{"y"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2]>
func.func @constant(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{'arith.constant' op result 0 refers to unknown mesh @n}}
  %c = arith.constant dense<1.0> : tensor<8xf32, #dist.sharding<@n, [{}]>>
  return
}

// -----

// Block arguments, in the function's other blocks and in nested regions.
dist.mesh @m = <["x"=2]>
func.func @block_argument(%a: tensor<8xf32, #dist.sharding<@m, [{}]>>) {
  return
// expected-error @+1 {{block argument 0 refers to unknown mesh @gone}}
^bb1(%b: tensor<8xf32, #dist.sharding<@gone, [{}]>>):
  return
}

// -----

dist.mesh @m = <["x"=2]>
func.func @region_argument(%a: tensor<8xf32, #dist.sharding<@m, [{}]>>) {
  "test.region_op"() ({
  // expected-error @+1 {{block argument 1: mesh @m has no axis "z"}}
  ^bb0(%i: index, %t: tensor<8xf32, #dist.sharding<@m, [{"z"}]>>):
    "test.terminator"() : () -> ()
  }) : () -> ()
  return
}

// -----

//===----------------------------------------------------------------------===//
// dist.reshard
//===----------------------------------------------------------------------===//

dist.mesh @m = <["x"=2, "y"=4]>
func.func @reshard_shape(%arg0: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{result shape [8] differs from operand shape [16]}}
  %0 = dist.reshard %arg0 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<8xf32, #dist.sharding<@m, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @reshard_element_type(%arg0: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{result element type 'f16' differs from operand element type 'f32'}}
  %0 = dist.reshard %arg0 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xf16, #dist.sharding<@m, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
dist.mesh @n = <["x"=2, "y"=4]>
func.func @move_meshes(%arg0: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{operand is on mesh @m but result is on mesh @n}}
  %0 = dist.all_gather %arg0 axes = ["x"] dim = 0 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xf32, #dist.sharding<@n, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @reshard_rank(%arg0: tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {}]>>) {
  // expected-error @+1 {{result shape [16] differs from operand shape [16, 16]}}
  %0 = dist.reshard %arg0 : tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {}]>> -> tensor<16xf32, #dist.sharding<@m, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @reshard_unsharded(%arg0: tensor<16xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor with a #dist.sharding encoding}}
  %0 = dist.reshard %arg0 : tensor<16xf32> -> tensor<16xf32, #dist.sharding<@m, [{}]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Collectives: structural checks
//===----------------------------------------------------------------------===//

dist.mesh @m = <["x"=2, "y"=4]>
func.func @no_axes(%arg0: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{requires at least one mesh axis}}
  %0 = dist.all_gather %arg0 axes = [] dim = 0 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xf32, #dist.sharding<@m, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @axis_twice(%arg0: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{lists mesh axis "x" twice}}
  %0 = dist.all_gather %arg0 axes = ["x", "x"] dim = 0 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xf32, #dist.sharding<@m, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @negative_dim(%arg0: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{attribute 'dim' failed to satisfy constraint}}
  %0 = dist.all_gather %arg0 axes = ["x"] dim = -1 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xf32, #dist.sharding<@m, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @all_to_all_same_dim(%arg0: tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {}]>>) {
  // expected-error @+1 {{source and destination dim are both 0}}
  %0 = dist.all_to_all %arg0 axes = ["x"] dim = 0 to_dim = 0 : tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {}]>> -> tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @collective_element_type(%arg0: tensor<16xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{result element type 'i32' differs from operand element type 'f32'}}
  %0 = dist.all_gather %arg0 axes = ["x"] dim = 0 : tensor<16xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<16xi32, #dist.sharding<@m, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @bad_reduction_keyword(%arg0: tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'reduction' [sum, max, min, prod, avg]}}
  %0 = dist.all_reduce %arg0 axes = ["x"] reduction = mean : tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>> -> tensor<16xf32, #dist.sharding<@m, [{}]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Collectives: move preconditions (checked by the planner's applyMove)
//===----------------------------------------------------------------------===//

dist.mesh @m = <["x"=2, "y"=4]>
func.func @gather_not_minor(%arg0: tensor<64xf32, #dist.sharding<@m, [{"x", "y"}]>>) {
  // expected-error @+1 {{'dist.all_gather' op all_gather: axis "x" is not the minor-most axis of dim 0 (dim 0 is split by {"x", "y"})}}
  %0 = dist.all_gather %arg0 axes = ["x"] dim = 0 : tensor<64xf32, #dist.sharding<@m, [{"x", "y"}]>> -> tensor<64xf32, #dist.sharding<@m, [{"y"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @gather_wrong_result(%arg0: tensor<64x8xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>) {
  // expected-error @+1 {{result layout [{}, {}] should be [{}, {"y"}], the layout this move produces}}
  %0 = dist.all_gather %arg0 axes = ["x"] dim = 0 : tensor<64x8xf32, #dist.sharding<@m, [{"x"}, {"y"}]>> -> tensor<64x8xf32, #dist.sharding<@m, [{}, {}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @slice_not_replicated(%arg0: tensor<64x8xf32, #dist.sharding<@m, [{"x"}, {}]>>) {
  // expected-error @+1 {{all_slice: axis "x" already splits dim 0}}
  %0 = dist.all_slice %arg0 axes = ["x"] dim = 1 : tensor<64x8xf32, #dist.sharding<@m, [{"x"}, {}]>> -> tensor<64x8xf32, #dist.sharding<@m, [{}, {"x"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @slice_dim_out_of_range(%arg0: tensor<64xf32, #dist.sharding<@m, [{}]>>) {
  // expected-error @+1 {{all_slice: dim 1 is out of range for a tensor of rank 1}}
  %0 = dist.all_slice %arg0 axes = ["x"] dim = 1 : tensor<64xf32, #dist.sharding<@m, [{}]>> -> tensor<64xf32, #dist.sharding<@m, [{"x"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @all_to_all_not_minor(%arg0: tensor<64x8xf32, #dist.sharding<@m, [{"x", "y"}, {}]>>) {
  // expected-error @+1 {{all_to_all: axis "x" is not the minor-most axis of dim 0 (dim 0 is split by {"x", "y"})}}
  %0 = dist.all_to_all %arg0 axes = ["x"] dim = 0 to_dim = 1 : tensor<64x8xf32, #dist.sharding<@m, [{"x", "y"}, {}]>> -> tensor<64x8xf32, #dist.sharding<@m, [{"y"}, {"x"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @reduce_scatter_not_partial(%arg0: tensor<64xf32, #dist.sharding<@m, [{}]>>) {
  // expected-error @+1 {{reduce_scatter: axis "x" is not partial}}
  %0 = dist.reduce_scatter %arg0 axes = ["x"] dim = 0 reduction = sum : tensor<64xf32, #dist.sharding<@m, [{}]>> -> tensor<64xf32, #dist.sharding<@m, [{"x"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @reduce_scatter_wrong_kind(%arg0: tensor<64xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>) {
  // expected-error @+1 {{reduce_scatter: reduction sum does not match the operand's partial kind max}}
  %0 = dist.reduce_scatter %arg0 axes = ["x"] dim = 0 reduction = sum : tensor<64xf32, #dist.sharding<@m, [{}], partial = max {"x"}>> -> tensor<64xf32, #dist.sharding<@m, [{"x"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @all_reduce_not_partial(%arg0: tensor<64xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>) {
  // expected-error @+1 {{all_reduce: axis "y" is not partial}}
  %0 = dist.all_reduce %arg0 axes = ["y"] reduction = sum : tensor<64xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>> -> tensor<64xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @all_reduce_keeps_partial(%arg0: tensor<64xf32, #dist.sharding<@m, [{}], partial = sum {"x", "y"}>>) {
  // expected-error @+1 {{result layout [{}] should be [{}], partial = sum {"x"}, the layout this move produces}}
  %0 = dist.all_reduce %arg0 axes = ["y"] reduction = sum : tensor<64xf32, #dist.sharding<@m, [{}], partial = sum {"x", "y"}>> -> tensor<64xf32, #dist.sharding<@m, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @replicate_to_partial_not_replicated(%arg0: tensor<64xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{replicate_to_partial: axis "x" already splits dim 0}}
  %0 = dist.replicate_to_partial %arg0 axes = ["x"] reduction = sum : tensor<64xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<64xf32, #dist.sharding<@m, [{}], partial = sum {"x"}>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @replicate_to_partial_mixed_kinds(%arg0: tensor<64xf32, #dist.sharding<@m, [{}], partial = max {"x"}>>) {
  // expected-error @+1 {{replicate_to_partial: reduction sum does not match the existing partial kind max of the operand}}
  %0 = dist.replicate_to_partial %arg0 axes = ["y"] reduction = sum : tensor<64xf32, #dist.sharding<@m, [{}], partial = max {"x"}>> -> tensor<64xf32, #dist.sharding<@m, [{}], partial = sum {"x", "y"}>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @permute_changes_counts(%arg0: tensor<64x64xf32, #dist.sharding<@m, [{"x"}, {"y"}]>>) {
  // expected-error @+1 {{permute: dim 0 has 2 shards in the operand but 4 in the target; a permute keeps every dim's shard count}}
  %0 = dist.permute %arg0 axes = ["x", "y"] : tensor<64x64xf32, #dist.sharding<@m, [{"x"}, {"y"}]>> -> tensor<64x64xf32, #dist.sharding<@m, [{"y"}, {"x"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>
func.func @permute_wrong_axes(%arg0: tensor<64xf32, #dist.sharding<@m, [{"x", "y"}]>>) {
  // expected-error @+1 {{permute: axes {"x"} are not the axes whose coordinate changes between sender and receiver, which are {"x", "y"}}}
  %0 = dist.permute %arg0 axes = ["x"] : tensor<64xf32, #dist.sharding<@m, [{"x", "y"}]>> -> tensor<64xf32, #dist.sharding<@m, [{"y", "x"}]>>
  return
}

// -----

// A permute over no axes only relabels size-1 axes; here x's and y's
// coordinates change.
dist.mesh @m = <["u"=1, "x"=2, "y"=2]>
func.func @permute_no_axes_moves_data(%arg0: tensor<64xf32, #dist.sharding<@m, [{"x", "y"}]>>) {
  // expected-error @+1 {{permute: axes {} are not the axes whose coordinate changes between sender and receiver, which are {"x", "y"}}}
  %0 = dist.permute %arg0 axes = [] : tensor<64xf32, #dist.sharding<@m, [{"x", "y"}]>> -> tensor<64xf32, #dist.sharding<@m, [{"u", "y", "x"}]>>
  return
}

// -----

// Only a permute may name no axes: a gather over none is no collective,
// even between layouts that differ only in a size-1 axis.
dist.mesh @m = <["u"=1, "x"=2]>
func.func @gather_no_axes_size_one(%arg0: tensor<64xf32, #dist.sharding<@m, [{"x", "u"}]>>) {
  // expected-error @+1 {{requires at least one mesh axis}}
  %0 = dist.all_gather %arg0 axes = [] dim = 0 : tensor<64xf32, #dist.sharding<@m, [{"x", "u"}]>> -> tensor<64xf32, #dist.sharding<@m, [{"x"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>
func.func @permute_partial_set(%arg0: tensor<64xf32, #dist.sharding<@m, [{"x"}], partial = sum {"y"}>>) {
  // expected-error @+1 {{permute: the partial axes {"y"} of the operand differ from the target's {"x"}}}
  %0 = dist.permute %arg0 axes = ["x", "y"] : tensor<64xf32, #dist.sharding<@m, [{"x"}], partial = sum {"y"}>> -> tensor<64xf32, #dist.sharding<@m, [{"y"}], partial = sum {"x"}>>
  return
}

// -----

// Uneven extents: 10 rows in 4 blocks of 3 do not concatenate into 2 blocks
// of 5, so gathering "y" alone cannot produce the result.
dist.mesh @m = <["x"=2, "y"=2]>
func.func @gather_uneven_does_not_nest(%arg0: tensor<10xf32, #dist.sharding<@m, [{"x", "y"}]>>) {
  // expected-error @+1 {{all_gather: along dim 0 (extent 10) the 2 blocks of 5 are not unions of the 4 blocks of 3, so axis "y" alone cannot carry the data (uneven extents do not nest)}}
  %0 = dist.all_gather %arg0 axes = ["y"] dim = 0 : tensor<10xf32, #dist.sharding<@m, [{"x", "y"}]>> -> tensor<10xf32, #dist.sharding<@m, [{"x"}]>>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Mesh cost parameters
//===----------------------------------------------------------------------===//

// expected-error @+1 {{'dist.mesh' op cost names unknown axis "z"}}
dist.mesh @m = <["x"=2]> {cost = {z = {alpha = 1.0e-05, beta = 1.0e-12}}}

// -----

// expected-error @+1 {{'dist.mesh' op cost of axis "x" must give both 'alpha' and 'beta'}}
dist.mesh @m = <["x"=2]> {cost = {x = {alpha = 1.0e-05}}}

// -----

// expected-error @+1 {{'dist.mesh' op cost of axis "x": beta must be finite and non-negative, got -1.000000e+00}}
dist.mesh @m = <["x"=2]> {cost = {x = {alpha = 1.0e-05, beta = -1.0}}}

// -----

// expected-error @+1 {{'dist.mesh' op cost of axis "x" may only hold float 'alpha' and 'beta', found 'gamma'}}
dist.mesh @m = <["x"=2]> {cost = {x = {alpha = 1.0e-05, gamma = 1.0}}}

// -----

// expected-error @+1 {{'dist.mesh' op cost of axis "x" must be a dictionary {alpha = F, beta = F}}}
dist.mesh @m = <["x"=2]> {cost = {x = 3.0}}

// -----

//===----------------------------------------------------------------------===//
// Local (per-device) collectives
//===----------------------------------------------------------------------===//

dist.mesh @m = <["x"=2, "y"=4]>
func.func @local_gather_too_big(%arg0: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.local.all_gather' op result dim 0 has 20 entries but the group of 4 gathers only 16}}
  %0 = dist.local.all_gather %arg0 on @m axes = ["y"] dim = 0 : tensor<4x8xf32> -> tensor<20x8xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @local_slice_bigger(%arg0: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.local.all_slice' op a slice cannot be larger than its input along dim 1}}
  %0 = dist.local.all_slice %arg0 on @m axes = ["y"] dim = 1 : tensor<4x8xf32> -> tensor<4x9xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @local_other_dim_changes(%arg0: tensor<4x8xf32>) {
  // expected-error @+1 {{'dist.local.reduce_scatter' op dim 1 changes size from 8 to 4 but this op does not touch it}}
  %0 = dist.local.reduce_scatter %arg0 on @m axes = ["y"] dim = 0 reduction = sum : tensor<4x8xf32> -> tensor<1x4xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @local_encoded(%arg0: tensor<4x8xf32, #dist.sharding<@m, [{}, {}]>>) {
  // expected-error @+1 {{'dist.local.all_reduce' op works on local buffers, which carry no encoding}}
  %0 = dist.local.all_reduce %arg0 on @m axes = ["y"] reduction = sum : tensor<4x8xf32, #dist.sharding<@m, [{}, {}]>> -> tensor<4x8xf32, #dist.sharding<@m, [{}, {}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>
func.func @local_permute_table(%arg0: tensor<8xf32>) {
  // expected-error @+1 {{'dist.local.permute' op has 3 sources but mesh @m needs one per world rank 0..3}}
  %0 = dist.local.permute %arg0 on @m sources = [0, 1, 2] : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>
func.func @local_permute_rank(%arg0: tensor<8xf32>) {
  // expected-error @+1 {{'dist.local.permute' op rank 2 receives from 7, which is not a rank of the mesh}}
  %0 = dist.local.permute %arg0 on @m sources = [0, 1, 7, 3] : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>
func.func @local_unknown_mesh(%arg0: tensor<8xf32>) {
  // expected-error @+1 {{'dist.local.all_reduce' op refers to unknown mesh @n}}
  %0 = dist.local.all_reduce %arg0 on @n axes = ["y"] reduction = sum : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @buffer_strided(%a: memref<4x8xf32, strided<[16, 1]>>, %b: memref<4x8xf32>) {
  // expected-error @+1 {{'dist.buffer.all_reduce' op operand #0 must be statically shaped memref with the identity layout}}
  dist.buffer.all_reduce %a, %b on @m axes = ["x"] reduction = sum : memref<4x8xf32, strided<[16, 1]>>, memref<4x8xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @buffer_gather_too_big(%a: memref<4x8xf32>, %b: memref<4x40xf32>) {
  // expected-error @+1 {{'dist.buffer.all_gather' op result dim 1 has 40 entries but the group of 4 gathers only 32}}
  dist.buffer.all_gather %a, %b on @m axes = ["y"] dim = 1 : memref<4x8xf32>, memref<4x40xf32>
  return
}

// -----

dist.mesh @m = <["x"=2]>
func.func @shard_index_unknown_axis() -> index {
  // expected-error @+1 {{'dist.local.shard_index' op mesh @m has no axis "q"}}
  %s = dist.local.shard_index on @m axes = ["q"] : index
  return %s : index
}

// -----

dist.mesh @m = <["x"=2]>
func.func @shard_index_twice() -> index {
  // expected-error @+1 {{'dist.local.shard_index' op lists mesh axis "x" twice}}
  %s = dist.local.shard_index on @m axes = ["x", "x"] : index
  return %s : index
}

// -----

dist.mesh @s0 = <["x"=2]>
dist.mesh @s1 = <["x"=2], devices = [2, 3]>
func.func @redistribute_partial_across_meshes(%arg0: tensor<8xf32, #dist.sharding<@s0, [{}], partial = sum {"x"}>>) {
  // expected-error @+1 {{moves a partial tensor to another mesh; reduce its partial axes on mesh @s0 first}}
  %0 = dist.redistribute %arg0 : tensor<8xf32, #dist.sharding<@s0, [{}], partial = sum {"x"}>> -> tensor<8xf32, #dist.sharding<@s1, [{"x"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>
func.func @redistribute_drops_partial(%arg0: tensor<8xf32, #dist.sharding<@m, [{"x"}], partial = sum {"y"}>>) {
  // expected-error @+1 {{redistribute: the partial axes {"y"} of the operand differ from the target's {}}}
  %0 = dist.redistribute %arg0 : tensor<8xf32, #dist.sharding<@m, [{"x"}], partial = sum {"y"}>> -> tensor<8xf32, #dist.sharding<@m, [{"y"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2]>
func.func @redistribute_same(%arg0: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{redistribute: the target layout equals the operand layout}}
  %0 = dist.redistribute %arg0 : tensor<8xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return
}

// -----

dist.mesh @m = <["x"=2]>
func.func @redistribute_shape(%arg0: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) {
  // expected-error @+1 {{result shape [6] differs from operand shape [8]}}
  %0 = dist.redistribute %arg0 : tensor<8xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<6xf32, #dist.sharding<@m, [{}]>>
  return
}

// -----

dist.mesh @m = <["x"=2]>
func.func @local_redistribute_table_width(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'dist.local.redistribute' op table has 4 entries, not a multiple of 5 (2 ranks + 3 x 1 dims per transfer)}}
  %0 = dist.local.redistribute %arg0 from @m to @m table = [0, 1, 0, 0] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dist.mesh @m = <["x"=2]>
func.func @local_redistribute_box(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'dist.local.redistribute' op transfer 0 box along dim 0 (offsets 2, 0, size 3) is outside the operand or the result}}
  %0 = dist.local.redistribute %arg0 from @m to @m table = [0, 1, 2, 0, 3] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dist.mesh @m = <["x"=2]>
func.func @local_redistribute_mesh(%arg0: tensor<4xf32>) {
  // expected-error @+1 {{'dist.local.redistribute' op refers to unknown mesh @nowhere}}
  %0 = dist.local.redistribute %arg0 from @m to @nowhere table = [] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dist.mesh @s = <["x"=2], devices = [2, 3]>
func.func @local_permute_outside_mesh(%arg0: tensor<8xf32>) {
  // expected-error @+1 {{'dist.local.permute' op rank 0 is not in mesh @s but receives from 2 (expected -1)}}
  %0 = dist.local.permute %arg0 on @s sources = [2, -1, 3, 2] : tensor<8xf32> -> tensor<8xf32>
  return
}

// -----

dist.mesh @m = <["x"=2]>
// expected-error @+1 {{dim 0's segments sum to 7 but the dim has extent 8}}
func.func @segments_sum(%arg0: tensor<8xf32, #dist.sharding<@m, [{"x"} segments [4, 3]]>>) {
  return
}

// -----

// Past 2^53 bytes the planner's and the lowering's byte arithmetic
// would overflow; the type itself is refused.
dist.mesh @m = <["x"=2]>
// expected-error @+1 {{tensor 9223372036854775807 of 1-byte elements is too large: the planner takes at most 2^53 bytes (8 PiB)}}
func.func @too_large(%arg0: tensor<9223372036854775807xi1, #dist.sharding<@m, [{"x"}]>>) {
  return
}

// -----

dist.mesh @m = <["x"=2]>
// expected-error @+1 {{tensor 0x4611686018427387904 of 4-byte elements is too large}}
func.func @too_large_empty(%arg0: tensor<0x4611686018427387904xf32, #dist.sharding<@m, [{}, {"x"}]>>) {
  return
}

// -----

dist.mesh @m = <["x"=2]>
// expected-error @+1 {{dim 0's segments sum past 2^63}}
func.func @segments_overflow(%arg0: tensor<8xf32, #dist.sharding<@m, [{"x"} segments [4611686018427387904, 4611686018427387904, 8]]>>) {
  return
}

// -----

dist.mesh @m = <["x"=2]>
// expected-error @+1 {{segments must be at least 1 element long, got 0}}
func.func @segments_zero(%arg0: tensor<8xf32, #dist.sharding<@m, [{"x"} segments [8, 0]]>>) {
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>
func.func @segments_gather_changes_segments(%arg0: tensor<8xf32, #dist.sharding<@m, [{"x", "y"} segments [4, 4]]>>) {
  // expected-error @+1 {{result layout [{"x"} segments [2, 6]] should be [{"x"} segments [4, 4]], the layout this move produces}}
  %0 = dist.all_gather %arg0 axes = ["y"] dim = 0 : tensor<8xf32, #dist.sharding<@m, [{"x", "y"} segments [4, 4]]>> -> tensor<8xf32, #dist.sharding<@m, [{"x"} segments [2, 6]]>>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>
func.func @segments_slice_not_nested(%arg0: tensor<8xf32, #dist.sharding<@m, [{"x"} segments [3, 5]]>>) {
  // expected-error @+1 {{all_slice: along dim 0 (a segment of 5) the 2 blocks of 3 are not unions of the 4 blocks of 2, so axis "y" alone cannot carry the data (uneven extents do not nest)}}
  %0 = dist.all_slice %arg0 axes = ["y"] dim = 0 : tensor<8xf32, #dist.sharding<@m, [{"x"} segments [3, 5]]>> -> tensor<8xf32, #dist.sharding<@m, [{"x", "y"} segments [3, 5]]>>
  return
}

// -----

dist.mesh @m = <["x"=2]>
func.func @segments_permute(%arg0: tensor<8xf32, #dist.sharding<@m, [{"x"} segments [4, 4]]>>) {
  // expected-error @+1 {{a permute keeps every dim's segments; the operand and the target differ in them (use redistribute)}}
  %0 = dist.permute %arg0 axes = ["x"] : tensor<8xf32, #dist.sharding<@m, [{"x"} segments [4, 4]]>> -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return
}

// -----

func.func @pack_segments_rows(%a: tensor<12x3xf32>) {
  // expected-error @+1 {{the per-segment side has 12 rows along dim 0, but the blocks add up to 11}}
  %0 = dist.local.pack_segments %a dim = 0 blocks = [8, 3] pieces = [4, 2] parts = 2 : tensor<12x3xf32> -> tensor<12x3xf32>
  return
}

// -----

func.func @pack_segments_chunks(%a: tensor<12x3xf32>) {
  // expected-error @+1 {{the packed side has 10 rows along dim 0, not 2 chunks of 6}}
  %0 = dist.local.pack_segments %a dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : tensor<12x3xf32> -> tensor<10x3xf32>
  return
}

// -----

func.func @unpack_segments_piece_too_small(%a: tensor<8x3xf32>) {
  // expected-error @+1 {{a block of 8 rows does not fit in 2 pieces of 3}}
  %0 = dist.local.unpack_segments %a dim = 0 blocks = [8, 4] pieces = [3, 1] parts = 2 : tensor<8x3xf32> -> tensor<12x3xf32>
  return
}

// -----

func.func @pack_segments_other_dim(%a: tensor<12x3xf32>) {
  // expected-error @+1 {{result dim 1 has 4 entries, the operand 3; only dim 0 changes}}
  %0 = dist.local.pack_segments %a dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2 : tensor<12x3xf32> -> tensor<12x4xf32>
  return
}

// -----

func.func @pack_segments_lists(%a: tensor<12x3xf32>) {
  // expected-error @+1 {{needs one block and one piece size per segment, got 2 and 1}}
  %0 = dist.local.pack_segments %a dim = 0 blocks = [8, 4] pieces = [6] parts = 2 : tensor<12x3xf32> -> tensor<12x3xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @permute_neither(%a: tensor<4xf32>) {
  // expected-error @+1 {{needs exactly one of `sources` (a table) and `dim_axes` (the layouts)}}
  %0 = dist.local.permute %a on @m : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @permute_dim_axes_counts(%a: tensor<4xf32>) {
  // expected-error @+1 {{dim_axes: dim 0 has 2 shards in the source but 4 in the target}}
  %0 = dist.local.permute %a on @m dim_axes = [1, 0, 1, 1] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @permute_dim_axes_axis(%a: tensor<4xf32>) {
  // expected-error @+1 {{dim_axes: axis 2 is not an axis of the mesh}}
  %0 = dist.local.permute %a on @m dim_axes = [1, 2, 1, 0] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @permute_dim_axes_length(%a: tensor<4xf32>) {
  // expected-error @+1 {{dim_axes has 1 entries past the operand's 1 dims}}
  %0 = dist.local.permute %a on @m dim_axes = [1, 0, 1, 0, 9] : tensor<4xf32> -> tensor<4xf32>
  return
}

// -----

dist.mesh @m = <["x"=2, "y"=4]>
func.func @permute_dim_axes_short(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{dim_axes ends inside dim 1}}
  %0 = dist.local.permute %a on @m dim_axes = [1, 0, 1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}
