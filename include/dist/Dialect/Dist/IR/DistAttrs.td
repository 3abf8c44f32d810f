//===- DistAttrs.td - dist attributes -----------------------*- tablegen -*-===//

#ifndef DIST_DIALECT_DIST_IR_DISTATTRS_TD
#define DIST_DIALECT_DIST_IR_DISTATTRS_TD

include "dist/Dialect/Dist/IR/DistBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/TensorEncoding.td"

class Dist_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Dist_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Dist_DimShardingAttr : Dist_Attr<"DimSharding", "dim"> {
  let summary = "The mesh axes that split one tensor dimension, major to minor";
  let description = [{
    One entry of a `#dist.sharding`: the ordered list of mesh axes that split
    a tensor dimension, most significant first. `{}` means the dimension is
    not split. Inside `#dist.sharding` it is written without its prefix.

    An interleaved dimension (a fused QKV or gate/up weight) is followed by
    `segments [n_1, ..., n_k]`: the dimension is the concatenation of k
    sub-tensors, each split by the axes on its own (semantics §2). Segments on a
    dimension without axes, or a single segment, change nothing and are
    dropped (the canonical form).

    ```mlir
    #dist.dim<{"x", "y"}>   // split 4-way on a 2x2 mesh, "x" major
    #dist.dim<{}>           // not split
    #dist.dim<{"tp"} segments [4096, 1024, 1024]>  // [Q_r; K_r; V_r] on rank r
    ```
  }];
  let parameters = (ins OptionalArrayRefParameter<"::mlir::StringAttr">:$axes,
                        OptionalArrayRefParameter<"int64_t">:$segments);
  let builders = [
    AttrBuilder<(ins "::llvm::ArrayRef<::mlir::StringAttr>":$axes), [{
      return $_get($_ctxt, axes, ::llvm::ArrayRef<int64_t>());
    }]>
  ];
  let assemblyFormat = "`<` custom<DimBody>($axes, $segments) `>`";
  let genVerifyDecl = 1;
}

def Dist_ShardingAttr : Dist_Attr<"Sharding", "sharding",
    [DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let summary = "A tensor layout on a mesh: split, replicated and partial axes";
  let description = [{
    The layout of a tensor over the mesh `@mesh`, used as the encoding of the
    (global) tensor type. There is one `{...}` per tensor dimension listing
    the mesh axes that split it, major to minor. The optional
    `partial = KIND {axes}` clause says the local values are partial results
    that must be combined with KIND (`sum`, `max`, `min`, `prod`, `avg`) over
    the listed axes. Every other mesh axis replicates. Each axis appears at
    most once in the whole attribute.

    Device with coordinate `c` holds, for dim `d` split by `[a_1..a_k]`, the
    block number `s_d = sum_i c[a_i] * prod_{j>i} size(a_j)` of size
    `ceil(N_d / prod_i size(a_i))`; the last blocks of uneven dims are padded.

    ```mlir
    dist.mesh @m = <["x"=2, "y"=2, "z"=2]>
    // 16x16 split 2-way on rows ("x") and 4-way on columns ("y" major, "z" minor)
    tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {"y", "z"} ]>>
    // rows split by "x", values partial sums over "y", replicated over "z"
    tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {} ], partial = sum {"y"}>>
    ```
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    OptionalArrayRefParameter<"DimShardingAttr">:$dims,
    DefaultValuedParameter<"::dist::ReductionKind",
                           "::dist::ReductionKind::sum">:$partial_kind,
    OptionalArrayRefParameter<"::mlir::StringAttr">:$partial_axes
  );
  // Without partial axes the kind means nothing, and the printed form omits
  // it: the builder resets it to sum, so that two layouts that print alike
  // are one attribute (a kind left over from dropped partial axes once made
  // equal-looking layouts compare unequal).
  let skipDefaultBuilders = 1;
  let builders = [
    AttrBuilder<(ins "::mlir::FlatSymbolRefAttr":$mesh,
                     "::llvm::ArrayRef<DimShardingAttr>":$dims,
                     "::dist::ReductionKind":$partial_kind,
                     "::llvm::ArrayRef<::mlir::StringAttr>":$partial_axes), [{
      if (partial_axes.empty())
        partial_kind = ::dist::ReductionKind::sum;
      return $_get($_ctxt, mesh, dims, partial_kind, partial_axes);
    }]>
  ];
  let assemblyFormat = [{
    `<` $mesh `,` `[` custom<DimShardings>($dims) `]`
    `` custom<PartialClause>($partial_kind, $partial_axes) `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True if `axis` splits a dim or is partial.
    bool usesAxis(::llvm::StringRef axis) const;
    bool isPartial() const { return !getPartialAxes().empty(); }
    /// True if every device holds the whole tensor (no axis splits a dim or
    /// is partial).
    bool isReplicated() const;
    /// The sharding text after the mesh, e.g. `[{"x"}, {} ], partial = sum {"y"}`.
    std::string getBodyString() const;
  }];
}

#endif // DIST_DIALECT_DIST_IR_DISTATTRS_TD
