//===- DistAttrs.cpp - dist attributes ------------------------------------===//
//
// The sharding attribute: its textual form, its structural verifier (which
// needs no symbol table) and its role as a tensor encoding. Whether the axes
// exist on the mesh is checked by the ops that use the attribute, since only
// they can resolve the mesh symbol.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistAttrs.h"
#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Planner/Layout.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace dist;

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// Parses `"a", "b"` (possibly empty: the caller owns the brackets).
static ParseResult parseAxisNames(AsmParser &parser,
                                  SmallVector<StringAttr> &axes) {
  std::string name;
  // An empty list is fine: the caller owns the brackets.
  if (failed(parser.parseOptionalString(&name)))
    return success();
  axes.push_back(StringAttr::get(parser.getContext(), name));
  while (succeeded(parser.parseOptionalComma())) {
    if (parser.parseString(&name))
      return failure();
    axes.push_back(StringAttr::get(parser.getContext(), name));
  }
  return success();
}

static void printAxisNames(AsmPrinter &printer, ArrayRef<StringAttr> axes) {
  llvm::interleaveComma(axes, printer, [&](StringAttr axis) {
    printer.printString(axis.getValue());
  });
}

/// Parses the optional ` segments [n, ...]` after a dim's axes. The
/// canonical form keeps segments only on split dims with several of them.
static ParseResult parseSegments(AsmParser &parser, ArrayRef<StringAttr> axes,
                                 SmallVector<int64_t> &segments) {
  if (failed(parser.parseOptionalKeyword("segments")))
    return success();
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, [&] {
        int64_t n;
        if (parser.parseInteger(n))
          return failure();
        segments.push_back(n);
        return success();
      }))
    return failure();
  if (segments.empty())
    return parser.emitError(parser.getCurrentLocation(),
                            "'segments' needs at least one length");
  if (axes.empty() || segments.size() == 1)
    segments.clear();
  return success();
}

static void printSegments(AsmPrinter &printer, ArrayRef<int64_t> segments) {
  if (segments.empty())
    return;
  printer << " segments [";
  llvm::interleaveComma(segments, printer);
  printer << "]";
}

/// `{"a", ...} segments [...]`: a DimShardingAttr's body.
static ParseResult parseDimBody(AsmParser &parser,
                                SmallVector<StringAttr> &axes,
                                SmallVector<int64_t> &segments) {
  if (parser.parseLBrace() || parseAxisNames(parser, axes) ||
      parser.parseRBrace())
    return failure();
  return parseSegments(parser, axes, segments);
}

static void printDimBody(AsmPrinter &printer, ArrayRef<StringAttr> axes,
                         ArrayRef<int64_t> segments) {
  printer << "{";
  printAxisNames(printer, axes);
  printer << "}";
  printSegments(printer, segments);
}

/// Parses `{"a"}, {} segments [..], ...` (possibly empty, for rank-0
/// tensors).
static ParseResult parseDimShardings(AsmParser &parser,
                                     SmallVector<DimShardingAttr> &dims) {
  auto parseRest = [&](SmallVector<StringAttr> axes) -> ParseResult {
    SmallVector<int64_t> segments;
    if (parseSegments(parser, axes, segments))
      return failure();
    dims.push_back(DimShardingAttr::getChecked(
        [&] { return parser.emitError(parser.getCurrentLocation()); },
        parser.getContext(), axes, segments));
    return success(bool(dims.back()));
  };
  auto parseOne = [&]() -> ParseResult {
    SmallVector<StringAttr> axes;
    if (parser.parseLBrace() || parseAxisNames(parser, axes) ||
        parser.parseRBrace())
      return failure();
    return parseRest(axes);
  };
  if (failed(parser.parseOptionalLBrace()))
    return success();
  SmallVector<StringAttr> axes;
  if (parseAxisNames(parser, axes) || parser.parseRBrace())
    return failure();
  if (parseRest(axes))
    return failure();
  while (succeeded(parser.parseOptionalComma()))
    if (parseOne())
      return failure();
  return success();
}

static void printDimShardings(AsmPrinter &printer,
                              ArrayRef<DimShardingAttr> dims) {
  llvm::interleaveComma(dims, printer, [&](DimShardingAttr dim) {
    printDimBody(printer, dim.getAxes(), dim.getSegments());
  });
}

/// Parses the optional `, partial = KIND {"a", ...}` clause.
static ParseResult parsePartialClause(AsmParser &parser, ReductionKind &kind,
                                      SmallVector<StringAttr> &axes) {
  kind = ReductionKind::sum;
  if (failed(parser.parseOptionalComma()))
    return success();
  StringRef keyword;
  SMLoc kindLoc;
  if (parser.parseKeyword("partial") || parser.parseEqual())
    return failure();
  kindLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ReductionKind> parsed = symbolizeReductionKind(keyword);
  if (!parsed)
    return parser.emitError(kindLoc, "unknown reduction kind '")
           << keyword << "' (expected sum, max, min, prod or avg)";
  kind = *parsed;
  SMLoc axesLoc = parser.getCurrentLocation();
  if (parser.parseLBrace() || parseAxisNames(parser, axes) ||
      parser.parseRBrace())
    return failure();
  if (axes.empty())
    return parser.emitError(axesLoc,
                            "'partial' clause must name at least one axis");
  return success();
}

