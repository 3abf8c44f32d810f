//===- DistOps.cpp - dist operations --------------------------------------===//
//
// Structural checks (shapes, element types, one mesh) live in verify(); checks
// that need the mesh (axis names, move preconditions) live in
// verifySymbolUses(), which MLIR runs with a symbol table once the whole
// module is parsed. The move semantics themselves come from the planner.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Error.h"

#include <cmath>

using namespace mlir;
using namespace dist;

//===----------------------------------------------------------------------===//
// dist.mesh
//===----------------------------------------------------------------------===//

/// Parses `<["x"=2, "y"=4], devices = [3, 2, 1, 0]>`.
static ParseResult parseMeshShape(OpAsmParser &parser, ArrayAttr &axisNames,
                                  DenseI64ArrayAttr &axisSizes,
                                  DenseI64ArrayAttr &devices) {
  SmallVector<Attribute> names;
  SmallVector<int64_t> sizes;
  if (parser.parseLess())
    return failure();
  auto parseAxis = [&]() -> ParseResult {
    std::string name;
    int64_t size = 0;
    if (parser.parseString(&name) || parser.parseEqual() ||
        parser.parseInteger(size))
      return failure();
    names.push_back(parser.getBuilder().getStringAttr(name));
    sizes.push_back(size);
    return success();
  };
  if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseAxis,
                                     " in the list of mesh axes"))
    return failure();
  if (succeeded(parser.parseOptionalComma())) {
    SmallVector<int64_t> ids;
    auto parseId = [&]() -> ParseResult {
      int64_t id = 0;
      if (parser.parseInteger(id))
        return failure();
      ids.push_back(id);
      return success();
    };
    if (parser.parseKeyword("devices") || parser.parseEqual() ||
        parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseId,
                                       " in the list of device ids"))
      return failure();
    devices = parser.getBuilder().getDenseI64ArrayAttr(ids);
  }
  if (parser.parseGreater())
    return failure();
  axisNames = parser.getBuilder().getArrayAttr(names);
  axisSizes = parser.getBuilder().getDenseI64ArrayAttr(sizes);
  return success();
}

static void printMeshShape(OpAsmPrinter &printer, MeshOp, ArrayAttr axisNames,
                           DenseI64ArrayAttr axisSizes,
                           DenseI64ArrayAttr devices) {
  printer << "<[";
  llvm::interleaveComma(llvm::zip(axisNames.getAsValueRange<StringAttr>(),
                                  axisSizes.asArrayRef()),
                        printer, [&](auto axis) {
                          printer.printString(std::get<0>(axis));
                          printer << "=" << std::get<1>(axis);
                        });
  printer << "]";
  if (devices) {
    printer << ", devices = [";
    llvm::interleaveComma(devices.asArrayRef(), printer);
    printer << "]";
  }
  printer << ">";
}

LogicalResult MeshOp::verify() {
  if (getAxisNames().size() != getAxisSizes().size())
    return emitOpError("has ") << getAxisNames().size() << " axis names but "
                               << getAxisSizes().size() << " axis sizes";
  if (llvm::any_of(getAxisNames(),
                   [](Attribute name) { return !isa<StringAttr>(name); }))
    return emitOpError("axis names must be strings");
  if (failed(getPlannerMesh(*this, [&] { return emitOpError(); })))
    return failure();
  if (DictionaryAttr cost = getCostAttr()) {
    for (NamedAttribute entry : cost) {
      if (!findAxis(entry.getName()))
        return emitOpError("cost names unknown axis \"")
               << entry.getName().getValue() << "\"";
      auto params = dyn_cast<DictionaryAttr>(entry.getValue());
      if (!params)
        return emitOpError("cost of axis \"")
               << entry.getName().getValue()
               << "\" must be a dictionary {alpha = F, beta = F}";
      for (NamedAttribute param : params) {
        StringRef key = param.getName().getValue();
        auto value = dyn_cast<FloatAttr>(param.getValue());
        if ((key != "alpha" && key != "beta") || !value)
          return emitOpError("cost of axis \"")
                 << entry.getName().getValue()
                 << "\" may only hold float 'alpha' and 'beta', found '" << key
                 << "'";
        double v = value.getValueAsDouble();
        if (!(v >= 0.0) || std::isinf(v))
          return emitOpError("cost of axis \"")
                 << entry.getName().getValue() << "\": " << key
                 << " must be finite and non-negative, got " << v;
      }
      if (!params.get("alpha") || !params.get("beta"))
        return emitOpError("cost of axis \"")
               << entry.getName().getValue()
               << "\" must give both 'alpha' and 'beta'";
    }
  }
  return success();
}

