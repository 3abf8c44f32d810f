//===- TableModel.h - lookups in the linalg model ----------*- C++ -*-===//
//
// The part of the linalg model (LinalgModel.cpp) that is particular to the
// lookup form (dist/Dialect/Dist/Transforms/TableReads.h): strategies that
// split a table's rows, and the per-device body that reads the local table.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_TABLEMODEL_H
#define DIST_LIB_DIALECT_DIST_TRANSFORMS_PARTITIONMODELS_TABLEMODEL_H

#include "dist/Dialect/Dist/Interfaces/PartitionableOpInterface.h"
#include "dist/Dialect/Dist/Transforms/TableReads.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace dist::partition {

/// One table input of a lookup form.
struct TableInput {
  unsigned input;
  TableRead read;
};

/// The table inputs of `op` (none unless it is in the lookup form).
llvm::SmallVector<TableInput> tableInputs(mlir::linalg::LinalgOp op);

/// For every strategy in `options` (the linalg rule's, which read every
/// table's data dims whole) whose result is not partial: its variants with
/// one table's data dim split over mesh axes the strategy leaves unused, the
/// result then a partial sum over them. Only when every result is the
/// looked-up value (yieldsOnlyTableValue).
void addRowSplitStrategies(mlir::linalg::LinalgOp op,
                           const PartitionQuery &query,
                           PartitionOptions &options);

/// Whether the table layouts `op`'s types say can be localized: a split
/// data dim contiguous, with the results partial sums over its axes and
/// the body a plain lookup; a loop dim split as its loop.
mlir::LogicalResult verifyTableLayouts(mlir::linalg::LinalgOp op,
                                       const LocalizeContext &context);

/// In `local`, the per-device op built from `op` without its table inputs
/// (the body moved over): each read takes the local table
/// (`localOperands[input]`), its loop dims the local positions, and a split
/// data dim the local row, contributing zero (-0.0, the identity of IEEE
/// addition) for ids outside this device's rows. Computations that do not
/// depend on the iteration go before `local`.
void localizeTableReads(mlir::RewriterBase &rewriter,
                        llvm::ArrayRef<TableInput> tables,
                        mlir::linalg::LinalgOp op,
                        mlir::ValueRange localOperands,
                        const LocalizeContext &context,
                        mlir::linalg::GenericOp local);

} // namespace dist::partition

#endif
