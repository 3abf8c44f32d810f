//===- DistCollectives.td - one record per collective --------*- tablegen -*-===//
//
// A collective exists at three levels (DistOps.td, DistLocalOps.td,
// DistBufferOps.td). What its ops share -- the move kind, the attributes and
// their assembly, which questions of Dist_CollectiveOpInterface it answers --
// is written once here, and the family classes build each level's op from it.
// docs/compiler.md, "Adding a collective", lists the places to touch.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_DISTCOLLECTIVES_TD
#define DIST_DIALECT_DIST_IR_DISTCOLLECTIVES_TD

include "dist/Dialect/Dist/IR/DistCollectiveOpInterface.td"
include "mlir/IR/SymbolInterfaces.td"

// One collective (or, with isCollective = 0, a local op that has a buffer
// form but talks to no other device).
class Dist_Collective<string kind, string name> {
  // The planner::MoveKind enumerator.
  string moveKind = kind;
  string mnemonic = name;
  bit isCollective = 1;
  // The move's attributes, after the operands and the mesh, and their
  // assembly.
  dag attrs = (ins);
  string format = "";
  // Which of the interface's questions the attributes answer.
  bit hasAxes = 1;
  bit hasDim = 0;
  bit hasToDim = 0;
  bit reduces = 0;
  // The local and buffer levels name the mesh they run on.
  dag meshAttrs = (ins FlatSymbolRefAttr:$mesh);
  string meshFormat = "`on` $mesh";
  // The example of the buffer-level op's doc: its mesh and attributes in
  // assembly and the shapes it reads and writes.
  string exampleMesh = "on @m";
  string exampleAttrs = "";
  string exampleShapes = "";
}

// Attribute fragments the records share.
defvar Dist_AxesAttr = (ins StrArrayAttr:$axes);
defvar Dist_DimAttr = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dim);
defvar Dist_ToDimAttr = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$to_dim);
defvar Dist_ReductionAttr = (ins Dist_ReductionKind:$reduction);

def Dist_AllGatherMove : Dist_Collective<"AllGather", "all_gather"> {
  let attrs = !con(Dist_AxesAttr, Dist_DimAttr);
  let format = "`axes` `=` $axes `dim` `=` $dim";
  let hasDim = 1;
  let exampleAttrs = "axes = [\"y\"] dim = 1";
  let exampleShapes = "memref<8x4xf32>, memref<8x16xf32>";
}

def Dist_AllSliceMove : Dist_Collective<"AllSlice", "all_slice"> {
  let attrs = !con(Dist_AxesAttr, Dist_DimAttr);
  let format = "`axes` `=` $axes `dim` `=` $dim";
  let hasDim = 1;
  let exampleAttrs = "axes = [\"y\"] dim = 0";
  let exampleShapes = "memref<8x16xf32>, memref<2x16xf32>";
}

def Dist_AllToAllMove : Dist_Collective<"AllToAll", "all_to_all"> {
  let attrs = !con(Dist_AxesAttr, Dist_DimAttr, Dist_ToDimAttr);
  let format = "`axes` `=` $axes `dim` `=` $dim `to_dim` `=` $to_dim";
  let hasDim = 1;
  let hasToDim = 1;
  let exampleAttrs = "axes = [\"x\"] dim = 0 to_dim = 1";
  let exampleShapes = "memref<8x16xf32>, memref<16x8xf32>";
}

def Dist_ReduceScatterMove
    : Dist_Collective<"ReduceScatter", "reduce_scatter"> {
  let attrs = !con(Dist_AxesAttr, Dist_DimAttr, Dist_ReductionAttr);
  let format = "`axes` `=` $axes `dim` `=` $dim `reduction` `=` $reduction";
  let hasDim = 1;
  let reduces = 1;
  let exampleAttrs = "axes = [\"y\"] dim = 0 reduction = sum";
  let exampleShapes = "memref<16x16xf32>, memref<4x16xf32>";
}

def Dist_AllReduceMove : Dist_Collective<"AllReduce", "all_reduce"> {
  let attrs = !con(Dist_AxesAttr, Dist_ReductionAttr);
  let format = "`axes` `=` $axes `reduction` `=` $reduction";
  let reduces = 1;
  let exampleAttrs = "axes = [\"y\"] reduction = max";
  let exampleShapes = "memref<16x16xf32>, memref<16x16xf32>";
}

def Dist_ReplicateToPartialMove
    : Dist_Collective<"ReplicateToPartial", "replicate_to_partial"> {
  let attrs = !con(Dist_AxesAttr, Dist_ReductionAttr);
  let format = "`axes` `=` $axes `reduction` `=` $reduction";
  let reduces = 1;
  let exampleAttrs = "axes = [\"y\"] reduction = sum";
  let exampleShapes = "memref<16xf32>, memref<16xf32>";
}

// The global permute names the axes whose coordinate changes; the local one
// carries who sends to whom instead (a table, or the two layouts).
def Dist_PermuteMove : Dist_Collective<"Permute", "permute"> {
  let attrs = Dist_AxesAttr;
  let format = "`axes` `=` $axes";
}

