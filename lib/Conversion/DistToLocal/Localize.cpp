//===- Localize.cpp - global view -> per-device view ----------------------===//
//
// A sharded tensor type names the global tensor; each device only holds its
// padded block. This pass rewrites types to those local blocks and each
// collective to its dist.local.* form, so that everything after it (the
// bufferization, the runtime calls) deals with plain local buffers.
//
//===----------------------------------------------------------------------===//

#include "LocalizeCompute.h"
#include "SegmentPacking.h"

#include "dist/Conversion/Passes.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/Dialect/Dist/IR/ReshapeViews.h"
#include "dist/Planner/Redistribute.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace dist {
#define GEN_PASS_DEF_DISTLOCALIZE
#include "dist/Conversion/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;

namespace {

/// The meshes of the module, resolved once.
struct MeshInfo {
  MeshOp op;
  planner::Mesh mesh;
};

class MeshTable {
public:
  LogicalResult build(ModuleOp module) {
    bool ok = true;
    module.walk([&](MeshOp mesh) {
      FailureOr<planner::Mesh> plannerMesh =
          getPlannerMesh(mesh, [&] { return mesh.emitOpError(); });
      if (failed(plannerMesh)) {
        ok = false;
        return;
      }
      meshes.try_emplace(mesh.getSymName(), MeshInfo{mesh, *plannerMesh});
    });
    return success(ok);
  }
  const MeshInfo *lookup(StringRef name) const {
    auto it = meshes.find(name);
    return it == meshes.end() ? nullptr : &it->second;
  }

  /// The mesh and layout of a sharded tensor type; nullopt for other types
  /// (and for bad ones, which the pass's pre-check reports).
  std::optional<ShardedTypeInfo> shardedInfo(Type type) const {
    ShardingAttr sharding = getSharding(type);
    if (!sharding)
      return std::nullopt;
    const MeshInfo *info = lookup(sharding.getMesh().getValue());
    if (!info)
      return std::nullopt;
    MeshOp meshOp = info->op;
    FailureOr<planner::Layout> layout = getPlannerLayout(
        sharding, meshOp, [&] { return emitError(meshOp.getLoc()); });
    if (failed(layout))
      return std::nullopt;
    return ShardedTypeInfo{meshOp, &info->mesh, std::move(*layout)};
  }

  /// Meshes with more devices lower their permutes by layouts, not tables
  /// (the pass's permute-table-devices option).
  int64_t permuteTableDevices = 4096;

private:
  llvm::StringMap<MeshInfo> meshes;
};

/// Sharded tensor -> the tensor of one device's padded block.
class LocalTypeConverter : public TypeConverter {
public:
  explicit LocalTypeConverter(const MeshTable &meshes) : meshes(meshes) {
    addConversion([](Type type) { return type; });
    addConversion([this](RankedTensorType type) -> std::optional<Type> {
      if (!getSharding(type))
        return type;
      std::optional<ShardedTypeInfo> info = this->meshes.shardedInfo(type);
      if (!info)
        return std::nullopt;
      return RankedTensorType::get(
          planner::localShape(*info->mesh, info->layout, type.getShape()),
          type.getElementType());
    });
  }

private:
  const MeshTable &meshes;
};

/// What a partitioning model's `localize` may ask: local types and layouts.
class LocalizeContextImpl : public LocalizeContext {
public:
  LocalizeContextImpl(const MeshTable &meshes, const TypeConverter &converter)
      : meshes(meshes), converter(converter) {}

  Type getLocalType(Type global) const override {
    Type local = converter.convertType(global);
    return local ? local : global;
  }
  std::optional<ShardedTypeInfo> getShardedInfo(Type global) const override {
    return meshes.shardedInfo(global);
  }

private:
  const MeshTable &meshes;
  const TypeConverter &converter;
};

/// Rewrites a global collective to its per-device form. Each move's pattern
/// implements `localize`, given the local result type and input.
template <typename GlobalOp>
struct LocalizePattern : OpConversionPattern<GlobalOp> {
  using OpAdaptor = typename OpConversionPattern<GlobalOp>::OpAdaptor;

  LocalizePattern(const TypeConverter &converter, MLIRContext *context,
                  const MeshTable &meshes)
      : OpConversionPattern<GlobalOp>(converter, context), meshes(meshes) {}

  LogicalResult
  matchAndRewrite(GlobalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    return localize(op, adaptor.getInput(), localResultType(op), op.getLoc(),
                    rewriter);
  }

