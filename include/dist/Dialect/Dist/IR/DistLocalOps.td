//===- DistLocalOps.td - per-device forms of the collectives -*- tablegen -*-===//
//
// After `dist-localize`, values are the local padded buffers of one device
// (plain tensors, no encoding) and each collective is one of these ops. Their
// semantics are defined on local shapes alone, so bufferization and the
// lowering to runtime calls never need the global view again.
//
// "Group" below means: the devices that differ from this one only on `axes`,
// ordered by their combined coordinate over `axes` (first axis most
// significant); `r` is this device's index in it and `q` its size.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_DISTLOCALOPS_TD
#define DIST_DIALECT_DIST_IR_DISTLOCALOPS_TD


// The per-device op of collective `c`, whose buffer form is `bufferOp`.
class Dist_LocalOp<Dist_Collective c, string bufferOp, list<Trait> traits>
    : Dist_Op<"local." # c.mnemonic, !listconcat(traits,
        Dist_CollectiveTraits<c, "Local">.traits,
        [Dist_BufferizesTo<bufferOp>])> {
  let arguments = !con((ins AnyStaticShapeTensor:$input), c.meshAttrs,
                       c.attrs);
  let results = (outs AnyStaticShapeTensor:$result);
  let assemblyFormat = "$input " # c.meshFormat # " " # c.format #
      " attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let extraClassDeclaration = Dist_CollectiveTraits<c, "Local">.decls;
  let extraClassDefinition = !if(c.isCollective, Dist_LocalVerifiers, "");
}

// The local op `dist.local.<c.mnemonic>` (documented by `summary` and
// `description`) and its buffer form `dist.buffer.<c.mnemonic>`, named
// Dist_Local<NAME>Op and Dist_Buffer<NAME>Op.
multiclass Dist_LocalAndBufferOps<Dist_Collective c, string summaryText,
                                  string descriptionText,
                                  list<Trait> traits = []> {
  def Dist_Local # NAME # Op
      : Dist_LocalOp<c, "::dist::Buffer" # NAME # "Op", traits> {
    let summary = summaryText;
    let description = descriptionText;
  }
  def Dist_Buffer # NAME # Op : Dist_BufferOp<c>;
}

defm AllGather : Dist_LocalAndBufferOps<Dist_AllGatherMove,
    "Concatenate the group's buffers along a dimension",
    [{
    Concatenates the buffers of the group members in group order along `dim`
    and keeps the first `result.shape[dim]` entries (the rest is padding of
    the coarser layout).

    ```mlir
    %1 = dist.local.all_gather %0 on @m axes = ["y"] dim = 1
        : tensor<8x4xf32> -> tensor<8x16xf32>
    ```
  }]>;

defm AllSlice : Dist_LocalAndBufferOps<Dist_AllSliceMove,
    "Keep this device's part of a dimension (no communication)",
    [{
    Returns entries `[r*S, (r+1)*S)` of `dim`, with `S = result.shape[dim]`
    and `r` this device's index in the group; entries past the input are
    zero.

    ```mlir
    %1 = dist.local.all_slice %0 on @m axes = ["y"] dim = 0
        : tensor<8x16xf32> -> tensor<2x16xf32>
    ```
  }], [Pure]>;

defm AllToAll : Dist_LocalAndBufferOps<Dist_AllToAllMove,
    "Exchange chunks of one dimension for chunks of another",
    [{
    Cuts `to_dim` of the input into `q` chunks of `result.shape[to_dim]`
    entries (zero past the input), sends chunk `j` to group member `j`, and
    concatenates the received chunks in group order along `dim`, keeping the
    first `result.shape[dim]` entries.

    ```mlir
    %1 = dist.local.all_to_all %0 on @m axes = ["x"] dim = 0 to_dim = 1
        : tensor<8x16xf32> -> tensor<16x8xf32>
    ```
  }]>;

defm ReduceScatter : Dist_LocalAndBufferOps<Dist_ReduceScatterMove,
    "Reduce the group's buffers and keep this device's chunk",
    [{
    Cuts `dim` of the input into `q` chunks of `result.shape[dim]` entries
    (zero past the input), reduces chunk `r` over the group with
    `reduction`, and returns it.

    ```mlir
    %1 = dist.local.reduce_scatter %0 on @m axes = ["y"] dim = 0 reduction = sum
        : tensor<16x16xf32> -> tensor<4x16xf32>
    ```
  }]>;

defm AllReduce : Dist_LocalAndBufferOps<Dist_AllReduceMove,
    "Reduce the group's buffers elementwise",
    [{
    ```mlir
    %1 = dist.local.all_reduce %0 on @m axes = ["y"] reduction = max
        : tensor<16x16xf32> -> tensor<16x16xf32>
    ```
  }]>;

