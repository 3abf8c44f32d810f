//===- DistAttrs.h - dist attributes and enums ------------------*- C++ -*-===//

#ifndef DIST_DIALECT_DIST_IR_DISTATTRS_H
#define DIST_DIALECT_DIST_IR_DISTATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TensorEncoding.h"

#include "dist/Dialect/Dist/IR/DistEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dist/Dialect/Dist/IR/DistAttrs.h.inc"

namespace dist {
/// The `#dist.sharding` encoding of a ranked tensor type; null for any
/// other type and for a tensor without one (a free tensor).
ShardingAttr getSharding(mlir::Type type);
} // namespace dist

#endif // DIST_DIALECT_DIST_IR_DISTATTRS_H
