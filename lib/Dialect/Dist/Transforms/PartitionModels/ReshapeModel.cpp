//===- ReshapeModel.cpp - tensor.expand_shape / collapse_shape as views ---===//
//
// A reshape of a sharded tensor runs where it is a view: a pair of layouts
// under which every device keeps its bytes (docs/segments.md, "Reshape
// views"). Its strategies are such pairs: the views of every layout the
// operand may arrive in and of the declared result, plus every assignment
// of axes to the finer (expanded) side's dims, with and without each
// partial value the operand may carry (a reshape moves partial values as
// they are). Its per-device form reshapes the local block in place.
//
//===----------------------------------------------------------------------===//

#include "LoopRule.h"
#include "PartitionModelsInternal.h"

#include "dist/Dialect/Dist/IR/ReshapeViews.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace dist;
using namespace dist::partition;

namespace {

/// Views the model proposes on its own (not an operand's or a declared
/// layout) have at most this many segments on a dim. A split inner dim of a
/// collapsed group is a view only as one segment per outer index (a
/// [7, 8] -> 56 collapse split on the 8: segments [8] x 7); such layouts are
/// rarely worth reaching, and pricing moves into or out of many segments is
/// the planner's most expensive search (a 7x8x7 collapse on a
/// 2x2x2 mesh took 40 s).
constexpr size_t kMaxProposedSegments = 4;

bool fewSegments(const planner::Layout &layout) {
  for (const std::vector<int64_t> &segments : layout.segments)
    if (segments.size() > kMaxProposedSegments)
      return false;
  return true;
}

llvm::Expected<PartitionOptions> reshapeOptions(Operation *op,
                                                const PartitionQuery &query) {
  auto operandType = cast<RankedTensorType>(op->getOperand(0).getType());
  auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
  if (!operandType.hasStaticShape() || !resultType.hasStaticShape())
    return llvm::createStringError("its shapes are dynamic; dist-partition "
                                   "needs static shapes");
  FailureOr<planner::ReshapeDims> dims = getReshapeDims(op);
  if (failed(dims))
    return llvm::createStringError("dist cannot read its reassociation");
  bool expand = isa<tensor::ExpandShapeOp>(op);

  PartitionOptions options;
  options.placed.push_back(true);
  options.tiedResult.push_back(-1);
  // Layouts that arrive or are declared are kept whatever their segments.
  std::vector<planner::Layout> given;
  if (!query.offered.empty())
    given = query.offered[0];
  if (!query.declared.empty() && query.declared[0])
    given.push_back(*query.declared[0]);
  auto addPair = [&](const planner::Layout &operand,
                     const planner::Layout &result) {
    for (const planner::Layout *side : {&operand, &result})
      if (!fewSegments(*side) && !llvm::is_contained(given, *side))
        return;
    PartitionStrategy strategy;
    strategy.operands.push_back(operand);
    strategy.results.push_back(result);
    options.add(std::move(strategy), query.maxStrategies);
  };
  auto addFromOperand = [&](const planner::Layout &operand) {
    llvm::Expected<planner::Layout> result =
        resultViewOf(op, query.mesh, operand, *dims);
    if (result)
      addPair(operand, *result);
    else
      llvm::consumeError(result.takeError());
  };
  auto addFromResult = [&](const planner::Layout &result) {
    llvm::Expected<planner::Layout> operand =
        operandViewOf(op, query.mesh, result, *dims);
    if (operand)
      addPair(*operand, result);
    else
      llvm::consumeError(operand.takeError());
  };

  // The layouts the operand may arrive in and the declared result layout:
  // each is kept as it is when it has a view (segmented layouts included),
  // and seeds the enumeration through its finer-side image.
  std::vector<PartialSpec> specs;
  if (!query.offered.empty())
    for (const planner::Layout &layout : query.offered[0]) {
      addFromOperand(layout);
      PartialSpec spec{layout.partialKind, layout.partialAxes};
      if (layout.hasPartial() && !llvm::is_contained(specs, spec))
        specs.push_back(spec);
    }
  if (!query.declared.empty() && query.declared[0])
    addFromResult(*query.declared[0]);
  std::vector<planner::Layout> seeds;
  for (const PartitionStrategy &known : options.strategies)
    seeds.push_back(expand ? known.results[0] : known.operands[0]);

  // Every other view, with and without each partial value the operand may
  // arrive with: an assignment of axes to the finer side's dims, enumerated
  // like the loops of an elementwise op over it.
  LoopRule finer = LoopRule::identity(dims->expandedShape);
  std::vector<std::optional<PartialSpec>> partials{std::nullopt};
  partials.insert(partials.end(), specs.begin(), specs.end());
  for (const std::optional<PartialSpec> &spec : partials) {
    planner::AxisList excluded = spec ? spec->axes : planner::AxisList();
    for (const Assignment &assignment : candidateAssignments(
             finer, query.mesh, excluded, {seeds}, query.assignmentBudget)) {
      planner::Layout layout;
      for (const auto &axes : assignment)
        layout.dimAxes.emplace_back(axes.begin(), axes.end());
      if (spec) {
        layout.partialAxes = spec->axes;
        layout.partialKind = spec->kind;
      }
      if (expand)
        addFromResult(layout);
      else
        addFromOperand(layout);
    }
  }
  if (options.strategies.empty())
    return llvm::createStringError("no layout makes it a view");
  return options;
}

template <typename OpTy>
struct ReshapePartitionModel
    : PartitionableOpInterface::ExternalModel<ReshapePartitionModel<OpTy>,
                                              OpTy> {
  llvm::Expected<PartitionOptions>
  getPartitionOptions(Operation *op, const PartitionQuery &query) const {
    return reshapeOptions(op, query);
  }
  /// A reshape on sharded tensors must be a view: localizing reshapes each
  /// device's buffer in place, which is right only when the result's layout
  /// keeps every device's bytes.
  LogicalResult verifyLocalizable(Operation *op,
                                  const LocalizeContext &context) const {
    std::optional<ShardedTypeInfo> from =
        context.getShardedInfo(op->getOperand(0).getType());
    std::optional<ShardedTypeInfo> to =
        context.getShardedInfo(op->getResult(0).getType());
    if (!from && !to)
      return success();
    if (!from || !to || from->meshOp != to->meshOp)
      return op->emitOpError("cannot be localized: a reshape needs its "
                             "operand and result sharded on the same mesh");
    FailureOr<planner::ReshapeDims> dims = getReshapeDims(op);
    if (failed(dims))
      return failure();
    const planner::Mesh &mesh = *from->mesh;
    llvm::Expected<planner::Layout> view =
        resultViewOf(op, mesh, from->layout, *dims);
    if (!view)
      return op->emitOpError("is not a view of its operand's layout ")
             << planner::printLayout(mesh, from->layout) << ": "
             << llvm::toString(view.takeError())
             << " (dist-partition reshards the operand first)";
    // Several expanded layouts may be views of one collapsed layout (a
    // group of unit dims, split with padding, may carry its axes on any of
    // them: semantics §2a), and resultViewOf picks one; dist-partition also
    // pairs layouts from the result side, so either direction makes a view.
    auto operandView = [&]() -> bool {
      llvm::Expected<planner::Layout> operand =
          operandViewOf(op, mesh, to->layout, *dims);
      if (!operand) {
        llvm::consumeError(operand.takeError());
        return false;
      }
      return *operand == from->layout;
    };
    if (*view != to->layout && !operandView())
      return op->emitOpError("is not a view: the operand's layout ")
             << planner::printLayout(mesh, from->layout) << " reshapes to "
             << planner::printLayout(mesh, *view) << ", not "
             << planner::printLayout(mesh, to->layout)
             << " (dist-partition reshards where needed)";
    return success();
  }

  // A view keeps its groups; its static output shape is the local one.
  FailureOr<SmallVector<Value>> localize(Operation *op, RewriterBase &rewriter,
                                         ValueRange localOperands,
                                         const LocalizeContext &context) const {
    FailureOr<SmallVector<Value>> local =
        localizeByRetyping(op, rewriter, localOperands, context);
    if (failed(local))
      return failure();
    if (auto expand = (*local)[0].getDefiningOp<tensor::ExpandShapeOp>())
      rewriter.modifyOpInPlace(expand, [&] {
        expand.setStaticOutputShape(expand.getResultType().getShape());
      });
    return local;
  }
};

} // namespace

void dist::partition::registerReshapePartitionModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, tensor::TensorDialect *) {
    tensor::ExpandShapeOp::attachInterface<
        ReshapePartitionModel<tensor::ExpandShapeOp>>(*context);
    tensor::CollapseShapeOp::attachInterface<
        ReshapePartitionModel<tensor::CollapseShapeOp>>(*context);
  });
}