def Dist_LocalPermuteMove : Dist_Collective<"Permute", "permute"> {
  let attrs = (ins OptionalAttr<DenseI64ArrayAttr>:$sources,
                   OptionalAttr<DenseI64ArrayAttr>:$dim_axes);
  let format = "(`sources` `=` $sources^)? (`dim_axes` `=` $dim_axes^)?";
  let hasAxes = 0;
  let exampleAttrs = "sources = [0, 2, 1, 3]";
  let exampleShapes = "memref<8xf32>, memref<8xf32>";
}

// A redistribute names no axes: its layouts (global) or its table (local)
// say who sends what.
def Dist_RedistributeMove : Dist_Collective<"Redistribute", "redistribute"> {
  let hasAxes = 0;
}

def Dist_LocalRedistributeMove
    : Dist_Collective<"Redistribute", "redistribute"> {
  let hasAxes = 0;
  let meshAttrs = (ins FlatSymbolRefAttr:$source_mesh, FlatSymbolRefAttr:$mesh);
  let meshFormat = "`from` $source_mesh `to` $mesh";
  let exampleMesh = "from @m to @m";
  let attrs = (ins DenseI64ArrayAttr:$table);
  let format = "`table` `=` $table";
  let exampleAttrs = "table = [0, 1, 0, 2, 0, 0, 2, 2, 1, 0, 2, 0, 0, 0, 2, 2]";
  let exampleShapes = "memref<2x4xf32>, memref<4x2xf32>";
}

// Segment packing regroups rows on one device (semantics §2 `segments`).
class Dist_SegmentsLocalOp<string name> : Dist_Collective<"", name> {
  let isCollective = 0;
  let hasAxes = 0;
  let meshAttrs = (ins);
  let meshFormat = "";
  let exampleMesh = "";
  let attrs = (ins ConfinedAttr<I64Attr, [IntNonNegative]>:$dim,
                   DenseI64ArrayAttr:$blocks, DenseI64ArrayAttr:$pieces,
                   ConfinedAttr<I64Attr, [IntPositive]>:$parts);
  let format = "`dim` `=` $dim `blocks` `=` $blocks `pieces` `=` $pieces "
               "`parts` `=` $parts";
  let exampleAttrs = "dim = 0 blocks = [8, 4] pieces = [4, 2] parts = 2";
  let exampleShapes = "memref<12x3xf32>, memref<12x3xf32>";
}
def Dist_PackSegmentsLocal : Dist_SegmentsLocalOp<"pack_segments">;
def Dist_UnpackSegmentsLocal : Dist_SegmentsLocalOp<"unpack_segments">;

// A local op's buffer form, the dist.buffer.* op class it bufferizes to
// (dist::BufferizesTo in DistCollectives.h).
class Dist_BufferizesTo<string bufferOp>
    : ParamNativeOpTrait<"BufferizesTo", bufferOp> {
  let cppNamespace = "::dist";
}

// At the local and buffer levels the verifiers are the same per move (the
// shapes they check are the local ones either way).
defvar Dist_LocalVerifiers = [{
  ::mlir::LogicalResult $cppClass::verify() {
    return ::dist::verifyLocalCollective(*this);
  }
  ::mlir::LogicalResult
  $cppClass::verifySymbolUses(::mlir::SymbolTableCollection &table) {
    return ::dist::verifyLocalCollectiveSymbols(*this, table);
  }
}];

// The traits of an op of collective `c` at `level` (Global, Local, Buffer):
// the interface, answered from the record.
class Dist_CollectiveTraits<Dist_Collective c, string level> {
  list<Trait> traits = !if(c.isCollective,
      [DeclareOpInterfaceMethods<SymbolUserOpInterface>,
       Dist_CollectiveOpInterface], []);
  code decls = !if(c.isCollective, !strconcat(
    "static ::dist::planner::MoveKind getMoveKind() {\n"
    "  return ::dist::planner::MoveKind::", c.moveKind, ";\n}\n",
    "static ::dist::CollectiveLevel getLevel() {\n"
    "  return ::dist::CollectiveLevel::", level, ";\n}\n",
    "::mlir::ArrayAttr getMoveAxes() { return ",
    !if(c.hasAxes, "getAxesAttr()", "{}"), "; }\n",
    "std::optional<int64_t> getMoveDim() { return ",
    !if(c.hasDim, "static_cast<int64_t>(getDim())", "std::nullopt"), "; }\n",
    "std::optional<int64_t> getMoveToDim() { return ",
    !if(c.hasToDim, "static_cast<int64_t>(getToDim())", "std::nullopt"),
    "; }\n",
    "std::optional<::dist::ReductionKind> getMoveReduction() { return ",
    !if(c.reduces, "getReduction()", "std::nullopt"), "; }\n"), "");
}

#endif // DIST_DIALECT_DIST_IR_DISTCOLLECTIVES_TD