defm ReplicateToPartial : Dist_LocalAndBufferOps<Dist_ReplicateToPartialMove,
    "Keep the value on group member 0, the identity elsewhere",
    [{
    Member 0 of the group returns the input; for sum the others return 0 and
    for prod they return 1. For max, min and avg every member returns the
    input. (The 1s of prod also land in padding; padding is zero again after
    any reduction, since member 0's zero padding takes part in it.)

    ```mlir
    %1 = dist.local.replicate_to_partial %0 on @m axes = ["y"] reduction = sum
        : tensor<16xf32> -> tensor<16xf32>
    ```
  }], [Pure]>;

defm Permute : Dist_LocalAndBufferOps<Dist_LocalPermuteMove,
    "Exchange whole buffers between the mesh's ranks",
    [{
    Every rank receives its whole buffer from one rank (itself: keep the
    input) and sends its buffer to each rank that receives from it. Exactly
    one of two forms says who:

    - `sources`: the table, computed at compile time; `sources[rank]` is the
      world rank `rank` receives from (-1 outside the mesh);
    - `dim_axes`: the two layouts, per tensor dim `nSrc, srcAxes, nDst,
      dstAxes` (mesh axis indices, major to minor); the runtime computes the
      senders (receiver r's sender keeps r's coordinate on every axis that
      splits no dim in the source and, on the source's axes of dim d, takes
      the digits of r's shard index along d in the target). IR size and
      compile time then do not grow with the number of devices.

    ```mlir
    %1 = dist.local.permute %0 on @m sources = [0, 2, 1, 3]
        : tensor<8xf32> -> tensor<8xf32>
    %2 = dist.local.permute %0 on @m dim_axes = [1, 0, 1, 1]
        : tensor<8xf32> -> tensor<8xf32>
    ```
  }]>;

defm Redistribute : Dist_LocalAndBufferOps<Dist_LocalRedistributeMove,
    "Exchange boxes between world ranks along a static table",
    [{
    The per-device form of `dist.redistribute`. `table` lists transfers of
    `2 + 3 * rank` integers each: source and destination world ranks, the
    box's offset in the sender's input, its offset in the receiver's result,
    and its extents. Every rank does the transfers that name it (a transfer
    from a rank to itself is a local copy); elements of the result no
    transfer writes are padding. `source_mesh` and `mesh` name the meshes
    the input and the result live on (equal within one mesh).

    ```mlir
    %1 = dist.local.redistribute %0 from @m to @m
        table = [0, 1, 0, 2, 0, 0, 2, 2, 1, 0, 2, 0, 0, 0, 2, 2]
        : tensor<2x4xf32> -> tensor<4x2xf32>
    ```
  }]>;

defm PackSegments : Dist_LocalAndBufferOps<Dist_PackSegmentsLocal,
    "Regroup a device's per-segment blocks into one chunk per group member",
    [{
    Along `dim` the input holds this device's block of each segment in turn
    (`blocks[i]` rows for segment `i`, semantics §2 `segments`). The result is
    `parts` chunks of `sum(pieces)` rows: chunk `j` holds rows
    `[j*pieces[i], (j+1)*pieces[i])` of every segment's block, in segment
    order, zero past a block's end. A collective on an interleaved dim is the
    plain collective on this packed form (member `j` owns chunk `j`).

    ```mlir
    %1 = dist.local.pack_segments %0 dim = 0 blocks = [8, 4] pieces = [4, 2]
        parts = 2 : tensor<12x3xf32> -> tensor<12x3xf32>
    ```
  }], [Pure]>;

defm UnpackSegments : Dist_LocalAndBufferOps<Dist_UnpackSegmentsLocal,
    "Regroup one chunk per group member into per-segment blocks",
    [{
    The inverse of `dist.local.pack_segments`: the input is `parts` chunks of
    `sum(pieces)` rows along `dim`, each holding a piece of every segment;
    the result holds, per segment `i`, the concatenation of its pieces over
    the chunks, cut to `blocks[i]` rows. A gather delivers the members'
    buffers as such chunks.

    ```mlir
    %1 = dist.local.unpack_segments %0 dim = 0 blocks = [8, 4] pieces = [4, 2]
        parts = 2 : tensor<12x3xf32> -> tensor<12x3xf32>
    ```
  }], [Pure]>;

def Dist_LocalShardIndexOp : Dist_Op<"local.shard_index",
    [Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "This device's shard index along a dimension split by axes";
  let description = [{
    The index `s = sum_i c[a_i] * prod_{j>i} size(a_j)` of the block this
    device holds of a dimension split by `axes` (major to minor), from its
    mesh coordinate `c` (semantics §2). Local: no communication. `dist-localize`
    uses it to find where a device's block of an unevenly split dimension
    ends, so that padding never takes part in a reduction.

    ```mlir
    %s = dist.local.shard_index on @m axes = ["x", "y"] : index
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh, StrArrayAttr:$axes);
  let results = (outs Index:$result);
  let assemblyFormat = "`on` $mesh `axes` `=` $axes attr-dict `:` type($result)";
}

#endif // DIST_DIALECT_DIST_IR_DISTLOCALOPS_TD
