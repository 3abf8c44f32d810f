//===- DistBase.td - dist dialect definition and enums ------*- tablegen -*-===//
//
// The `dist` dialect describes tensors sharded over an N-dimensional device
// mesh and the collectives that move them between layouts.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_DISTBASE_TD
#define DIST_DIALECT_DIST_IR_DISTBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::dist";
  let summary = "Sharded tensors on device meshes and the collectives that reshard them";
  let description = [{
    The `dist` dialect models tensors that are distributed over an
    N-dimensional device mesh. A mesh is a symbol (`dist.mesh`) with named
    axes; a layout is a `#dist.sharding` attribute carried as the *encoding*
    of a tensor type, so every SSA value states how it is laid out.

    Values are written in the *global* view: `tensor<1024x1024xf32, #s>` is the
    whole logical tensor, and `#s` says which block each device holds.
    `dist.reshard` requests a change of layout; `dist-lower-reshard` replaces
    it by the cheapest sequence of the explicit collectives defined here.

    ```mlir
    dist.mesh @mesh = <["dp"=4, "tp"=8]>
    func.func @f(%x: tensor<1024x1024xf32, #dist.sharding<@mesh, [{"dp"}, {"tp"} ]>>)
        -> tensor<1024x1024xf32, #dist.sharding<@mesh, [{"tp"}, {"dp"} ]>> {
      %y = dist.reshard %x : tensor<1024x1024xf32, #dist.sharding<@mesh, [{"dp"}, {"tp"} ]>>
                          -> tensor<1024x1024xf32, #dist.sharding<@mesh, [{"tp"}, {"dp"} ]>>
      return %y : tensor<1024x1024xf32, #dist.sharding<@mesh, [{"tp"}, {"dp"} ]>>
    }
    ```
  }];
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    /// Defined next to the attribute storage classes.
    void registerAttributes();

    /// The plan cache of this context for `directory` (empty: memory only),
    /// created on first use and shared by every pass instance and thread.
    /// `onWarning` receives the warnings of creating it (unusable directory).
    ::dist::planner::PlanCache &
    getPlanCache(::llvm::StringRef directory,
                 const ::dist::planner::PlanCache::WarningHandler &onWarning);

  private:
    std::mutex planCachesMutex;
    ::llvm::StringMap<std::unique_ptr<::dist::planner::PlanCache>> planCaches;

  public:
  }];
}

def Dist_ReductionKind : I32EnumAttr<"ReductionKind",
    "how partial values combine into the global value", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>,
      I32EnumAttrCase<"prod", 3>,
      I32EnumAttrCase<"avg", 4>
    ]> {
  let cppNamespace = "::dist";
}

#endif // DIST_DIALECT_DIST_IR_DISTBASE_TD