static void printPartialClause(AsmPrinter &printer, ReductionKind kind,
                               ArrayRef<StringAttr> axes) {
  if (axes.empty())
    return;
  printer << ", partial = " << stringifyReductionKind(kind) << " {";
  printAxisNames(printer, axes);
  printer << "}";
}

#include "dist/Dialect/Dist/IR/DistEnums.cpp.inc"

ShardingAttr dist::getSharding(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<ShardingAttr>(tensor.getEncoding())
                : ShardingAttr();
}

#define GET_ATTRDEF_CLASSES
#include "dist/Dialect/Dist/IR/DistAttrs.cpp.inc"

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dist/Dialect/Dist/IR/DistAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// DimShardingAttr
//===----------------------------------------------------------------------===//

LogicalResult
DimShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        ArrayRef<StringAttr> axes, ArrayRef<int64_t> segments) {
  (void)axes;
  for (int64_t n : segments)
    if (n < 1)
      return emitError() << "segments must be at least 1 element long, got "
                         << n;
  return success();
}

//===----------------------------------------------------------------------===//
// ShardingAttr
//===----------------------------------------------------------------------===//

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh,
                                   ArrayRef<DimShardingAttr> dims,
                                   ReductionKind partialKind,
                                   ArrayRef<StringAttr> partialAxes) {
  (void)partialKind; // Every enumerant is valid; the parser rejects others.
  if (!mesh)
    return emitError() << "sharding requires a mesh symbol";
  llvm::SmallSet<StringRef, 8> seen;
  auto checkAxis = [&](StringAttr axis, StringRef where) -> LogicalResult {
    if (!axis || axis.getValue().empty())
      return emitError() << "mesh axis names must be non-empty (in " << where
                         << ")";
    if (!seen.insert(axis.getValue()).second)
      return emitError() << "mesh axis \"" << axis.getValue()
                         << "\" is used more than once in the sharding";
    return success();
  };
  for (auto [index, dim] : llvm::enumerate(dims)) {
    if (!dim)
      return emitError() << "sharding of dim " << index << " is missing";
    std::string where = "dim " + std::to_string(index);
    for (StringAttr axis : dim.getAxes())
      if (failed(checkAxis(axis, where)))
        return failure();
  }
  for (StringAttr axis : partialAxes)
    if (failed(checkAxis(axis, "the partial axes")))
      return failure();
  return success();
}

LogicalResult ShardingAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type elementType,
    function_ref<InFlightDiagnostic()> emitError) const {
  if (shape.size() != getDims().size())
    return emitError() << "sharding has " << getDims().size()
                       << " dim entries but the tensor has rank "
                       << shape.size();
  if (llvm::any_of(shape, ShapedType::isDynamic))
    return emitError() << "sharded tensors must have a static shape";
  // Past the planner's size limit, planning and lowering byte counts would
  // overflow 64 bits; say so here, where the type is written.
  // (The parser passes a null element type when it could not read one:
  // found by fuzzing.)
  unsigned bits = elementType && elementType.isIntOrFloat()
                      ? elementType.getIntOrFloatBitWidth()
                      : 8;
  if (llvm::Error e =
          planner::verifyShape(shape, std::max<int64_t>(1, (bits + 7) / 8)))
    return emitError() << llvm::toString(std::move(e));
  for (auto [d, dim] : llvm::enumerate(getDims())) {
    if (dim.getSegments().empty())
      continue;
    int64_t sum = 0;
    bool overflow = false;
    for (int64_t n : dim.getSegments())
      overflow |= llvm::AddOverflow(sum, n, sum); // each n >= 1
    if (overflow)
      return emitError() << "dim " << d << "'s segments sum past 2^63";
    if (sum != shape[d])
      return emitError() << "dim " << d << "'s segments sum to " << sum
                         << " but the dim has extent " << shape[d];
  }
  return success();
}

bool ShardingAttr::usesAxis(StringRef axis) const {
  auto matches = [&](StringAttr a) { return a.getValue() == axis; };
  if (llvm::any_of(getPartialAxes(), matches))
    return true;
  return llvm::any_of(getDims(), [&](DimShardingAttr dim) {
    return llvm::any_of(dim.getAxes(), matches);
  });
}

bool ShardingAttr::isReplicated() const {
  return !isPartial() && llvm::all_of(getDims(), [](DimShardingAttr dim) {
    return dim.getAxes().empty();
  });
}

std::string ShardingAttr::getBodyString() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(getDims(), os, [&](DimShardingAttr dim) {
    os << "{";
    llvm::interleaveComma(dim.getAxes(), os, [&](StringAttr axis) {
      os << '"';
      llvm::printEscapedString(axis.getValue(), os);
      os << '"';
    });
    os << "}";
    if (!dim.getSegments().empty()) {
      os << " segments [";
      llvm::interleaveComma(dim.getSegments(), os);
      os << "]";
    }
  });
  os << "]";
  if (isPartial()) {
    os << ", partial = " << stringifyReductionKind(getPartialKind()) << " {";
    llvm::interleaveComma(getPartialAxes(), os, [&](StringAttr axis) {
      os << '"';
      llvm::printEscapedString(axis.getValue(), os);
      os << '"';
    });
    os << "}";
  }
  return text;
}
