//===- DistCollectives.h - what a collective op is --------------*- C++ -*-===//
//
// The C++ side of DistCollectives.td: the levels a collective exists at, the
// trait that pairs a local op with its buffer form, and
// dist::CollectiveOpInterface.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_DISTCOLLECTIVES_H
#define DIST_DIALECT_DIST_IR_DISTCOLLECTIVES_H

#include "dist/Dialect/Dist/IR/DistAttrs.h"
#include "dist/Planner/Move.h"

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"

#include <optional>

namespace dist {

class MeshOp;

/// The view a collective works in: global sharded tensors (`dist.*`), one
/// device's padded tensors (`dist.local.*`), or that device's buffers
/// (`dist.buffer.*`).
enum class CollectiveLevel { Global, Local, Buffer };

/// The op trait of a local op whose bufferized form is `BufferOpT` (same
/// attributes, input and output buffers for operand and result). Not in a
/// namespace OpTrait of its own: that would hide mlir::OpTrait wherever both
/// namespaces are used.
template <typename BufferOpT> struct BufferizesTo {
  template <typename ConcreteOp>
  class Impl : public mlir::OpTrait::TraitBase<ConcreteOp, Impl> {
  public:
    using BufferOp = BufferOpT;
  };
};

} // namespace dist

#include "dist/Dialect/Dist/IR/DistCollectiveOpInterface.h.inc"

namespace dist {
/// Whether `op` is a collective at `level`.
inline bool isCollectiveAt(mlir::Operation *op, CollectiveLevel level) {
  auto collective = llvm::dyn_cast<CollectiveOpInterface>(op);
  return collective && collective.getLevel() == level;
}

/// The verifiers the collective families share (DistOps.cpp for the global
/// level, DistLocalOps.cpp for the local and buffer levels), called by the
/// definitions DistCollectives.td generates.
mlir::LogicalResult verifyMoveOp(CollectiveOpInterface op);
mlir::LogicalResult verifyMoveSymbols(CollectiveOpInterface op,
                                      mlir::SymbolTableCollection &table);
mlir::LogicalResult verifyLocalCollective(CollectiveOpInterface op);
mlir::LogicalResult
verifyLocalCollectiveSymbols(CollectiveOpInterface op,
                             mlir::SymbolTableCollection &table);
} // namespace dist

#endif // DIST_DIALECT_DIST_IR_DISTCOLLECTIVES_H
