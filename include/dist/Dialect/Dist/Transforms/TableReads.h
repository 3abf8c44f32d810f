//===- TableReads.h - tables a linalg body looks up -------------*- C++ -*-===//
//
// Exporters write an embedding lookup (torch-mlir's aten.embedding, IREE's
// stablehlo.gather) as a linalg.generic over the ids whose body reads the
// table with `tensor.extract %table[%row, %j]`: the row comes from the data
// (an id), the other indices are loop positions (`linalg.index`). The table
// is not an operand, so nothing would say which part of it a device needs.
//
// dist-partition gives such a table to the op as an input (the *lookup
// form*, docs/partitioning.md "Lookups"): its indexing map sends each dim
// read at a loop's position to that loop and each dim read at a data row to
// 0, and its block argument stays unused; the body keeps reading the table
// through the extract. The loop dims then split like any operand's; a data
// dim split over axes A leaves each device the rows of its block, where it
// finds the ids that fall there and contributes the identity of addition
// elsewhere, so the result is a partial sum over A (semantics §6, "Lookups").
//
//===----------------------------------------------------------------------===//

#ifndef DIST_DIALECT_DIST_TRANSFORMS_TABLEREADS_H
#define DIST_DIALECT_DIST_TRANSFORMS_TABLEREADS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <optional>

namespace dist {

/// How a linalg op's body reads one tensor it captures.
struct TableRead {
  /// The one read: directly in the op's body, of the table.
  mlir::tensor::ExtractOp extract;
  /// Per table dim: the loop whose `linalg.index` is the index, or -1 for a
  /// *data dim*, whose index does not depend on any loop position.
  llvm::SmallVector<int64_t> dimLoops;

  bool hasDataDims() const { return llvm::is_contained(dimLoops, -1); }
};

/// The read of `table` (a value from outside `op`) when it is a lookup: one
/// `tensor.extract` directly in the body and no other use inside `op`, each
/// index either a loop's `linalg.index` (every loop at most once, over the
/// dim's whole extent) or independent of every loop position; nullopt
/// otherwise.
std::optional<TableRead> matchTableRead(mlir::linalg::GenericOp op,
                                        mlir::Value table);

/// The indexing map of a table given as an input: loop dims to their loop,
/// data dims to 0.
mlir::AffineMap tableIndexingMap(const TableRead &read, unsigned numLoops,
                                 mlir::MLIRContext *context);

/// The read behind input `operand` of a lookup form, when it is one: an
/// input whose block argument is unused, whose value the body looks up,
/// with the map tableIndexingMap gives.
std::optional<TableRead> lookupTableRead(mlir::linalg::LinalgOp op,
                                         mlir::OpOperand &operand);

/// Whether every result of `op` is the looked-up value itself, or a
/// conversion of it that keeps a zero a zero, and every loop is parallel:
/// then a device that holds only some rows may contribute zero for the
/// others (the result a partial sum).
bool yieldsOnlyTableValue(mlir::linalg::LinalgOp op, const TableRead &read);

} // namespace dist

#endif // DIST_DIALECT_DIST_TRANSFORMS_TABLEREADS_H
