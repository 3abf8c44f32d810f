//===- DistOps.td - dist operations -------------------------*- tablegen -*-===//

#ifndef DIST_DIALECT_DIST_IR_DISTOPS_TD
#define DIST_DIALECT_DIST_IR_DISTOPS_TD

include "dist/Dialect/Dist/IR/DistAttrs.td"
include "dist/Dialect/Dist/IR/DistCollectives.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

def Dist_ShardedTensor : Type<
    And<[CPred<"::llvm::isa<::mlir::RankedTensorType>($_self)">,
         CPred<"::llvm::isa_and_nonnull<::dist::ShardingAttr>("
               "::llvm::cast<::mlir::RankedTensorType>($_self).getEncoding())">]>,
    "ranked tensor with a #dist.sharding encoding",
    "::mlir::RankedTensorType">;

//===----------------------------------------------------------------------===//
// dist.mesh
//===----------------------------------------------------------------------===//

def Dist_MeshOp : Dist_Op<"mesh", [Symbol]> {
  let summary = "A named N-dimensional mesh of devices";
  let description = [{
    Declares the device mesh `@name` with ordered, named axes. A device has one
    coordinate per axis; its linear index is row-major (axis 0 most
    significant) and its rank is `devices[linear index]`, or the linear index
    itself when `devices` is absent. `devices` must be a permutation of
    `0..N-1`, where N is the product of the axis sizes.

    ```mlir
    dist.mesh @node = <["x"=8]>
    dist.mesh @mesh = <["dp"=4, "tp"=8]>
    dist.mesh @swapped = <["x"=2, "y"=2], devices = [3, 2, 1, 0]>
    ```

    A mesh may carry the alpha-beta parameters of its axes (seconds per
    message, seconds per byte) in an optional `cost` dictionary; axes it does
    not mention keep the defaults. Pass options of `dist-lower-reshard`
    override it.

    ```mlir
    // 4 nodes of 8 GPUs: the node axis crosses a slower network.
    dist.mesh @cluster = <["node"=4, "gpu"=8]> {cost = {
        node = {alpha = 2.0e-05, beta = 4.0e-11},
        gpu = {alpha = 1.0e-05, beta = 2.7e-12}}}
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    StrArrayAttr:$axis_names,
    DenseI64ArrayAttr:$axis_sizes,
    OptionalAttr<DenseI64ArrayAttr>:$devices,
    OptionalAttr<DictionaryAttr>:$cost
  );
  let assemblyFormat = [{
    $sym_name `=` custom<MeshShape>($axis_names, $axis_sizes, $devices) attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    unsigned getNumAxes() { return getAxisSizes().size(); }
    /// The index of the axis called `name`, if any.
    std::optional<unsigned> findAxis(::llvm::StringRef name);
    /// What an error about axis `name`, which the mesh lacks, says after
    /// `has no axis "name"`: the mesh's axes, and the closest one when a
    /// typo is likely (` (its axes: "dp", "tp"; did you mean "tp"?)`).
    std::string describeMissingAxis(::llvm::StringRef name);
    /// The (alpha, beta) the `cost` attribute gives `axis`, if any.
    std::optional<std::pair<double, double>> getAxisCost(::llvm::StringRef axis);
  }];
}

//===----------------------------------------------------------------------===//
// dist.reshard
//===----------------------------------------------------------------------===//

def Dist_ReshardOp : Dist_Op<"reshard",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Change the layout of a sharded tensor";
  let description = [{
    Returns the same global tensor in another layout, on the same mesh or on
    another one (a pipeline-stage hand-off: the meshes may cover different
    world ranks). How it is done is left to `dist-lower-reshard`, which plans
    the cheapest sequence of moves. A reshard between equal layouts folds
    away, and a chain of reshards canonicalizes to one.

    ```mlir
    dist.mesh @m = <["x"=2, "y"=4]>
    %1 = dist.reshard %0 : tensor<1024x1024xf32, #dist.sharding<@m, [{"x"}, {"y"} ]>>
                        -> tensor<1024x1024xf32, #dist.sharding<@m, [{"y"}, {"x"} ]>>

    dist.mesh @s0 = <["tp"=4], devices = [0, 1, 2, 3]>
    dist.mesh @s1 = <["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>
    %2 = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@s0, [{"tp"}, {} ]>>
                        -> tensor<64x64xf32, #dist.sharding<@s1, [{}, {"tp"} ]>>
    ```
  }];
  let arguments = (ins Dist_ShardedTensor:$input);
  let results = (outs Dist_ShardedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Collectives: one op per move of the planner, in the global view.
//===----------------------------------------------------------------------===//

// Every move takes one sharded tensor and returns it in the layout the move
// produces; the verifier recomputes that layout and rejects any other, so an
// invalid step cannot be written down.
class Dist_MoveOp<Dist_Collective c, list<Trait> traits = []>
    : Dist_Op<c.mnemonic, !listconcat(traits, [Pure],
        Dist_CollectiveTraits<c, "Global">.traits)> {
  let arguments = !con((ins Dist_ShardedTensor:$input), c.attrs);
  let results = (outs Dist_ShardedTensor:$result);
  let assemblyFormat = "$input " # c.format #
      " attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = Dist_CollectiveTraits<c, "Global">.decls;
  let extraClassDefinition = [{
    ::mlir::LogicalResult $cppClass::verify() {
      return ::dist::verifyMoveOp(*this);
    }
    ::mlir::LogicalResult
    $cppClass::verifySymbolUses(::mlir::SymbolTableCollection &table) {
      return ::dist::verifyMoveSymbols(*this, table);
    }
  }];
}

def Dist_AllGatherOp : Dist_MoveOp<Dist_AllGatherMove> {
  let summary = "Gather the minor-most axes of a dimension (unsplit it)";
  let description = [{
    The listed axes must be the minor-most axes splitting `dim`, in order;
    they are removed from it, so afterwards every device of the group holds
    the concatenated blocks. Ring cost: `(p-1)*alpha + (p-1)*n*beta`.

    ```mlir
    %1 = dist.all_gather %0 axes = ["y"] dim = 1
        : tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {"y"} ]>>
       -> tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {} ]>>
    ```
  }];
}

def Dist_AllSliceOp : Dist_MoveOp<Dist_AllSliceMove> {
  let summary = "Split a dimension further over replicated axes (local)";
  let description = [{
    The listed axes must replicate the tensor; they are appended as the
    minor-most axes of `dim`, and each device keeps its own block. No data
    moves.

    ```mlir
    %1 = dist.all_slice %0 axes = ["y"] dim = 0
        : tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {} ]>>
       -> tensor<16x16xf32, #dist.sharding<@m, [{"x", "y"}, {} ]>>
    ```
  }];
}

def Dist_AllToAllOp : Dist_MoveOp<Dist_AllToAllMove> {
  let summary = "Move the minor-most axes of one dimension to another";
  let description = [{
    The listed axes must be the minor-most axes of `dim`; they are removed
    from it and appended as the minor-most axes of `to_dim`. Ring cost:
    `(p-1)*alpha + (p-1)/p*n*beta`.

    ```mlir
    %1 = dist.all_to_all %0 axes = ["x"] dim = 0 to_dim = 1
        : tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {} ]>>
       -> tensor<16x16xf32, #dist.sharding<@m, [{}, {"x"} ]>>
    ```
  }];
}

def Dist_ReduceScatterOp : Dist_MoveOp<Dist_ReduceScatterMove> {
  let summary = "Reduce partial values and scatter the result along a dimension";
  let description = [{
    The listed axes must be partial with kind `reduction`; they stop being
    partial and are appended as the minor-most axes of `dim`. Ring cost:
    `(p-1)*alpha + (p-1)/p*n*beta`.

    ```mlir
    %1 = dist.reduce_scatter %0 axes = ["y"] dim = 0 reduction = sum
        : tensor<16x16xf32, #dist.sharding<@m, [{}, {"x"} ], partial = sum {"y"}>>
       -> tensor<16x16xf32, #dist.sharding<@m, [{"y"}, {"x"} ]>>
    ```
  }];
}

def Dist_AllReduceOp : Dist_MoveOp<Dist_AllReduceMove> {
  let summary = "Reduce partial values over mesh axes, leaving them replicated";
  let description = [{
    The listed axes must be partial with kind `reduction`; afterwards they
    replicate the reduced value. Ring cost:
    `2(p-1)*alpha + 2(p-1)/p*n*beta`.

    ```mlir
    %1 = dist.all_reduce %0 axes = ["y"] reduction = max
        : tensor<16xf32, #dist.sharding<@m, [{"x"} ], partial = max {"y"}>>
       -> tensor<16xf32, #dist.sharding<@m, [{"x"} ]>>
    ```
  }];
}

def Dist_ReplicateToPartialOp : Dist_MoveOp<Dist_ReplicateToPartialMove> {
  let summary = "Reinterpret a replicated value as partial (local)";
  let description = [{
    The listed axes must replicate the tensor; afterwards they are partial
    with kind `reduction`. The device with coordinate 0 on those axes keeps
    the value and the others hold the identity of the reduction (0 for sum,
    1 for prod, the value itself for max, min and avg), so the global value
    is unchanged. No data moves.

    ```mlir
    %1 = dist.replicate_to_partial %0 axes = ["y"] reduction = sum
        : tensor<16xf32, #dist.sharding<@m, [{"x"} ]>>
       -> tensor<16xf32, #dist.sharding<@m, [{"x"} ], partial = sum {"y"}>>
    ```
  }];
}

def Dist_PermuteOp : Dist_MoveOp<Dist_PermuteMove> {
  let summary = "Exchange whole local buffers between devices";
  let description = [{
    Moves to any layout with the same number of shards per dimension and the
    same partial axes and kind: every device receives one whole buffer from a
    device that differs from it only on the listed axes (or keeps its own).
    Examples: reordering the axes of one dimension, or swapping which axes
    split which dimensions. Cost: `max alpha + n * max beta` over the axes.
    The axes are exactly those whose coordinate changes between sender and
    receiver; where the layouts differ only in where size-1 axes sit, none
    does, and the permute names no axes: a free relabelling in which every
    device keeps its buffer (`axes = []`).

    ```mlir
    dist.mesh @m = <["x"=2, "y"=2]>
    %1 = dist.permute %0 axes = ["x", "y"]
        : tensor<16xf32, #dist.sharding<@m, [{"x", "y"} ]>>
       -> tensor<16xf32, #dist.sharding<@m, [{"y", "x"} ]>>
    ```
  }];
}

// Its verifier is its own: a redistribute may cross meshes, which no other
// move does.
def Dist_RedistributeOp : Dist_MoveOp<Dist_RedistributeMove> {
  let summary = "Point-to-point exchange to any layout, on this or another mesh";
  let description = [{
    Every device of the result's mesh receives exactly the elements of its
    block it does not already hold, each from one device that holds it
    (semantics §3 `redistribute`). Within one mesh the partial axes and kind must
    stay the same, and data only moves between devices with equal
    coordinates on them; across meshes neither side may be partial. Which
    device sends which box to whom is worked out by the planner's
    `computeExchange`, the same table `dist-localize` lowers, so the cost the
    plan reports and the bytes the program moves agree.

    ```mlir
    dist.mesh @m = <["x"=2, "y"=4]>
    %1 = dist.redistribute %0
        : tensor<1024x1024xf32, #dist.sharding<@m, [{"x"}, {"y"} ]>>
       -> tensor<1024x1024xf32, #dist.sharding<@m, [{"y"}, {"x"} ]>>
    ```
  }];
  let extraClassDefinition = "";
}

include "dist/Dialect/Dist/IR/DistBufferOps.td"
include "dist/Dialect/Dist/IR/DistLocalOps.td"

#endif // DIST_DIALECT_DIST_IR_DISTOPS_TD