std::optional<std::pair<double, double>> MeshOp::getAxisCost(StringRef axis) {
  DictionaryAttr cost = getCostAttr();
  if (!cost)
    return std::nullopt;
  auto params = cost.getAs<DictionaryAttr>(axis);
  if (!params)
    return std::nullopt;
  auto alpha = params.getAs<FloatAttr>("alpha");
  auto beta = params.getAs<FloatAttr>("beta");
  if (!alpha || !beta)
    return std::nullopt;
  return std::make_pair(alpha.getValueAsDouble(), beta.getValueAsDouble());
}

/// Edits (insert, delete, replace, swap two neighbours) from `a` to `b`:
/// the optimal string alignment distance, for which "pt" is one edit from
/// "tp".
static unsigned typoDistance(StringRef a, StringRef b) {
  std::vector<std::vector<unsigned>> d(a.size() + 1,
                                       std::vector<unsigned>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i)
    d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j)
    d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      unsigned cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] =
          std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

std::string MeshOp::describeMissingAxis(StringRef name) {
  std::string text = " (its axes: ";
  StringRef closest;
  unsigned best = ~0u;
  for (auto [index, axis] :
       llvm::enumerate(getAxisNames().getAsValueRange<StringAttr>())) {
    text += (index ? ", \"" : "\"") + axis.str() + "\"";
    unsigned distance = typoDistance(name, axis);
    if (distance < best) {
      best = distance;
      closest = axis;
    }
  }
  // One edit off ("pt" for "tp"), or two in a longer name.
  if (!closest.empty() &&
      ((best == 1 && name.size() >= 2) || (best == 2 && name.size() >= 5)))
    text += "; did you mean \"" + closest.str() + "\"?";
  return text + ")";
}

std::optional<unsigned> MeshOp::findAxis(StringRef name) {
  for (auto [index, axis] :
       llvm::enumerate(getAxisNames().getAsValueRange<StringAttr>()))
    if (axis == name)
      return index;
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Shared checks of ops that take and return one sharded tensor
//===----------------------------------------------------------------------===//

/// Same global tensor (shape, element type) on the same mesh.
static LogicalResult verifySameGlobalTensor(Operation *op, Value input,
                                            Value result,
                                            bool allowCrossMesh = false) {
  auto inType = cast<RankedTensorType>(input.getType());
  auto outType = cast<RankedTensorType>(result.getType());
  if (inType.getShape() != outType.getShape())
    return op->emitOpError("result shape [")
           << outType.getShape() << "] differs from operand shape ["
           << inType.getShape() << "]";
  if (inType.getElementType() != outType.getElementType())
    return op->emitOpError("result element type ")
           << outType.getElementType() << " differs from operand element type "
           << inType.getElementType();
  if (!allowCrossMesh && getSharding(input.getType()).getMesh() !=
                             getSharding(result.getType()).getMesh())
    return op->emitOpError("operand is on mesh ")
           << getSharding(input.getType()).getMesh()
           << " but result is on mesh "
           << getSharding(result.getType()).getMesh();
  return success();
}

/// The axes a move names: each once, and at least one except where the
/// planner's rule allows none (a permute that changes no coordinate; its
/// symbol check then requires that none does).
static LogicalResult verifyAxisList(Operation *op, ArrayAttr axes,
                                    planner::MoveKind kind) {
  if (axes.empty() && !planner::moveMayNameNoAxes(kind))
    return op->emitOpError("requires at least one mesh axis");
  llvm::SmallDenseSet<StringRef> seen;
  for (StringRef axis : axes.getAsValueRange<StringAttr>())
    if (!seen.insert(axis).second)
      return op->emitOpError("lists mesh axis \"") << axis << "\" twice";
  return success();
}

namespace {
/// Everything a move verifier needs, resolved once against the mesh.
struct ResolvedMove : ResolvedShardings {
  SmallVector<unsigned> axes;
};
} // namespace

static FailureOr<ResolvedMove> resolve(Operation *op, Value input, Value result,
                                       ArrayAttr axes,
                                       SymbolTableCollection &symbolTable) {
  FailureOr<ResolvedShardings> shardings =
      resolveShardings(op, getSharding(input.getType()),
                       getSharding(result.getType()), symbolTable);
  if (failed(shardings))
    return failure();
  ResolvedMove resolved{std::move(*shardings), {}};
  if (axes) {
    FailureOr<SmallVector<unsigned>> indices =
        getAxisIndices(axes, resolved.mesh, [&] { return op->emitOpError(); });
    if (failed(indices))
      return failure();
    resolved.axes = std::move(*indices);
  }
  return resolved;
}

/// Recomputes the layout the move produces and requires the result to be it.
/// The global shape matters: on uneven dims a move is only the collective it
/// claims to be when the old and new blocks nest.
static LogicalResult verifyMoveResult(Operation *op, const ResolvedMove &r,
                                      planner::Move move,
                                      ArrayRef<int64_t> globalShape) {
  move.axes.assign(r.axes.begin(), r.axes.end());
  // A split onto a dim without axes gives it the segments the result type
  // names there (semantics §2 `segments`).
  int64_t splitDim =
      move.kind == planner::MoveKind::AllToAll ? move.toDim : move.dim;
  if (planner::moveSplitsDim(move.kind) && splitDim >= 0 &&
      size_t(splitDim) < r.source.getRank() &&
      r.source.dimAxes[splitDim].empty() && r.target.isSegmented(splitDim))
    move.segments = r.target.segments[splitDim];
  llvm::Expected<planner::Layout> expected =
      planner::applyMove(r.plannerMesh, r.source, move, globalShape);
  if (!expected)
    return op->emitOpError() << llvm::toString(expected.takeError());
  if (!(*expected == r.target))
    return op->emitOpError("result layout ")
           << planner::printLayout(r.plannerMesh, r.target) << " should be "
           << planner::printLayout(r.plannerMesh, *expected)
           << ", the layout this move produces";
  return success();
}

//===----------------------------------------------------------------------===//
// dist.reshard
//===----------------------------------------------------------------------===//

LogicalResult ReshardOp::verify() {
  return verifySameGlobalTensor(*this, getInput(), getResult(),
                                /*allowCrossMesh=*/true);
}

LogicalResult ReshardOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return resolveShardings(*this, getSharding(getInput().getType()),
                          getSharding(getResult().getType()), symbolTable,
                          /*allowCrossMesh=*/true);
}

