//===- LocalizeCompute.cpp - the per-device form of partitioned compute ---===//

#include "LocalizeCompute.h"

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace dist;

bool dist::isLocalizableCompute(Operation *op) {
  return isa<linalg::LinalgOp, tensor::EmptyOp, tensor::ExpandShapeOp,
             tensor::CollapseShapeOp>(op);
}

namespace {

ShardingAttr getSharding(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? dyn_cast_or_null<ShardingAttr>(tensor.getEncoding())
                : ShardingAttr();
}

/// A reduction loop whose last blocks hold padding.
struct PaddedLoop {
  unsigned loop;
  ArrayAttr axes;
  int64_t extent, block;
};

/// The padded reduction loops of `op`, read off its operands' layouts
/// (dist-partition split every operand indexed by a loop the same way).
FailureOr<SmallVector<PaddedLoop>> findPaddedLoops(linalg::LinalgOp op,
                                                   FlatSymbolRefAttr &meshRef,
                                                   SymbolTableCollection &symbols) {
  SmallVector<ArrayAttr> loopAxes(op.getNumLoops());
  MeshOp mesh;
  for (OpOperand &operand : op->getOpOperands()) {
    ShardingAttr sharding = getSharding(operand.get().getType());
    if (!sharding)
      continue;
    FailureOr<MeshOp> found = lookupMesh(op, sharding.getMesh(), symbols);
    if (failed(found))
      return failure();
    mesh = *found;
    meshRef = sharding.getMesh();
    AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [expr, dim] : llvm::zip(map.getResults(), sharding.getDims())) {
      auto loop = dyn_cast<AffineDimExpr>(expr);
      if (!loop || dim.getAxes().empty())
        continue;
      SmallVector<Attribute> names(dim.getAxes().begin(), dim.getAxes().end());
      loopAxes[loop.getPosition()] =
          ArrayAttr::get(op->getContext(), names);
    }
  }
  SmallVector<PaddedLoop> padded;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop) {
    if (!loopAxes[loop] || iterators[loop] != utils::IteratorType::reduction)
      continue;
    int64_t parts = 1;
    for (StringRef axis : loopAxes[loop].getAsValueRange<StringAttr>())
      parts *= mesh.getAxisSizes()[*mesh.findAxis(axis)];
    int64_t block = (ranges[loop] + parts - 1) / parts;
    if (block * parts != ranges[loop])
      padded.push_back({loop, loopAxes[loop], ranges[loop], block});
  }
  return padded;
}

LogicalResult maskOp(linalg::LinalgOp op, SymbolTableCollection &symbols) {
  FlatSymbolRefAttr meshRef;
  FailureOr<SmallVector<PaddedLoop>> padded =
      findPaddedLoops(op, meshRef, symbols);
  if (failed(padded))
    return failure();
  if (padded->empty())
    return success();
  IRRewriter rewriter(op->getContext());
  rewriter.setInsertionPoint(op);
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generalized))
      return op->emitOpError("cannot be localized: its reduction over an "
                             "unevenly split dimension needs a masked "
                             "linalg.generic form, and it has none");
    generic = *generalized;
  }

  // valid_d = clamp(N - s * B, 0, B): the iterations of this device's block
  // that lie inside the global extent.
  Location loc = generic.getLoc();
  OpBuilder b(generic);
  SmallVector<Value> validCounts;
  for (const PaddedLoop &p : *padded) {
    Value s = LocalShardIndexOp::create(b, loc, b.getIndexType(), meshRef,
                                        p.axes);
    Value start = arith::MulIOp::create(
        b, loc, s, arith::ConstantIndexOp::create(b, loc, p.block));
    Value left = arith::SubIOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, p.extent), start);
    Value upper = arith::MinSIOp::create(
        b, loc, left, arith::ConstantIndexOp::create(b, loc, p.block));
    validCounts.push_back(arith::MaxSIOp::create(
        b, loc, upper, arith::ConstantIndexOp::create(b, loc, 0)));
  }

  // In the body: a padded iteration yields the accumulators unchanged.
  Block *body = generic.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  OpBuilder inner(yield);
  Value inside;
  for (auto [p, count] : llvm::zip(*padded, validCounts)) {
    Value index = linalg::IndexOp::create(inner, loc, p.loop);
    Value cond = arith::CmpIOp::create(inner, loc, arith::CmpIPredicate::slt,
                                       index, count);
    inside = inside ? arith::AndIOp::create(inner, loc, inside, cond) : cond;
  }
  unsigned numInputs = generic.getNumDpsInputs();
  SmallVector<Value> yielded;
  for (auto [r, value] : llvm::enumerate(yield.getOperands()))
    yielded.push_back(arith::SelectOp::create(
        inner, loc, inside, value, body->getArgument(numInputs + r)));
  yield->setOperands(yielded);
  return success();
}

/// Rebuilds an op with converted operands and result types, keeping its
/// attributes and regions: a linalg op's indexing maps and body read the
/// same on local blocks.
struct RetypeCompute : ConversionPattern {
  RetypeCompute(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isLocalizableCompute(op))
      return failure();
    SmallVector<Type> resultTypes;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(),
                                                resultTypes)))
      return failure();
    OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addTypes(resultTypes);
    state.addAttributes(op->getAttrs());
    // A reshape view keeps its groups; its static output shape is the
    // local one.
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
      state.attributes.set(
          expand.getStaticOutputShapeAttrName(),
          rewriter.getDenseI64ArrayAttr(
              cast<RankedTensorType>(resultTypes[0]).getShape()));
    for (Region &region : op->getRegions()) {
      Region *moved = state.addRegion();
      rewriter.inlineRegionBefore(region, *moved, moved->end());
    }
    Operation *local = rewriter.create(state);
    rewriter.replaceOp(op, local->getResults());
    return success();
  }
};

} // namespace

LogicalResult dist::maskPaddedReductions(ModuleOp module) {
  SmallVector<linalg::LinalgOp> ops;
  module.walk([&](linalg::LinalgOp op) {
    if (op.hasPureTensorSemantics())
      ops.push_back(op);
  });
  SymbolTableCollection symbols;
  bool ok = true;
  for (linalg::LinalgOp op : ops)
    if (failed(maskOp(op, symbols)))
      ok = false;
  return success(ok);
}

void dist::populateComputeLocalizationPatterns(const TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<RetypeCompute>(converter, patterns.getContext());
}
