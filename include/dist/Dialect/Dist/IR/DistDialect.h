//===- DistDialect.h - dist dialect -----------------------------*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_IR_DISTDIALECT_H
#define DIST_DIALECT_DIST_IR_DISTDIALECT_H

#include "dist/Planner/PlanCache.h"

#include "mlir/IR/Dialect.h"
#include "llvm/ADT/StringMap.h"

#include <memory>
#include <mutex>

#include "dist/Dialect/Dist/IR/DistDialect.h.inc"

namespace dist {
/// `dist.stage = @mesh` on a function: it computes on that mesh alone (a
/// pipeline stage, semantics §3c), so a call of it runs only on the mesh's
/// ranks. Set by dist-partition, read by convert-dist-to-runtime.
inline constexpr llvm::StringLiteral kStageAttrName = "dist.stage";
/// `dist.microbatches = M` on a function dist-pipeline cut into M
/// microbatches: read (and dropped) by dist-partition's pipeline remark.
inline constexpr llvm::StringLiteral kMicrobatchesAttrName =
    "dist.microbatches";
} // namespace dist

#endif // DIST_DIALECT_DIST_IR_DISTDIALECT_H