  virtual LogicalResult localize(GlobalOp op, Value input,
                                 RankedTensorType type, Location loc,
                                 ConversionPatternRewriter &rewriter) const = 0;

  RankedTensorType localResultType(GlobalOp op) const {
    return cast<RankedTensorType>(
        this->getTypeConverter()->convertType(op.getType()));
  }
  FlatSymbolRefAttr meshOf(GlobalOp op) const {
    return getSharding(op.getInput().getType()).getMesh();
  }

  /// The planner layouts of the op's operand and result, when either has
  /// segments on `dims` (then the collective works per segment).
  struct Segmented {
    const planner::Mesh *mesh;
    planner::Layout source, result;
    int64_t groupSize;
  };
  FailureOr<std::optional<Segmented>> segmented(GlobalOp op) const {
    const MeshInfo *info = meshes.lookup(meshOf(op).getValue());
    auto emitError = [&] { return op.emitOpError(); };
    FailureOr<planner::Layout> src = getPlannerLayout(
        getSharding(op.getInput().getType()), info->op, emitError);
    FailureOr<planner::Layout> dst =
        getPlannerLayout(getSharding(op.getType()), info->op, emitError);
    if (failed(src) || failed(dst))
      return failure();
    if (!src->hasSegments() && !dst->hasSegments())
      return std::optional<Segmented>();
    int64_t group = 1;
    for (StringRef axis : op.getAxes().template getAsValueRange<StringAttr>())
      group *= info->mesh.getAxisSize(*info->mesh.findAxis(axis));
    return std::optional<Segmented>(
        Segmented{&info->mesh, std::move(*src), std::move(*dst), group});
  }

  /// Packs `input` along the dim a slice-like move splits, when that dim
  /// has segments: chunk j then holds member j's block of every segment.
  Value packForSplit(OpBuilder &b, Location loc, Value input,
                     const Segmented &s, unsigned dim) const {
    std::optional<std::vector<int64_t>> segments =
        segmentsAlong(s.source, s.result, dim);
    if (!segments)
      return input;
    return packSegments(
        b, loc, input, dim, segmentBlocks(*s.mesh, s.source, dim, *segments),
        segmentBlocks(*s.mesh, s.result, dim, *segments), s.groupSize);
  }

