//===- PartitionableOpInterface.td - ops dist-partition handles -*- tablegen -*-===//

#ifndef DIST_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_TD
#define DIST_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Dist_PartitionableOpInterface : OpInterface<"PartitionableOpInterface"> {
  let cppNamespace = "::dist";
  let description = [{
    An op on global-view tensors that `dist-partition` can give a sharded
    form, and `dist-localize` the per-device form of (as upstream's
    `ShardingInterface` lets other dialects plug into `shard`). Ops of other
    dialects implement it through external models
    (`dist::registerPartitionModels`): one generic model for every linalg
    structured op, from its indexing maps; one per other op family (tensor
    reshapes, slices, concat, pad; `linalg.softmax`).

    A *strategy* is one way to run the op on sharded data: the layout every
    tensor operand must arrive in and the layout of every result. The
    partitioner chooses one strategy per op, jointly, minimising the modelled
    reshard cost of the whole function; the layouts it writes into the types
    then say everything `localize` needs, which makes no decision of its own.

    ```mlir
    // After dist-partition: linalg.matmul's strategy that splits the
    // reduction loop over "tp" reads both operands split on it and yields a
    // partial sum.
    %y = linalg.matmul
        ins(%a, %b : tensor<8x16xf32, #dist.sharding<@m, [{}, {"tp"} ]>>,
                     tensor<16x4xf32, #dist.sharding<@m, [{"tp"}, {} ]>>)
        outs(%init : tensor<8x4xf32, #dist.sharding<@m, [{}, {} ], partial = sum {"tp"}>>)
        -> tensor<8x4xf32, #dist.sharding<@m, [{}, {} ], partial = sum {"tp"}>>
    ```
  }];

  let methods = [
    InterfaceMethod<
      /*desc=*/[{
        The strategies of this op on `query.mesh`, given the layouts each
        operand may arrive in (`query.offered`, which seeds the search on
        meshes of many axes and says which partial values may flow in) and
        each result's declared layout, if any. An error (a message naming
        the reason) when the op cannot be partitioned at all; notes explain
        strategies that were left out (e.g. a loop that cannot be split).
      }],
      /*retTy=*/"::llvm::Expected<::dist::PartitionOptions>",
      /*methodName=*/"getPartitionOptions",
      /*args=*/(ins "const ::dist::PartitionQuery &":$query)>,
    InterfaceMethod<
      /*desc=*/[{
        Whether `localize` can build this op's per-device form from the
        layouts its types say (hand-written IR may say layouts the
        partitioner would not choose); if not, a located error. Called
        before any op is rewritten, so that dist-localize reports every
        such op and never fails half-way. The default accepts every layout.
      }],
      /*retTy=*/"::mlir::LogicalResult",
      /*methodName=*/"verifyLocalizable",
      /*args=*/(ins "const ::dist::LocalizeContext &":$context),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{ return ::mlir::success(); }]>,
    InterfaceMethod<
      /*desc=*/[{
        Gives result `index` the type `type` (its shape and element type,
        the chosen layout as encoding) once dist-partition has chosen it.
        The default sets the type; an op whose attributes carry the type too
        (a constant's value) updates them with it.
      }],
      /*retTy=*/"void",
      /*methodName=*/"setResultLayout",
      /*args=*/(ins "unsigned":$index, "::mlir::RankedTensorType":$type),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        $_op->getResult(index).setType(type);
      }]>,
    InterfaceMethod<
      /*desc=*/[{
        Builds the per-device form of this op (whose types say the chosen
        layouts) at the rewriter's insertion point, reading the local
        operands `localOperands`, and returns its local results. The default
        rebuilds the op as it is on the local types, which is right for ops
        whose meaning does not depend on positions.
      }],
      /*retTy=*/"::mlir::FailureOr<::llvm::SmallVector<::mlir::Value>>",
      /*methodName=*/"localize",
      /*args=*/(ins "::mlir::RewriterBase &":$rewriter,
                    "::mlir::ValueRange":$localOperands,
                    "const ::dist::LocalizeContext &":$context),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::dist::localizeByRetyping($_op, rewriter, localOperands,
                                          context);
      }]>,
  ];
}

#endif // DIST_DIALECT_DIST_INTERFACES_PARTITIONABLEOPINTERFACE_TD
