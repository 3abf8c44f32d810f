//===- DistBufferOps.td - collectives on buffers -------------*- tablegen -*-===//
//
// What the dist.local.* ops bufferize to: the same semantics on memrefs, in
// destination-passing style (read `input`, write `output`), which
// convert-dist-to-runtime turns into runtime calls and local data movement.
// Both buffers are contiguous (identity layout), as the runtime requires.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_DISTBUFFEROPS_TD
#define DIST_DIALECT_DIST_IR_DISTBUFFEROPS_TD

def Dist_ContiguousMemRef : Type<
    And<[CPred<"::llvm::isa<::mlir::MemRefType>($_self)">,
         CPred<"::llvm::cast<::mlir::MemRefType>($_self).hasStaticShape()">,
         CPred<"::llvm::cast<::mlir::MemRefType>($_self).getLayout()"
               ".isIdentity()">]>,
    "statically shaped memref with the identity layout",
    "::mlir::MemRefType">;

class Dist_BufferOp<string mnemonic, string localOp, list<Trait> traits = []>
    : Dist_Op<"buffer." # mnemonic, !listconcat(traits,
        [DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  let summary = "`dist.local." # mnemonic # "` on buffers";
  let description = "Reads `input` and writes `output` as `" # localOp #
      "` computes its result; see that op. Produced by bufferization.";
  let hasVerifier = 1;
  dag buffers = (ins Arg<Dist_ContiguousMemRef, "", [MemRead]>:$input,
                     Arg<Dist_ContiguousMemRef, "", [MemWrite]>:$output,
                     FlatSymbolRefAttr:$mesh);
}

def Dist_BufferAllGatherOp
    : Dist_BufferOp<"all_gather", "dist.local.all_gather"> {
  let arguments = !con(buffers, (ins StrArrayAttr:$axes,
                                     ConfinedAttr<I64Attr, [IntNonNegative]>:$dim));
  let assemblyFormat = [{
    $input `,` $output `on` $mesh `axes` `=` $axes `dim` `=` $dim attr-dict
    `:` type($input) `,` type($output)
  }];
}

def Dist_BufferAllSliceOp
    : Dist_BufferOp<"all_slice", "dist.local.all_slice"> {
  let arguments = !con(buffers, (ins StrArrayAttr:$axes,
                                     ConfinedAttr<I64Attr, [IntNonNegative]>:$dim));
  let assemblyFormat = [{
    $input `,` $output `on` $mesh `axes` `=` $axes `dim` `=` $dim attr-dict
    `:` type($input) `,` type($output)
  }];
}

def Dist_BufferAllToAllOp
    : Dist_BufferOp<"all_to_all", "dist.local.all_to_all"> {
  let arguments = !con(buffers, (ins StrArrayAttr:$axes,
                                     ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                                     ConfinedAttr<I64Attr, [IntNonNegative]>:$to_dim));
  let assemblyFormat = [{
    $input `,` $output `on` $mesh `axes` `=` $axes `dim` `=` $dim `to_dim` `=`
    $to_dim attr-dict `:` type($input) `,` type($output)
  }];
}

def Dist_BufferReduceScatterOp
    : Dist_BufferOp<"reduce_scatter", "dist.local.reduce_scatter"> {
  let arguments = !con(buffers, (ins StrArrayAttr:$axes,
                                     ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                                     Dist_ReductionKind:$reduction));
  let assemblyFormat = [{
    $input `,` $output `on` $mesh `axes` `=` $axes `dim` `=` $dim `reduction`
    `=` $reduction attr-dict `:` type($input) `,` type($output)
  }];
}

def Dist_BufferAllReduceOp
    : Dist_BufferOp<"all_reduce", "dist.local.all_reduce"> {
  let arguments = !con(buffers, (ins StrArrayAttr:$axes,
                                     Dist_ReductionKind:$reduction));
  let assemblyFormat = [{
    $input `,` $output `on` $mesh `axes` `=` $axes `reduction` `=` $reduction
    attr-dict `:` type($input) `,` type($output)
  }];
}

def Dist_BufferReplicateToPartialOp
    : Dist_BufferOp<"replicate_to_partial", "dist.local.replicate_to_partial"> {
  let arguments = !con(buffers, (ins StrArrayAttr:$axes,
                                     Dist_ReductionKind:$reduction));
  let assemblyFormat = [{
    $input `,` $output `on` $mesh `axes` `=` $axes `reduction` `=` $reduction
    attr-dict `:` type($input) `,` type($output)
  }];
}

def Dist_BufferPermuteOp : Dist_BufferOp<"permute", "dist.local.permute"> {
  let arguments = !con(buffers, (ins OptionalAttr<DenseI64ArrayAttr>:$sources,
                                     OptionalAttr<DenseI64ArrayAttr>:$dim_axes));
  let assemblyFormat = [{
    $input `,` $output `on` $mesh (`sources` `=` $sources^)?
    (`dim_axes` `=` $dim_axes^)? attr-dict `:` type($input) `,` type($output)
  }];
}

def Dist_BufferRedistributeOp
    : Dist_BufferOp<"redistribute", "dist.local.redistribute"> {
  let arguments = !con(buffers, (ins FlatSymbolRefAttr:$source_mesh,
                                     DenseI64ArrayAttr:$table));
  let assemblyFormat = [{
    $input `,` $output `from` $source_mesh `to` $mesh `table` `=` $table
    attr-dict `:` type($input) `,` type($output)
  }];
}

class Dist_BufferSegmentsOp<string mnemonic>
    : Dist_Op<"buffer." # mnemonic> {
  let summary = "`dist.local." # mnemonic # "` on buffers";
  let description = "Reads `input` and writes `output` as `dist.local." #
      mnemonic # "` computes its result; see that op. Produced by "
      "bufferization.";
  let arguments = (ins Arg<Dist_ContiguousMemRef, "", [MemRead]>:$input,
                       Arg<Dist_ContiguousMemRef, "", [MemWrite]>:$output,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                       DenseI64ArrayAttr:$blocks, DenseI64ArrayAttr:$pieces,
                       ConfinedAttr<I64Attr, [IntPositive]>:$parts);
  let hasVerifier = 1;
  let assemblyFormat = [{
    $input `,` $output `dim` `=` $dim `blocks` `=` $blocks `pieces` `=`
    $pieces `parts` `=` $parts attr-dict `:` type($input) `,` type($output)
  }];
}

def Dist_BufferPackSegmentsOp : Dist_BufferSegmentsOp<"pack_segments">;
def Dist_BufferUnpackSegmentsOp : Dist_BufferSegmentsOp<"unpack_segments">;

#endif // DIST_DIALECT_DIST_IR_DISTBUFFEROPS_TD