  const MeshTable &meshes;
};

// On a dim with segments the members' buffers arrive side by side, each
// holding its block of every segment; unpacking regroups them per segment.
struct LocalizeAllGatherOp : LocalizePattern<AllGatherOp> {
  using LocalizePattern::LocalizePattern;
  LogicalResult localize(AllGatherOp op, Value input, RankedTensorType type,
                         Location loc,
                         ConversionPatternRewriter &rewriter) const override {
    FailureOr<std::optional<Segmented>> seg = segmented(op);
    if (failed(seg))
      return failure();
    unsigned dim = op.getDim();
    std::optional<std::vector<int64_t>> segments =
        *seg ? segmentsAlong((*seg)->source, (*seg)->result, dim)
             : std::nullopt;
    if (!segments) {
      rewriter.replaceOp(
          op, LocalAllGatherOp::create(rewriter, loc, type, input, meshOf(op),
                                       op.getAxes(), op.getDimAttr()));
      return success();
    }
    const Segmented &s = **seg;
    std::vector<int64_t> pieces =
        segmentBlocks(*s.mesh, s.source, dim, *segments);
    auto inputType = cast<RankedTensorType>(input.getType());
    Value gathered = LocalAllGatherOp::create(
        rewriter, loc,
        withExtent(inputType, dim, s.groupSize * inputType.getDimSize(dim)),
        input, meshOf(op), op.getAxes(), op.getDimAttr());
    rewriter.replaceOp(
        op, unpackSegments(rewriter, loc, gathered, dim, pieces,
                           segmentBlocks(*s.mesh, s.result, dim, *segments),
                           s.groupSize));
    return success();
  }
};

struct LocalizeAllToAllOp : LocalizePattern<AllToAllOp> {
  using LocalizePattern::LocalizePattern;
  LogicalResult localize(AllToAllOp op, Value input, RankedTensorType type,
                         Location loc,
                         ConversionPatternRewriter &rewriter) const override {
    FailureOr<std::optional<Segmented>> seg = segmented(op);
    if (failed(seg))
      return failure();
    if (!*seg) {
      rewriter.replaceOp(op, LocalAllToAllOp::create(rewriter, loc, type, input,
                                                     meshOf(op), op.getAxes(),
                                                     op.getDimAttr(),
                                                     op.getToDimAttr()));
      return success();
    }
    // Pack the dim that is split, exchange, unpack the dim that is joined.
    const Segmented &s = **seg;
    unsigned dim = op.getDim();
    unsigned toDim = op.getToDim();
    input = packForSplit(rewriter, loc, input, s, toDim);
    std::optional<std::vector<int64_t>> joined =
        segmentsAlong(s.source, s.result, dim);
    RankedTensorType exchanged = type;
    if (joined)
      exchanged = withExtent(
          type, dim,
          s.groupSize *
              cast<RankedTensorType>(input.getType()).getDimSize(dim));
    Value result = LocalAllToAllOp::create(rewriter, loc, exchanged, input,
                                           meshOf(op), op.getAxes(),
                                           op.getDimAttr(), op.getToDimAttr());
    if (joined)
      result = unpackSegments(rewriter, loc, result, dim,
                              segmentBlocks(*s.mesh, s.source, dim, *joined),
                              segmentBlocks(*s.mesh, s.result, dim, *joined),
                              s.groupSize);
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// The moves whose local op is the global one's attributes plus the mesh:
/// slice, reduce-scatter, all-reduce, replicate-to-partial. A move that
/// splits a dim with segments packs it first, so that chunk j holds member
/// j's block of every segment.
template <typename GlobalOp, typename LocalOp>
struct LocalizeSameAttributes : LocalizePattern<GlobalOp> {
  using LocalizePattern<GlobalOp>::LocalizePattern;
  LogicalResult localize(GlobalOp op, Value input, RankedTensorType type,
                         Location loc,
                         ConversionPatternRewriter &rewriter) const override {
    if (std::optional<int64_t> dim =
            cast<CollectiveOpInterface>(*op).getMoveDim()) {
      auto seg = this->segmented(op);
      if (failed(seg))
        return failure();
      if (*seg)
        input = this->packForSplit(rewriter, loc, input, **seg, *dim);
    }
    SmallVector<NamedAttribute> attrs(op->getAttrs());
    attrs.push_back(rewriter.getNamedAttr("mesh", this->meshOf(op)));
    rewriter.replaceOp(op, LocalOp::create(rewriter, loc, TypeRange{type},
                                           ValueRange{input}, attrs));
    return success();
  }
};

/// Redistributes are lowered to tables with an entry per piece exchanged,
/// so their IR size and compile time grow with the mesh (a table
/// on 2^25 devices took 24 s and 1.6 GB of IR). Past kMaxTableDevices they
/// are a located error, at once. (Permutes switch to their layout form
/// instead, which the runtime expands.)
static LogicalResult checkTableSize(Operation *op, const planner::Mesh &mesh) {
  if (mesh.getNumDevices() <= dist::kMaxTableDevices)
    return success();
  return op->emitOpError()
         << "cannot be lowered: a redistribute on mesh " << mesh.str() << " of "
         << mesh.getNumDevices()
         << " devices; dist lowers redistributes on meshes of at most 2^20 ("
         << dist::kMaxTableDevices
         << ") devices, as their tables hold an entry per device";
}

// A permute's senders are a function of the two layouts; compute the whole
// rank-to-rank table here, once, with the planner's sender choice (the one
// its cost model priced).
struct LocalizePermuteOp : LocalizePattern<PermuteOp> {
  using LocalizePattern::LocalizePattern;
  LogicalResult localize(PermuteOp op, Value input, RankedTensorType type,
                         Location loc,
                         ConversionPatternRewriter &rewriter) const override {
    const MeshInfo *info = meshes.lookup(meshOf(op).getValue());
    auto emitError = [&] { return op.emitOpError(); };
    FailureOr<planner::Layout> src = getPlannerLayout(
        getSharding(op.getInput().getType()), info->op, emitError);
    FailureOr<planner::Layout> dst =
        getPlannerLayout(getSharding(op.getType()), info->op, emitError);
    if (failed(src) || failed(dst))
      return failure();
    const planner::Mesh &mesh = info->mesh;
    // A relabelling (the layouts differ only in where size-1 axes sit): every
    // device is its own sender and the local buffer keeps its shape.
    if (planner::permuteAxes(mesh, *src, *dst).empty()) {
      rewriter.replaceOp(op, input);
      return success();
    }
    if (mesh.getNumDevices() >
        std::min(meshes.permuteTableDevices, dist::kMaxTableDevices)) {
      // The layouts instead of a table: the runtime computes the same senders
      // (permuteSender's rule), so IR size does not grow with the devices.
      SmallVector<int64_t> dimAxes;
      for (size_t d = 0; d < src->getRank(); ++d)
        for (const planner::Layout *side : {&*src, &*dst}) {
          dimAxes.push_back(side->dimAxes[d].size());
          dimAxes.append(side->dimAxes[d].begin(), side->dimAxes[d].end());
        }
      rewriter.replaceOp(
          op, LocalPermuteOp::create(rewriter, loc, type, input, meshOf(op),
                                     DenseI64ArrayAttr(),
                                     rewriter.getDenseI64ArrayAttr(dimAxes)));
      return success();
    }
    // Indexed by world rank up to the largest the mesh names; ranks outside
    // the mesh (another pipeline stage) receive nothing.
    SmallVector<int64_t> sources(mesh.getMaxRank() + 1, -1);
    for (int64_t index = 0; index < mesh.getNumDevices(); ++index) {
      std::vector<int64_t> receiver = mesh.coordinateOf(index);
      sources[mesh.rankOfIndex(index)] =
          mesh.rankOf(planner::permuteSender(mesh, *src, *dst, receiver));
    }
    rewriter.replaceOp(
        op, LocalPermuteOp::create(rewriter, loc, type, input, meshOf(op),
                                   rewriter.getDenseI64ArrayAttr(sources),
                                   DenseI64ArrayAttr()));
    return success();
  }
};

// A redistribute's exchange table comes from the planner's computeExchange,
// the one the plan was priced with: every byte the program moves is one the
// cost counted.
struct LocalizeRedistributeOp : LocalizePattern<RedistributeOp> {
  using LocalizePattern::LocalizePattern;
  LogicalResult localize(RedistributeOp op, Value input, RankedTensorType type,
                         Location loc,
                         ConversionPatternRewriter &rewriter) const override {
    FlatSymbolRefAttr fromName = meshOf(op);
    FlatSymbolRefAttr toName = getSharding(op.getType()).getMesh();
    const MeshInfo *from = meshes.lookup(fromName.getValue());
    const MeshInfo *to = meshes.lookup(toName.getValue());
    auto emitError = [&] { return op.emitOpError(); };
    FailureOr<planner::Layout> src = getPlannerLayout(
        getSharding(op.getInput().getType()), from->op, emitError);
    FailureOr<planner::Layout> dst =
        getPlannerLayout(getSharding(op.getType()), to->op, emitError);
    if (failed(src) || failed(dst))
      return failure();
    bool sameMesh = fromName == toName;
    // Prices do not matter here, only who sends what.
    planner::TransferLinks links({0, 0}, 0);
    std::vector<int64_t> shape(op.getType().getShape());
    llvm::Expected<planner::Exchange> exchange =
        planner::computeExchange(from->mesh, *src, to->mesh, *dst, shape,
                                 /*elementBytes=*/1, sameMesh, links);
    if (!exchange)
      return op.emitOpError() << llvm::toString(exchange.takeError());
    std::vector<int64_t> table = planner::exchangeTable(
        *exchange, from->mesh, *src, to->mesh, *dst, shape);
    rewriter.replaceOp(op, LocalRedistributeOp::create(
                               rewriter, loc, type, input, fromName, toName,
                               rewriter.getDenseI64ArrayAttr(table)));
    return success();
  }
};

struct DistLocalizePass
    : public dist::impl::DistLocalizeBase<DistLocalizePass> {
  using DistLocalizeBase::DistLocalizeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MeshTable meshes;
    meshes.permuteTableDevices = permuteTableDevices;
    if (failed(meshes.build(module)))
      return signalPassFailure();
    LocalTypeConverter converter(meshes);
    LocalizeContextImpl localizeContext(meshes, converter);
    if (failed(checkLocalizable(module, meshes, localizeContext)))
      return signalPassFailure();
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    ConversionTarget target(*context);
    patterns.add<LocalizeAllGatherOp, LocalizeAllToAllOp, LocalizePermuteOp,
                 LocalizeRedistributeOp,
                 LocalizeSameAttributes<AllSliceOp, LocalAllSliceOp>,
                 LocalizeSameAttributes<ReduceScatterOp, LocalReduceScatterOp>,
                 LocalizeSameAttributes<AllReduceOp, LocalAllReduceOp>,
                 LocalizeSameAttributes<ReplicateToPartialOp,
                                        LocalReplicateToPartialOp>>(
        converter, context, meshes);
    populateComputeLocalizationPatterns(converter, localizeContext, patterns,
                                        target);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

    // No global collective survives: each has its pattern above.
    target.addIllegalOp<ReshardOp>();
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType());
    });
    target.markUnknownOpDynamicallyLegal([&](Operation *op) {
      return !isCollectiveAt(op, CollectiveLevel::Global) &&
             converter.isLegal(op);
    });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    foldSingleDeviceCollectives(module, meshes);
  }

  /// A collective over mesh axes whose sizes multiply to 1 moves nothing
  /// (semantics §3: every move on a group of one device is the identity):
  /// its local form is its input. A layout split over a size-1 axis and the
  /// replicated one are the same data, so the reshard between them, planned
  /// as a move over that axis, costs a copy of the tensor at run time.
  static void foldSingleDeviceCollectives(ModuleOp module,
                                          const MeshTable &meshes) {
    SmallVector<Operation *> identities;
    module.walk([&](CollectiveOpInterface collective) {
      if (collective.getLevel() != CollectiveLevel::Local)
        return;
      ArrayAttr axes = collective.getMoveAxes();
      FlatSymbolRefAttr mesh = collective.getMeshAttr();
      const MeshInfo *info = mesh ? meshes.lookup(mesh.getValue()) : nullptr;
      Operation *op = collective.getOperation();
      if (!axes || !info || op->getNumResults() != 1 ||
          op->getResult(0).getType() != collective.getInput().getType())
        return;
      int64_t group = 1;
      for (StringRef axis : axes.getAsValueRange<StringAttr>()) {
        std::optional<unsigned> index = info->mesh.findAxis(axis);
        group *= index ? info->mesh.getAxisSize(*index) : 0;
      }
      if (group == 1)
        identities.push_back(op);
    });
    for (Operation *op : identities) {
      op->getResult(0).replaceAllUsesWith(
          cast<CollectiveOpInterface>(op).getInput());
      op->erase();
    }
  }

  /// Reports, at the right place, everything the conversion cannot handle,
  /// so that it never fails with a generic "failed to legalize".
  LogicalResult checkLocalizable(ModuleOp module, const MeshTable &meshes,
                                 const LocalizeContext &localizeContext) {
    bool ok = true;
    auto checkType = [&](Type type, Operation *where) {
      ShardingAttr sharding = getSharding(type);
      if (!sharding)
        return;
      const MeshInfo *info = meshes.lookup(sharding.getMesh().getValue());
      if (!info) {
        where->emitOpError("uses unknown mesh ") << sharding.getMesh();
        ok = false;
        return;
      }
      if (failed(getPlannerLayout(sharding, info->op,
                                  [&] { return where->emitOpError(); })))
        ok = false;
    };
    module.walk([&](Operation *op) {
      if (auto func = dyn_cast<func::FuncOp>(op)) {
        for (Type type : func.getFunctionType().getInputs())
          checkType(type, op);
        for (Type type : func.getFunctionType().getResults())
          checkType(type, op);
        return;
      }
      if (isa<ReshardOp>(op)) {
        op->emitOpError("must be lowered first: run dist-lower-reshard "
                        "before dist-localize");
        ok = false;
        return;
      }
      bool sharded = llvm::any_of(op->getOperandTypes(), getSharding) ||
                     llvm::any_of(op->getResultTypes(), getSharding);
      if (!sharded)
        return;
      auto collective = dyn_cast<CollectiveOpInterface>(op);
      if (collective &&
          collective.getMoveKind() == planner::MoveKind::Redistribute) {
        for (Type type :
             {op->getOperand(0).getType(), op->getResult(0).getType()})
          if (ShardingAttr sharding = getSharding(type))
            if (const MeshInfo *info =
                    meshes.lookup(sharding.getMesh().getValue()))
              if (failed(checkTableSize(op, info->mesh))) {
                ok = false;
                return;
              }
      }
      if (!isCollectiveAt(op, CollectiveLevel::Global) &&
          !isa<func::ReturnOp, func::CallOp, scf::ForOp, scf::YieldOp>(op) &&
          !isLocalizableCompute(op)) {
        op->emitOpError("cannot be localized: dist-localize rewrites dist "
                        "collectives, calls, returns, loops and the compute "
                        "dist-partition produces (ops with a partitioning "
                        "model) on sharded tensors; run dist-partition first");
        ok = false;
        return;
      }
      for (Type type : op->getOperandTypes())
        checkType(type, op);
      for (Type type : op->getResultTypes())
        checkType(type, op);
      if (auto partitionable = dyn_cast<PartitionableOpInterface>(op))
        if (ok && failed(partitionable.verifyLocalizable(localizeContext)))
          ok = false;
    });
    return success(ok);
  }
};

} // namespace
