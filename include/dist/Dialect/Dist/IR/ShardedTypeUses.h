//===- ShardedTypeUses.h - meshes named by sharded types -------*- C++ -*-===//
//
// A `#dist.sharding` names a mesh symbol and its axes, which only the
// module's symbol table can resolve, so the attribute cannot check them when
// it is parsed. The dist ops check their own types (verifySymbolUses); this
// checks every other sharded type in a function: its signature, its block
// arguments and the results of the ops it holds.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_IR_SHARDEDTYPEUSES_H
#define DIST_DIALECT_DIST_IR_SHARDEDTYPEUSES_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace dist {

/// Makes func.func a symbol user whose verifySymbolUses requires the mesh of
/// every sharded type in the function to exist and to have every axis the
/// type names (a located error otherwise). MLIR runs it with the module's
/// symbol table whenever the module is verified.
void registerShardedTypeUsesExternalModels(mlir::DialectRegistry &registry);

} // namespace dist

#endif // DIST_DIALECT_DIST_IR_SHARDEDTYPEUSES_H
