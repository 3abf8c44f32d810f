//===- ValueLayouts.h - layouts for computed values -------------*- C++ -*-===//
//
// A dist layout lives in a tensor type's encoding, but importers state it
// beside the value: upstream's shard.shard, `{dist.sharding = ...}` on an op
// (what a front door writes for a JAX sharding constraint, semantics §6).
// Both give the value its layout the same way: when the value is the end of
// a destination chain (a linalg result whose init is a tensor.empty, as
// dist's global view writes a computed layout) the chain's types take it;
// otherwise a copy into a tensor of the layout follows the value and the
// producer stays free (dist-partition computes it where it is cheapest,
// normally in that layout, which makes the copy local).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_VALUELAYOUTS_H
#define DIST_DIALECT_DIST_TRANSFORMS_VALUELAYOUTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

namespace dist {

/// Users that take a value of any layout besides dist's own (linalg inputs,
/// elementwise ops, dist.reshard, returns): an importer's annotation ops.
using AcceptsAnyLayout = llvm::function_ref<bool(mlir::Operation *)>;

/// The values that take the layout together when `value` (an op result)
/// does: `value`, the init it is tied to, that init's init, ... down to the
/// tensor.empty that starts the chain. Empty when there is no such chain,
/// or retyping it could break a user.
llvm::SmallVector<mlir::Value> destinationChain(mlir::Value value,
                                                AcceptsAnyLayout alsoAccepts);

/// A copy of `value` into a new empty tensor of `type` (the same shape and
/// element type; its layout, or none), at `builder`'s insertion point: how
/// dist's global view moves a value into a layout.
mlir::Value copyIntoType(mlir::OpBuilder &builder, mlir::Location loc,
                         mlir::Value value, mlir::RankedTensorType type);

/// A copy of `value` into an empty tensor of `type` (its layout), right after
/// the value is defined.
mlir::Value materializeLayout(mlir::Value value, mlir::RankedTensorType type,
                              mlir::Location loc);

/// Gives op result `value` the layout of `type`: the destination chain's
/// types when there is one, else every use that does not tie types (a DPS
/// init keeps the free value) reads a copy in that layout.
void giveLayout(mlir::Value value, mlir::RankedTensorType type,
                mlir::Location loc);

/// Gives block argument `value` (a function argument) the type `type` (a
/// layout added). A use whose type is tied to another value's (an scf.for
/// init, tied to its region argument and result; a destination-style init)
/// reads a copy of it in the old, free type instead, so the IR stays valid
/// and what it is tied to stays dist-partition's choice.
void retypeArgument(mlir::BlockArgument value, mlir::RankedTensorType type);

/// Whether `use` ties its value's type to another's: an scf.for init (to its
/// region argument and result), an scf.yield operand, a destination-style
/// init (to its result).
bool isTiedUse(mlir::OpOperand &use);

/// Makes every tied use of `value` read a copy of it in type `free` (its
/// type before it took a layout).
void freeTiedUses(mlir::Value value, mlir::RankedTensorType free);

} // namespace dist

#endif // DIST_DIALECT_DIST_TRANSFORMS_VALUELAYOUTS_H