//===----------------------------------------------------------------------===//
// dist.redistribute
//===----------------------------------------------------------------------===//

LogicalResult RedistributeOp::verify() {
  return verifySameGlobalTensor(*this, getInput(), getResult(),
                                /*allowCrossMesh=*/true);
}

LogicalResult
RedistributeOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  FailureOr<ResolvedShardings> r = resolveShardings(
      *this, getSharding(getInput().getType()),
      getSharding(getResult().getType()), symbolTable, /*allowCrossMesh=*/true);
  if (failed(r))
    return failure();
  if (r->isCrossMesh()) {
    if (r->source.hasPartial() || r->target.hasPartial())
      return emitOpError("moves a partial tensor to another mesh; reduce "
                         "its partial axes on mesh ")
             << getSharding(getInput().getType()).getMesh() << " first";
    return success();
  }
  llvm::Expected<planner::Layout> result = planner::applyMove(
      r->plannerMesh, r->source, planner::Move::redistribute(r->target),
      getInput().getType().getShape());
  if (!result)
    return emitOpError() << llvm::toString(result.takeError());
  return success();
}

OpFoldResult ReshardOp::fold(FoldAdaptor) {
  if (getInput().getType() == getResult().getType())
    return getInput();
  return {};
}

namespace {
/// reshard(reshard(x)) -> reshard(x): the planner sees the whole move at
/// once, which is never worse than planning the two halves apart.
struct ComposeReshards : OpRewritePattern<ReshardOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReshardOp op,
                                PatternRewriter &rewriter) const override {
    auto producer = op.getInput().getDefiningOp<ReshardOp>();
    if (!producer)
      return failure();
    rewriter.replaceOpWithNewOp<ReshardOp>(op, op.getType(),
                                           producer.getInput());
    return success();
  }
};
} // namespace

void ReshardOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  // Labelled so that a pipeline can run only this pattern (with folding)
  // on sharded global IR (dist::kComposeReshardsLabel).
  results.addWithLabel<ComposeReshards>({kComposeReshardsLabel}, context);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

LogicalResult dist::verifyMoveOp(CollectiveOpInterface op) {
  std::optional<int64_t> dim = op.getMoveDim(), toDim = op.getMoveToDim();
  if (dim && toDim && *dim == *toDim)
    return op->emitOpError("source and destination dim are both ") << *dim;
  if (failed(verifySameGlobalTensor(op, op.getInput(), op->getResult(0))))
    return failure();
  return verifyAxisList(op, op.getMoveAxes(), op.getMoveKind());
}

/// The planner's move the op performs, from what the op says it is; the
/// result layout the planner computes from it must be the op's.
LogicalResult dist::verifyMoveSymbols(CollectiveOpInterface op,
                                      SymbolTableCollection &table) {
  Value input = op.getInput();
  FailureOr<ResolvedMove> resolved =
      resolve(op, input, op->getResult(0), op.getMoveAxes(), table);
  if (failed(resolved))
    return failure();
  planner::Move move;
  move.kind = op.getMoveKind();
  move.dim = op.getMoveDim().value_or(-1);
  move.toDim = op.getMoveToDim().value_or(-1);
  move.reduction =
      toPlanner(op.getMoveReduction().value_or(ReductionKind::sum));
  if (move.kind == planner::MoveKind::Permute)
    move.permuteTarget = resolved->target;
  return verifyMoveResult(op, *resolved, std::move(move),
                          cast<RankedTensorType>(input.getType()).getShape());
}

#define GET_OP_CLASSES
#include "dist/Dialect/Dist/IR/DistOps.cpp.inc"
