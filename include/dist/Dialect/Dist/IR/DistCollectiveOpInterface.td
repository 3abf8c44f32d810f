//===- DistCollectiveOpInterface.td - what a collective is ---*- tablegen -*-===//
//
// Every collective exists at three levels (global `dist.*`, per-device
// `dist.local.*`, on buffers `dist.buffer.*`). This interface lets passes ask
// an op which move it is and with which axes, dims and reduction, instead of
// listing op classes by hand. The family classes in DistCollectives.td
// implement it from one record per collective.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_DISTCOLLECTIVEOPINTERFACE_TD
#define DIST_DIALECT_DIST_IR_DISTCOLLECTIVEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Dist_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::dist";
  let description = [{
    A collective of the dist dialect: one planner move (semantics §3) at one
    of three levels, the global view (`dist.all_gather`), the per-device view
    (`dist.local.all_gather`) or buffers (`dist.buffer.all_gather`). The three
    ops of a move carry the same attributes and answer the same questions, so
    `dist-localize`, bufferization, `convert-dist-to-runtime` and the
    verifiers dispatch on `getMoveKind()` and `getLevel()` rather than on op
    classes.

    ```mlir
    // The same gather at the three levels; each answers getMoveKind() =
    // AllGather, getMoveAxes() = ["y"], getMoveDim() = 1.
    %1 = dist.all_gather %0 axes = ["y"] dim = 1
        : tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {"y"} ]>>
       -> tensor<16x16xf32, #dist.sharding<@m, [{"x"}, {} ]>>
    %3 = dist.local.all_gather %2 on @m axes = ["y"] dim = 1
        : tensor<8x4xf32> -> tensor<8x16xf32>
    dist.buffer.all_gather %4, %5 on @m axes = ["y"] dim = 1
        : memref<8x4xf32>, memref<8x16xf32>
    ```
  }];

  let methods = [
    StaticInterfaceMethod<
      /*desc=*/"The planner move this op performs.",
      /*retTy=*/"::dist::planner::MoveKind",
      /*methodName=*/"getMoveKind">,
    StaticInterfaceMethod<
      /*desc=*/[{
        Which view the op works in: global sharded tensors, one device's
        padded tensors, or that device's buffers.
      }],
      /*retTy=*/"::dist::CollectiveLevel",
      /*methodName=*/"getLevel">,
    InterfaceMethod<
      /*desc=*/"The tensor or buffer the move reads.",
      /*retTy=*/"::mlir::Value",
      /*methodName=*/"getInput">,
    InterfaceMethod<
      /*desc=*/[{
        The buffer the move writes (the buffer level is in
        destination-passing style); null at the other levels.
      }],
      /*retTy=*/"::mlir::Value",
      /*methodName=*/"getOutput",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return {};">,
    InterfaceMethod<
      /*desc=*/[{
        The mesh of the group at the local and buffer levels; null at the
        global level, where the mesh is in the types.
      }],
      /*retTy=*/"::mlir::FlatSymbolRefAttr",
      /*methodName=*/"getMeshAttr",
      /*args=*/(ins),
      /*methodBody=*/"",
      /*defaultImplementation=*/"return {};">,
    InterfaceMethod<
      /*desc=*/[{
        The mesh axes of the group, by name, major to minor; null when the
        op names none (a redistribute, whose table says who talks to whom,
        and a local permute, whose table or layouts do).
      }],
      /*retTy=*/"::mlir::ArrayAttr",
      /*methodName=*/"getMoveAxes">,
    InterfaceMethod<
      /*desc=*/[{
        The tensor dim the move gathers, splits or scatters (`dim`), if it
        has one.
      }],
      /*retTy=*/"std::optional<int64_t>",
      /*methodName=*/"getMoveDim">,
    InterfaceMethod<
      /*desc=*/"The dim an all-to-all moves the axes to (`to_dim`), if any.",
      /*retTy=*/"std::optional<int64_t>",
      /*methodName=*/"getMoveToDim">,
    InterfaceMethod<
      /*desc=*/[{
        The reduction the move reduces with, or makes the value partial
        with, if it has one.
      }],
      /*retTy=*/"std::optional<::dist::ReductionKind>",
      /*methodName=*/"getMoveReduction">,
  ];

  let extraClassDeclaration = [{
    /// The mesh axes of the group as indices into `mesh`'s axes (names the
    /// mesh lacks are skipped: the verifier reports them).
    ::llvm::SmallVector<int64_t> getAxisIndices(MeshOp mesh);
  }];
}

#endif // DIST_DIALECT_DIST_IR_DISTCOLLECTIVEOPINTERFACE_TD
