//===- DistBufferOps.td - collectives on buffers -------------*- tablegen -*-===//
//
// What the dist.local.* ops bufferize to: the same semantics on memrefs, in
// destination-passing style (read `input`, write `output`), which
// convert-dist-to-runtime turns into runtime calls and local data movement.
// Both buffers are contiguous (identity layout), as the runtime requires.
// The ops themselves are defined next to their local forms
// (Dist_LocalAndBufferOps in DistLocalOps.td), from one Dist_Collective
// record each.
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

// The buffer form of local op `dist.local.<c.mnemonic>`: its doc points there.
class Dist_BufferOp<Dist_Collective c>
    : Dist_Op<"buffer." # c.mnemonic, Dist_CollectiveTraits<c, "Buffer">.traits> {
  let summary = "`dist.local." # c.mnemonic # "` on buffers";
  let description = "Reads `input` and writes `output` as `dist.local." #
      c.mnemonic # "` computes its result; see that op. Produced by "
      "bufferization.\n\n```mlir\ndist.buffer." # c.mnemonic # " %0, %1 " #
      !if(!empty(c.exampleMesh), "", c.exampleMesh # " ") # c.exampleAttrs #
      "\n    : " # c.exampleShapes # "\n```\n";
  let arguments = !con((ins Arg<Dist_ContiguousMemRef, "", [MemRead]>:$input,
                            Arg<Dist_ContiguousMemRef, "", [MemWrite]>:$output),
                       c.meshAttrs, c.attrs);
  let assemblyFormat = "$input `,` $output " # c.meshFormat # " " # c.format #
      " attr-dict `:` type($input) `,` type($output)";
  let hasVerifier = 1;
  let extraClassDeclaration = Dist_CollectiveTraits<c, "Buffer">.decls;
  let extraClassDefinition = !if(c.isCollective, Dist_LocalVerifiers, "");
}

#endif // DIST_DIALECT_DIST_IR_DISTBUFFEROPS_TD
