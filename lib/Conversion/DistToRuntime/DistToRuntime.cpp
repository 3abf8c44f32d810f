//===- DistToRuntime.cpp - dist.buffer.* -> runtime calls -----------------===//
//
// The runtime's collectives work on contiguous buffers and exchange equal
// chunks in group order: gather concatenates whole buffers, all-to-all and
// reduce-scatter split the send buffer into `q` consecutive chunks. A
// dist op on another dim is therefore a pack into chunk-major order, the
// call, and an unpack. When the dim already is chunk-major (every dim
// before it has size 1) and the chunks fill it exactly, the buffers go to
// the runtime as they are. Padding (entries past the input, partial last
// chunks) is zero-filled so it stays zero through every move.
//
//===----------------------------------------------------------------------===//

#include "RuntimeCalls.h"
#include "dist/Runtime/DistRuntime.h"

#include "dist/Conversion/Passes.h"
#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/SegmentPieces.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Analysis/TopologicalSortUtils.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace dist {
#define GEN_PASS_DEF_CONVERTDISTTORUNTIME
#include "dist/Conversion/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;

namespace {

MemRefType memrefType(Value value) { return cast<MemRefType>(value.getType()); }

int64_t numElements(Value memref) {
  return memrefType(memref).getNumElements();
}

/// True when concatenating `q` buffers of `shape` along `dim` lays them out
/// exactly like stacking them: every dim before `dim` has size 1.
bool isChunkMajor(ArrayRef<int64_t> shape, int64_t dim) {
  return llvm::all_of(shape.take_front(dim), [](int64_t s) { return s == 1; });
}

/// How local data moves: linalg on host memory (cpu), or the runtime's
/// strided-copy kernels on the backend's memory and stream (gpu).
class DataMover {
public:
  virtual ~DataMover() = default;
  /// dst = src, two views of the same shape.
  virtual void copy(OpBuilder &b, Location loc, Value src, Value dst) = 0;
  /// dst[...] = value.
  virtual void fill(OpBuilder &b, Location loc, Value dst, TypedAttr value) = 0;
};

/// Host buffers: linalg ops, which lower to loops LLVM can vectorize.
class LinalgMover : public DataMover {
public:
  void copy(OpBuilder &b, Location loc, Value src, Value dst) override {
    linalg::CopyOp::create(b, loc, src, dst);
  }
  void fill(OpBuilder &b, Location loc, Value dst, TypedAttr value) override {
    Value scalar = arith::ConstantOp::create(b, loc, value);
    linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{dst});
  }
};

/// Backend memory (device memory with NCCL): the runtime's strided copy and
/// fill, enqueued on the function's stream. Views are passed as a pointer to
/// their first element plus sizes and strides in elements.
class RuntimeMover : public DataMover {
public:
  RuntimeMover(RuntimeCalls &calls, Value stream, int32_t dtype)
      : calls(calls), stream(stream), dtype(dtype) {}

  void copy(OpBuilder &b, Location loc, Value src, Value dst) override {
    View from = view(b, loc, src), to = view(b, loc, dst);
    Value args[] = {calls.i64(b, loc, from.sizes.size()),
                    table(b, loc, from.sizes),
                    from.pointer,
                    table(b, loc, from.strides),
                    to.pointer,
                    table(b, loc, to.strides),
                    calls.i32(b, loc, dtype),
                    stream};
    calls.call(b, loc, RuntimeEntry::CopyStrided, args);
  }

  void fill(OpBuilder &b, Location loc, Value dst, TypedAttr value) override {
    View to = view(b, loc, dst);
    Value rank = calls.i64(b, loc, to.sizes.size());
    if (isZero(value)) {
      Value args[] = {rank,
                      table(b, loc, to.sizes),
                      to.pointer,
                      table(b, loc, to.strides),
                      calls.i32(b, loc, dtype),
                      stream};
      calls.call(b, loc, RuntimeEntry::FillZero, args);
      return;
    }
    // Any other value: put one element in backend memory and broadcast it
    // with a stride-0 copy, which both backends implement.
    auto scalarType = MemRefType::get({1}, value.getType());
    Value scalar = memref::AllocOp::create(b, loc, scalarType);
    Value host = calls.constScalar(b, loc, value);
    int64_t bytes = (value.getType().getIntOrFloatBitWidth() + 7) / 8;
    Value copyArgs[] = {calls.bufferPtr(b, loc, scalar),
                        calls.bufferPtr(b, loc, host), calls.i64(b, loc, bytes),
                        calls.i32(b, loc, DIST_RT_COPY_HOST_TO_DEVICE), stream};
    calls.call(b, loc, RuntimeEntry::Memcpy, copyArgs);
    SmallVector<Value> zeros(to.sizes.size(),
                             arith::ConstantIndexOp::create(b, loc, 0));
    Value args[] = {rank,
                    table(b, loc, to.sizes),
                    calls.bufferPtr(b, loc, scalar),
                    table(b, loc, zeros),
                    to.pointer,
                    table(b, loc, to.strides),
                    calls.i32(b, loc, dtype),
                    stream};
    calls.call(b, loc, RuntimeEntry::CopyStrided, args);
    memref::DeallocOp::create(b, loc, scalar);
  }

private:
  struct View {
    Value pointer;
    SmallVector<Value> sizes, strides; // index values, in elements
  };

  static bool isZero(TypedAttr value) {
    if (auto f = dyn_cast<FloatAttr>(value))
      return f.getValue().isZero();
    return cast<IntegerAttr>(value).getValue().isZero();
  }

  View view(OpBuilder &b, Location loc, Value memref) {
    View v;
    v.pointer = calls.elementPtr(b, loc, memref);
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    v.sizes.assign(meta.getSizes().begin(), meta.getSizes().end());
    v.strides.assign(meta.getStrides().begin(), meta.getStrides().end());
    return v;
  }

  /// A host i64 array holding `values`, read by the runtime during the call.
  Value table(OpBuilder &b, Location loc, ArrayRef<Value> values) {
    auto type =
        MemRefType::get({static_cast<int64_t>(values.size())}, b.getI64Type());
    Value array = memref::AllocaOp::create(b, loc, type);
    for (auto [i, value] : llvm::enumerate(values)) {
      Value index = arith::ConstantIndexOp::create(b, loc, i);
      Value wide = arith::IndexCastOp::create(b, loc, b.getI64Type(), value);
      memref::StoreOp::create(b, loc, wide, array, index);
    }
    return calls.bufferPtr(b, loc, array);
  }

  RuntimeCalls &calls;
  Value stream;
  int32_t dtype;
};

/// Copies `rows` entries along `dim` from `src` at `srcOffset` to `dst` at
/// `dstOffset`; every other dim is copied whole.
void copyAlong(DataMover &mover, OpBuilder &b, Location loc, Value src,
               Value dst, int64_t dim, OpFoldResult srcOffset,
               OpFoldResult dstOffset, OpFoldResult rows) {
  MemRefType srcType = memrefType(src);
  int64_t rank = srcType.getRank();
  SmallVector<OpFoldResult> srcOffsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> dstOffsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes, strides(rank, b.getIndexAttr(1));
  for (int64_t d = 0; d < rank; ++d)
    sizes.push_back(b.getIndexAttr(srcType.getDimSize(d)));
  srcOffsets[dim] = srcOffset;
  dstOffsets[dim] = dstOffset;
  sizes[dim] = rows;
  Value from =
      memref::SubViewOp::create(b, loc, src, srcOffsets, sizes, strides);
  Value to = memref::SubViewOp::create(b, loc, dst, dstOffsets, sizes, strides);
  mover.copy(b, loc, from, to);
}

/// Chunk `index` of a [q, chunk...] buffer, as a chunk-shaped view.
Value chunkView(OpBuilder &b, Location loc, Value chunks, OpFoldResult index) {
  MemRefType type = memrefType(chunks);
  ArrayRef<int64_t> chunkShape = type.getShape().drop_front();
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = index;
  for (int64_t s : chunkShape)
    sizes.push_back(b.getIndexAttr(s));
  MemRefType viewType = memref::SubViewOp::inferRankReducedResultType(
      chunkShape, type, offsets, sizes, strides);
  return memref::SubViewOp::create(b, loc, viewType, chunks, offsets, sizes,
                                   strides);
}

TypedAttr zeroOf(OpBuilder &b, Type type) {
  return cast<TypedAttr>(b.getZeroAttr(type));
}

/// `count` iterations of `body(j)`; a loop unless it runs once.
void forEachChunk(OpBuilder &b, Location loc, int64_t count,
                  function_ref<void(OpBuilder &, Value)> body) {
  if (count <= 0)
    return;
  if (count == 1) {
    body(b, arith::ConstantIndexOp::create(b, loc, 0));
    return;
  }
  Value lb = arith::ConstantIndexOp::create(b, loc, 0);
  Value ub = arith::ConstantIndexOp::create(b, loc, count);
  Value step = arith::ConstantIndexOp::create(b, loc, 1);
  scf::ForOp::create(
      b, loc, lb, ub, step, ValueRange{},
      [&](OpBuilder &nested, Location nestedLoc, Value j, ValueRange) {
        body(nested, j);
        scf::YieldOp::create(nested, nestedLoc);
      });
}

Value times(OpBuilder &b, Location loc, Value index, int64_t factor) {
  return arith::MulIOp::create(b, loc, index,
                               arith::ConstantIndexOp::create(b, loc, factor));
}

/// Copies between a [q, chunk...] buffer and a tensor whose `dim` is the
/// concatenation of the chunks (chunk size C = chunk[dim]), for the entries
/// [0, extent) of that tensor: chunks that fit whole in a loop, then the
/// partial one. `toChunks` picks the direction (pack, else unpack).
void copyChunks(DataMover &mover, OpBuilder &b, Location loc, Value chunks,
                Value tensor, int64_t dim, bool toChunks) {
  int64_t q = memrefType(chunks).getDimSize(0);
  int64_t chunk = memrefType(chunks).getDimSize(dim + 1);
  int64_t extent = memrefType(tensor).getDimSize(dim);
  if (chunk == 0)
    return;
  auto copy = [&](OpBuilder &nb, OpFoldResult j, OpFoldResult offset,
                  int64_t rows) {
    Value view = chunkView(nb, loc, chunks, j);
    OpFoldResult zero = nb.getIndexAttr(0), size = nb.getIndexAttr(rows);
    if (toChunks)
      copyAlong(mover, nb, loc, tensor, view, dim, offset, zero, size);
    else
      copyAlong(mover, nb, loc, view, tensor, dim, zero, offset, size);
  };
  int64_t full = std::min(q, extent / chunk);
  forEachChunk(b, loc, full, [&](OpBuilder &nb, Value j) {
    copy(nb, j, times(nb, loc, j, chunk), chunk);
  });
  int64_t rest = extent - full * chunk;
  if (full < q && rest > 0)
    copy(b, b.getIndexAttr(full), b.getIndexAttr(full * chunk), rest);
}

/// dst[dim: j*B ...] = chunk j of `chunks` ([q, chunk...], B = chunk[dim]),
/// keeping the first dst[dim] entries of the concatenation.
void unpackChunks(DataMover &mover, OpBuilder &b, Location loc, Value chunks,
                  Value dst, int64_t dim) {
  copyChunks(mover, b, loc, chunks, dst, dim, /*toChunks=*/false);
}

/// Chunk j of `chunks` = src[dim: j*C, (j+1)*C) with C = chunk[dim], zero
/// past the end of src.
void packChunks(DataMover &mover, OpBuilder &b, Location loc, Value src,
                Value chunks, int64_t dim) {
  int64_t q = memrefType(chunks).getDimSize(0);
  int64_t chunk = memrefType(chunks).getDimSize(dim + 1);
  if (chunk != 0 && memrefType(src).getDimSize(dim) < q * chunk)
    mover.fill(b, loc, chunks, zeroOf(b, memrefType(chunks).getElementType()));
  copyChunks(mover, b, loc, chunks, src, dim, /*toChunks=*/true);
}

/// Row-major strides (in elements) of a buffer of `shape`.
SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// A [q, shape...] temporary, freed by the caller.
Value allocChunks(OpBuilder &b, Location loc, int64_t q,
                  ArrayRef<int64_t> shape, Type elementType) {
  SmallVector<int64_t> chunked{q};
  chunked.append(shape.begin(), shape.end());
  return memref::AllocOp::create(b, loc, MemRefType::get(chunked, elementType));
}

int64_t groupSize(MeshOp mesh, ArrayRef<int64_t> axes) {
  int64_t q = 1;
  for (int64_t axis : axes)
    q *= mesh.getAxisSizes()[axis];
  return q;
}

/// Creating a group is collective over the world (every rank takes part,
/// members or not, in the same order): the groups a stage function creates
/// are created before its guarded call, by every rank, with what they are
/// computed from (constants and the mesh handle) cloned; the stage's own
/// calls then find them made. Failure (nothing created) when a group is
/// computed from anything else.
LogicalResult createStageGroups(OpBuilder &b, func::FuncOp callee) {
  llvm::SetVector<Operation *> slice;
  BackwardSliceOptions options;
  options.inclusive = true;
  options.omitUsesFromAbove = false;
  bool ok = true;
  callee.walk([&](func::CallOp inner) {
    if (inner.getCallee() == runtimeEntrySymbol(RuntimeEntry::Group))
      ok &= succeeded(getBackwardSlice(inner.getOperation(), &slice, options));
  });
  for (Operation *op : slice)
    ok &= llvm::all_of(op->getOperands(),
                       [&](Value operand) {
                         Operation *def = operand.getDefiningOp();
                         return def && slice.contains(def);
                       }) &&
          op->getNumRegions() == 0;
  if (!ok)
    return failure();
  IRMapping mapping;
  for (Operation *op : topologicalSort(slice))
    b.clone(*op, mapping);
  return success();
}

/// Semantics §3c: a call of a stage function (`dist.stage = @mesh`, one that
/// computes on that mesh alone) runs only on the mesh's ranks; elsewhere
/// its results (out-parameters by now) are never read. The attribute goes,
/// so that nothing keeps the mesh symbol alive.
void guardStageCalls(ModuleOp module, RuntimeCalls &calls) {
  SymbolTable symbols(module);
  SmallVector<func::CallOp> stageCalls;
  module.walk([&](func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    if (callee && callee->hasAttr(kStageAttrName) && call.getNumResults() == 0)
      stageCalls.push_back(call);
  });
  for (func::CallOp call : stageCalls) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    auto mesh = symbols.lookup<MeshOp>(
        callee->getAttrOfType<FlatSymbolRefAttr>(kStageAttrName).getValue());
    OpBuilder b(call);
    if (!mesh || failed(createStageGroups(b, callee)))
      continue;
    Location loc = call.getLoc();
    Value handle = calls.mesh(b, loc, mesh);
    Value contains = calls.call(b, loc, RuntimeEntry::MeshContains, handle)[0];
    Value member = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                         contains, calls.i32(b, loc, 0));
    auto guard = scf::IfOp::create(b, loc, member, /*withElseRegion=*/false);
    call->moveBefore(guard.thenBlock()->getTerminator());
  }
  for (func::FuncOp func : module.getOps<func::FuncOp>())
    func->removeAttr(kStageAttrName);
}

/// What the patterns share: the runtime's calls and the functions' streams.
class LoweringState {
public:
  LoweringState(ModuleOp module, bool device) : calls(module), device(device) {}

  /// The stream of the function holding `op`: fetched once at its entry, so
  /// that every call of the function is ordered on it.
  Value streamFor(Operation *op) {
    auto func = op->getParentOfType<func::FuncOp>();
    Value &stream = streams[func];
    if (!stream) {
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      stream = calls.call(b, func.getLoc(), RuntimeEntry::DefaultStream, {})[0];
    }
    return stream;
  }

  MeshOp lookupMesh(Operation *op, FlatSymbolRefAttr name) {
    return symbols.lookupNearestSymbolFrom<MeshOp>(op, name);
  }

  RuntimeCalls calls;
  bool device;
  /// Set by the first error: the pass stops there, reporting one located
  /// error as a walk that returns at the first failure would.
  bool failed = false;

private:
  SymbolTableCollection symbols;
  DenseMap<Operation *, Value> streams;
};

/// One buffer op being lowered: where the calls go and what they share.
struct Ctx {
  PatternRewriter &b;
  Location loc;
  RuntimeCalls &calls;
  int32_t dtype;
  DataMover &mover;
  MeshOp mesh;
  Value meshHandle;
  Value stream; // null: the runtime's own stream (synchronous on cpu)

  Value ptr(Value memref) { return calls.bufferPtr(b, loc, memref); }
  Value i64(int64_t v) { return calls.i64(b, loc, v); }
  Value i32(int32_t v) { return calls.i32(b, loc, v); }
  Value streamArg() { return stream ? stream : calls.nullPtr(b, loc); }
  Value group(ArrayRef<int64_t> axes) {
    return calls.group(b, loc, meshHandle, axes);
  }

  /// (group, send, recv, countPerRank, dtype[, redop], stream) -> status.
  void collective(RuntimeEntry entry, Value group, Value send, Value recv,
                  int64_t count, std::optional<int32_t> redop = std::nullopt) {
    SmallVector<Value> args{group, ptr(send), ptr(recv), i64(count),
                            i32(dtype)};
    if (redop)
      args.push_back(i32(*redop));
    args.push_back(streamArg());
    // The runtime aborts the job on any failure (its default), so the
    // status needs no check here.
    calls.call(b, loc, entry, args);
  }
};

/// Whether distRtAllToAllStrided can walk `in` and `out` as they are:
/// plain row-major buffers of few enough dims.
bool stridedCallable(Value in, Value out) {
  MemRefType inType = memrefType(in), outType = memrefType(out);
  return inType.getRank() < DIST_RT_MAX_COPY_DIMS &&
         inType.getLayout().isIdentity() && outType.getLayout().isIdentity();
}

/// distRtAllToAllStrided between the row-major buffers `in` and `out`, each
/// chunk a `chunkShape` box walked with its buffer's strides: chunk j of
/// `in` is its slice j along `inChunkDim` (none: every chunk is the whole
/// of `in`, one block to every member), chunk i of `out` its slice i along
/// `outChunkDim`.
void callStridedAllToAll(Ctx &c, Value group, ArrayRef<int64_t> chunkShape,
                         Value in, std::optional<int64_t> inChunkDim, Value out,
                         int64_t outChunkDim) {
  SmallVector<int64_t> inStrides = rowMajorStrides(memrefType(in).getShape());
  SmallVector<int64_t> outStrides = rowMajorStrides(memrefType(out).getShape());
  int64_t inChunkStride =
      inChunkDim ? chunkShape[*inChunkDim] * inStrides[*inChunkDim] : 0;
  Value args[] = {group,
                  c.i64(memrefType(in).getRank()),
                  c.calls.constArray(c.b, c.loc, chunkShape),
                  c.ptr(in),
                  c.calls.constArray(c.b, c.loc, inStrides),
                  c.i64(inChunkStride),
                  c.ptr(out),
                  c.calls.constArray(c.b, c.loc, outStrides),
                  c.i64(chunkShape[outChunkDim] * outStrides[outChunkDim]),
                  c.i32(c.dtype),
                  c.streamArg()};
  c.calls.call(c.b, c.loc, RuntimeEntry::AllToAllStrided, args);
}

/// The steps every buffer op's lowering shares, around `body`: a tensor
/// with a zero extent has empty blocks on every device (local buffers have
/// the same padded shape everywhere), so there is nothing to move and no
/// device joins the collective: all skip it alike (a memref.subview would
/// also refuse offset 0 into the empty dim). Otherwise the element type
/// needs a runtime code, and `mesh` (null: the op talks to no device) is
/// registered with the runtime before the body runs.
LogicalResult lowerBufferOp(LoweringState &state, Operation *op,
                            FlatSymbolRefAttr mesh, PatternRewriter &rewriter,
                            function_ref<LogicalResult(Ctx &)> body) {
  if (state.failed)
    return failure();
  if (llvm::any_of(op->getOperands(), [](Value v) {
        auto type = dyn_cast<MemRefType>(v.getType());
        return type && type.hasStaticShape() && type.getNumElements() == 0;
      })) {
    rewriter.eraseOp(op);
    return success();
  }
  rewriter.setInsertionPoint(op);
  Location loc = op->getLoc();
  auto fail = [&](InFlightDiagnostic diag) {
    state.failed = true;
    return diag;
  };
  Type elementType = memrefType(op->getOperand(0)).getElementType();
  std::optional<int32_t> dtype = getRuntimeDType(elementType);
  if (!dtype)
    return fail(op->emitOpError("element type ")
                << elementType << " has no runtime equivalent");
  std::unique_ptr<DataMover> mover;
  if (state.device)
    mover = std::make_unique<RuntimeMover>(state.calls, state.streamFor(op),
                                           *dtype);
  else
    mover = std::make_unique<LinalgMover>();
  Ctx ctx{rewriter, loc,      state.calls, *dtype,
          *mover,   MeshOp(), Value(),     Value()};
  if (mesh) {
    ctx.mesh = state.lookupMesh(op, mesh);
    if (!ctx.mesh)
      return fail(op->emitOpError("refers to unknown mesh ") << mesh);
    ctx.meshHandle = state.calls.mesh(rewriter, loc, ctx.mesh);
    if (state.device)
      ctx.stream = state.streamFor(op);
  }
  if (failed(body(ctx))) {
    state.failed = true;
    return failure();
  }
  rewriter.eraseOp(op);
  return success();
}

/// Lowers the buffer-level collectives of one move kind to runtime calls;
/// each kind's pattern says how in `lower`.
class CollectiveLowering
    : public OpInterfaceRewritePattern<CollectiveOpInterface> {
public:
  CollectiveLowering(MLIRContext *context, LoweringState &state,
                     planner::MoveKind kind)
      : OpInterfaceRewritePattern(context), state(state), kind(kind) {}

  LogicalResult matchAndRewrite(CollectiveOpInterface op,
                                PatternRewriter &rewriter) const final {
    if (op.getLevel() != CollectiveLevel::Buffer || op.getMoveKind() != kind)
      return failure();
    return lowerBufferOp(state, op, op.getMeshAttr(), rewriter,
                         [&](Ctx &c) { return lower(c, op); });
  }

protected:
  virtual LogicalResult lower(Ctx &c, CollectiveOpInterface op) const = 0;

  /// The group's axes and its size.
  static std::pair<SmallVector<int64_t>, int64_t>
  groupOf(Ctx &c, CollectiveOpInterface op) {
    SmallVector<int64_t> axes = op.getAxisIndices(c.mesh);
    return {axes, groupSize(c.mesh, axes)};
  }

  LoweringState &state;

private:
  planner::MoveKind kind;
};

/// A pattern for move `Kind`.
template <planner::MoveKind Kind>
struct CollectiveLoweringOf : CollectiveLowering {
  CollectiveLoweringOf(MLIRContext *context, LoweringState &state)
      : CollectiveLowering(context, state, Kind) {}
};

struct LowerAllGather : CollectiveLoweringOf<planner::MoveKind::AllGather> {
  using CollectiveLoweringOf::CollectiveLoweringOf;
  LogicalResult lower(Ctx &c, CollectiveOpInterface op) const override {
    auto [axes, q] = groupOf(c, op);
    int64_t dim = *op.getMoveDim();
    Value in = op.getInput(), out = op.getOutput();
    ArrayRef<int64_t> shape = memrefType(in).getShape();
    Value group = c.group(axes);
    if (isChunkMajor(shape, dim) &&
        memrefType(out).getDimSize(dim) == q * shape[dim]) {
      c.collective(RuntimeEntry::AllGather, group, in, out, numElements(in));
      return success();
    }
    if (!state.device && lowerStrided(c, group, in, out, q, dim))
      return success();
    Value chunks =
        allocChunks(c.b, c.loc, q, shape, memrefType(in).getElementType());
    c.collective(RuntimeEntry::AllGather, group, in, chunks, numElements(in));
    unpackChunks(c.mover, c.b, c.loc, chunks, out, dim);
    memref::DeallocOp::create(c.b, c.loc, chunks);
    return success();
  }

  /// A gather along an inner dim as a strided all-to-all whose send chunks
  /// are all the whole input (chunk stride 0): the runtime writes each
  /// member's block straight into its slice of `out`, with no gathered
  /// temporary and no unpack pass (semantics §3b counts only the own
  /// block's copy for such a gather). Host memory only: a backend without
  /// strided collectives (NCCL) would pack q copies of the input first. False
  /// (nothing emitted) when the blocks do not fill `out` evenly or a buffer
  /// is not plain row-major.
  static bool lowerStrided(Ctx &c, Value group, Value in, Value out, int64_t q,
                           int64_t dim) {
    MemRefType inType = memrefType(in);
    if (!stridedCallable(in, out) ||
        q * inType.getDimSize(dim) != memrefType(out).getDimSize(dim))
      return false;
    callStridedAllToAll(c, group, inType.getShape(), in, std::nullopt, out,
                        dim);
    return true;
  }
};

struct LowerAllToAll : CollectiveLoweringOf<planner::MoveKind::AllToAll> {
  using CollectiveLoweringOf::CollectiveLoweringOf;
  LogicalResult lower(Ctx &c, CollectiveOpInterface op) const override {
    auto [axes, q] = groupOf(c, op);
    int64_t dim = *op.getMoveDim(), toDim = *op.getMoveToDim();
    Value in = op.getInput(), out = op.getOutput();
    Type elementType = memrefType(in).getElementType();
    // Each chunk is the input with `toDim` cut to the output's extent.
    SmallVector<int64_t> chunkShape(memrefType(in).getShape());
    chunkShape[toDim] = memrefType(out).getDimSize(toDim);
    Value group = c.group(axes);

    bool packed = !(isChunkMajor(chunkShape, toDim) &&
                    q * chunkShape[toDim] == memrefType(in).getDimSize(toDim));
    bool direct = isChunkMajor(chunkShape, dim) &&
                  memrefType(out).getDimSize(dim) == q * chunkShape[dim];
    // When both sides split evenly, the runtime reads and writes the chunks
    // in place (strided): no pack before the exchange, no unpack after.
    if ((packed || !direct) &&
        lowerStrided(c, group, in, out, chunkShape, q, dim, toDim))
      return success();

    Value send = in;
    if (packed) {
      send = allocChunks(c.b, c.loc, q, chunkShape, elementType);
      packChunks(c.mover, c.b, c.loc, in, send, toDim);
    }
    Value recv =
        direct ? out : allocChunks(c.b, c.loc, q, chunkShape, elementType);
    int64_t count = 1;
    for (int64_t s : chunkShape)
      count *= s;
    c.collective(RuntimeEntry::AllToAll, group, send, recv, count);
    if (!direct) {
      unpackChunks(c.mover, c.b, c.loc, recv, out, dim);
      memref::DeallocOp::create(c.b, c.loc, recv);
    }
    if (packed)
      memref::DeallocOp::create(c.b, c.loc, send);
    return success();
  }

  /// distRtAllToAllStrided: chunk j of `in` is its slice j along `toDim`,
  /// chunk i of `out` its slice i along `dim`, both in place. False (nothing
  /// emitted) when a side does not split evenly -- the last chunk then has
  /// padding to zero-fill or to drop, which the staged path handles -- or
  /// the buffers are not plain row-major.
  static bool lowerStrided(Ctx &c, Value group, Value in, Value out,
                           ArrayRef<int64_t> chunkShape, int64_t q, int64_t dim,
                           int64_t toDim) {
    if (!stridedCallable(in, out) ||
        q * chunkShape[toDim] != memrefType(in).getDimSize(toDim) ||
        q * chunkShape[dim] != memrefType(out).getDimSize(dim))
      return false;
    callStridedAllToAll(c, group, chunkShape, in, toDim, out, dim);
    return true;
  }
};

struct LowerReduceScatter
    : CollectiveLoweringOf<planner::MoveKind::ReduceScatter> {
  using CollectiveLoweringOf::CollectiveLoweringOf;
  LogicalResult lower(Ctx &c, CollectiveOpInterface op) const override {
    auto [axes, q] = groupOf(c, op);
    int64_t dim = *op.getMoveDim();
    Value in = op.getInput(), out = op.getOutput();
    ArrayRef<int64_t> chunkShape = memrefType(out).getShape();
    Value group = c.group(axes);
    Value send = in;
    bool packed = !(isChunkMajor(chunkShape, dim) &&
                    q * chunkShape[dim] == memrefType(in).getDimSize(dim));
    if (packed) {
      send = allocChunks(c.b, c.loc, q, chunkShape,
                         memrefType(in).getElementType());
      packChunks(c.mover, c.b, c.loc, in, send, dim);
    }
    c.collective(RuntimeEntry::ReduceScatter, group, send, out,
                 numElements(out), getRuntimeReduction(*op.getMoveReduction()));
    if (packed)
      memref::DeallocOp::create(c.b, c.loc, send);
    return success();
  }
};

struct LowerAllReduce : CollectiveLoweringOf<planner::MoveKind::AllReduce> {
  using CollectiveLoweringOf::CollectiveLoweringOf;
  LogicalResult lower(Ctx &c, CollectiveOpInterface op) const override {
    Value group = c.group(op.getAxisIndices(c.mesh));
    c.collective(RuntimeEntry::AllReduce, group, op.getInput(), op.getOutput(),
                 numElements(op.getInput()),
                 getRuntimeReduction(*op.getMoveReduction()));
    return success();
  }
};

/// Keeps entries [r*S, (r+1)*S) of `dim`, r = this device's group index;
/// whatever lies past the input is zero.
struct LowerAllSlice : CollectiveLoweringOf<planner::MoveKind::AllSlice> {
  using CollectiveLoweringOf::CollectiveLoweringOf;
  LogicalResult lower(Ctx &c, CollectiveOpInterface op) const override {
    auto [axes, q] = groupOf(c, op);
    int64_t dim = *op.getMoveDim();
    Value in = op.getInput(), out = op.getOutput();
    int64_t extent = memrefType(in).getDimSize(dim);
    int64_t size = memrefType(out).getDimSize(dim);
    OpBuilder &b = c.b;
    Location loc = c.loc;
    if (q * size > extent)
      c.mover.fill(b, loc, out, zeroOf(b, memrefType(out).getElementType()));
    Value r = c.calls.groupIndex(b, loc, c.meshHandle, c.mesh, axes);
    // offset = min(r*S, extent); rows = min(S, extent - offset).
    Value extentV = arith::ConstantIndexOp::create(b, loc, extent);
    Value offset =
        arith::MinUIOp::create(b, loc, times(b, loc, r, size), extentV);
    Value rows = arith::MinUIOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, size),
        arith::SubIOp::create(b, loc, extentV, offset));
    copyAlong(c.mover, b, loc, in, out, dim, offset, b.getIndexAttr(0), rows);
    return success();
  }
};

/// Group member 0 keeps the value; for sum and prod the others hold the
/// identity, for max, min and avg the value itself.
struct LowerReplicateToPartial
    : CollectiveLoweringOf<planner::MoveKind::ReplicateToPartial> {
  using CollectiveLoweringOf::CollectiveLoweringOf;
  LogicalResult lower(Ctx &c, CollectiveOpInterface op) const override {
    OpBuilder &b = c.b;
    Location loc = c.loc;
    Value in = op.getInput(), out = op.getOutput();
    Type elementType = memrefType(in).getElementType();
    ReductionKind kind = *op.getMoveReduction();
    if (kind != ReductionKind::sum && kind != ReductionKind::prod) {
      c.mover.copy(b, loc, in, out);
      return success();
    }
    TypedAttr identity = zeroOf(b, elementType);
    if (kind == ReductionKind::prod)
      identity = isa<FloatType>(elementType)
                     ? TypedAttr(b.getFloatAttr(elementType, 1.0))
                     : TypedAttr(b.getIntegerAttr(elementType, 1));
    Value r = c.calls.groupIndex(b, loc, c.meshHandle, c.mesh,
                                 op.getAxisIndices(c.mesh));
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, r,
                              arith::ConstantIndexOp::create(b, loc, 0));
    scf::IfOp::create(
        b, loc, isFirst,
        [&](OpBuilder &nb, Location nl) {
          c.mover.copy(nb, nl, in, out);
          scf::YieldOp::create(nb, nl);
        },
        [&](OpBuilder &nb, Location nl) {
          c.mover.fill(nb, nl, out, identity);
          scf::YieldOp::create(nb, nl);
        });
    return success();
  }
};

/// Whole-buffer exchange: along the compile-time table (rank r receives
/// from sources[r] and sends to every rank naming it), or along the two
/// layouts, from which the runtime builds the table.
struct LowerPermute : CollectiveLoweringOf<planner::MoveKind::Permute> {
  using CollectiveLoweringOf::CollectiveLoweringOf;
  LogicalResult lower(Ctx &c, CollectiveOpInterface collective) const override {
    auto op = cast<BufferPermuteOp>(collective);
    if (std::optional<ArrayRef<int64_t>> dimAxes = op.getDimAxes()) {
      SmallVector<int64_t> entries(dimAxes->begin(), dimAxes->end());
      int64_t size = entries.size();
      if (entries.empty())
        entries.push_back(0); // an address even for a rank-0 tensor
      Value args[] = {c.meshHandle,
                      c.ptr(op.getInput()),
                      c.ptr(op.getOutput()),
                      c.i64(numElements(op.getInput())),
                      c.i32(c.dtype),
                      c.i64(memrefType(op.getInput()).getRank()),
                      c.calls.constArray(c.b, c.loc, entries),
                      c.i64(size),
                      c.streamArg()};
      c.calls.call(c.b, c.loc, RuntimeEntry::PermuteByLayouts, args);
      return success();
    }
    ArrayRef<int64_t> sources = *op.getSources();
    int64_t n = sources.size();
    SmallVector<SmallVector<int64_t>> dests(n);
    for (int64_t r = 0; r < n; ++r)
      if (sources[r] >= 0 && sources[r] != r) // -1: not in the mesh
        dests[sources[r]].push_back(r);
    SmallVector<int64_t> offsets{0}, list;
    for (const SmallVector<int64_t> &d : dests) {
      list.append(d.begin(), d.end());
      offsets.push_back(list.size());
    }
    // The runtime reads the list only between offsets; keep it non-empty
    // so the table has an address even when nothing moves.
    if (list.empty())
      list.push_back(-1);
    Value args[] = {c.meshHandle,
                    c.ptr(op.getInput()),
                    c.ptr(op.getOutput()),
                    c.i64(numElements(op.getInput())),
                    c.i32(c.dtype),
                    c.calls.constArray(c.b, c.loc, sources),
                    c.calls.constArray(c.b, c.loc, offsets),
                    c.calls.constArray(c.b, c.loc, list),
                    c.streamArg()};
    c.calls.call(c.b, c.loc, RuntimeEntry::Permute, args);
    return success();
  }
};

/// Point-to-point boxes along the compile-time table (distRtExchange).
/// The target mesh is registered (c.meshHandle) so that a job too small
/// for its ranks fails with a clear message; the source mesh too. A table
/// of local copies only (replicated to sharded, say) calls
/// distRtExchangeLocal: no rank waits for another, so the ranks need not
/// agree first.
struct LowerRedistribute
    : CollectiveLoweringOf<planner::MoveKind::Redistribute> {
  using CollectiveLoweringOf::CollectiveLoweringOf;
  LogicalResult lower(Ctx &c, CollectiveOpInterface collective) const override {
    auto op = cast<BufferRedistributeOp>(collective);
    MeshOp source = state.lookupMesh(op, op.getSourceMeshAttr());
    if (!source)
      return op->emitOpError("refers to unknown mesh ")
             << op.getSourceMeshAttr();
    c.calls.mesh(c.b, c.loc, source);
    MemRefType in = memrefType(op.getInput()), out = memrefType(op.getOutput());
    ArrayRef<int64_t> table = op.getTable();
    int64_t width = 2 + 3 * in.getRank();
    bool localOnly = true;
    for (size_t k = 0; k + 1 < table.size(); k += width)
      localOnly &= table[k] == table[k + 1];
    // Keep the table non-empty so it has an address even when nothing moves.
    SmallVector<int64_t> entries(table.begin(), table.end());
    if (entries.empty())
      entries.push_back(-1);
    Value args[] = {c.i64(in.getRank()),
                    c.calls.constArray(c.b, c.loc, in.getShape()),
                    c.ptr(op.getInput()),
                    c.calls.constArray(c.b, c.loc, out.getShape()),
                    c.ptr(op.getOutput()),
                    c.i64(int64_t(table.size()) / width),
                    c.calls.constArray(c.b, c.loc, entries),
                    c.i32(c.dtype),
                    c.streamArg()};
    c.calls.call(
        c.b, c.loc,
        localOnly ? RuntimeEntry::ExchangeLocal : RuntimeEntry::Exchange, args);
    return success();
  }
};

/// Zero the output, then copy every piece between the per-segment and the
/// packed layout (SegmentPieces.h): strided copies of row ranges, which run
/// on the device's stream with target=gpu. No device takes part.
template <typename OpTy, bool Packs>
struct LowerSegmentPacking : OpRewritePattern<OpTy> {
  LowerSegmentPacking(MLIRContext *context, LoweringState &state)
      : OpRewritePattern<OpTy>(context), state(state) {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    return lowerBufferOp(state, op, /*mesh=*/{}, rewriter, [&](Ctx &c) {
      Value in = op.getInput(), out = op.getOutput();
      int64_t dim = op.getDim();
      c.mover.fill(c.b, c.loc, out,
                   zeroOf(c.b, memrefType(out).getElementType()));
      forEachSegmentPiece(
          op.getBlocks(), op.getPieces(), op.getParts(),
          [&](int64_t blockRow, int64_t packedRow, int64_t rows) {
            int64_t from = Packs ? blockRow : packedRow;
            int64_t to = Packs ? packedRow : blockRow;
            copyAlong(c.mover, c.b, c.loc, in, out, dim, c.b.getIndexAttr(from),
                      c.b.getIndexAttr(to), c.b.getIndexAttr(rows));
          });
      return success();
    });
  }

  LoweringState &state;
};

/// This device's shard index: its group index over the axes.
struct LowerShardIndex : OpRewritePattern<LocalShardIndexOp> {
  LowerShardIndex(MLIRContext *context, LoweringState &state)
      : OpRewritePattern(context), state(state) {}

  LogicalResult matchAndRewrite(LocalShardIndexOp op,
                                PatternRewriter &rewriter) const override {
    if (state.failed)
      return failure();
    MeshOp meshOp = state.lookupMesh(op, op.getMeshAttr());
    if (!meshOp)
      return fail(op->emitOpError("refers to unknown mesh ")
                  << op.getMeshAttr());
    SmallVector<int64_t> axes;
    for (StringRef name : op.getAxes().getAsValueRange<StringAttr>()) {
      std::optional<unsigned> axis = meshOp.findAxis(name);
      if (!axis)
        return fail(op->emitOpError("names unknown axis \"") << name << "\"");
      axes.push_back(*axis);
    }
    rewriter.setInsertionPoint(op);
    Location loc = op.getLoc();
    Value index = state.calls.groupIndex(
        rewriter, loc, state.calls.mesh(rewriter, loc, meshOp), meshOp, axes);
    rewriter.replaceOp(op, index);
    return success();
  }

  LogicalResult fail(InFlightDiagnostic diag) const {
    state.failed = true;
    return diag;
  }

  LoweringState &state;
};

/// A buffer copy left by bufferization. On the device it is a copy of
/// backend memory on the function's stream, not a host memcpy. On the host a
/// contiguous copy stays (a memcpy), and a strided one becomes loops
/// (linalg.copy): otherwise MLIR lowers it to a call into its C runner
/// utilities, a library the compiled program would need wherever it runs.
struct LowerCopy : OpRewritePattern<memref::CopyOp> {
  LowerCopy(MLIRContext *context, LoweringState &state)
      : OpRewritePattern(context), state(state) {}

  LogicalResult matchAndRewrite(memref::CopyOp copy,
                                PatternRewriter &rewriter) const override {
    if (state.failed)
      return failure();
    if (!state.device) {
      // The test MLIR's memref.copy lowering makes between a memcpy and
      // the library call.
      auto contiguous = [](Value memref) {
        MemRefType type = memrefType(memref);
        return type.getLayout().isIdentity() ||
               memref::isStaticShapeAndContiguousRowMajor(type);
      };
      if (contiguous(copy.getSource()) && contiguous(copy.getTarget()))
        return failure();
      rewriter.setInsertionPoint(copy);
      LinalgMover().copy(rewriter, copy.getLoc(), copy.getSource(),
                         copy.getTarget());
      rewriter.eraseOp(copy);
      return success();
    }
    Type elementType = memrefType(copy.getSource()).getElementType();
    std::optional<int32_t> dtype = getRuntimeDType(elementType);
    if (!dtype) {
      state.failed = true;
      return copy.emitOpError("element type ")
             << elementType << " has no runtime equivalent";
    }
    rewriter.setInsertionPoint(copy);
    RuntimeMover mover(state.calls, state.streamFor(copy), *dtype);
    mover.copy(rewriter, copy.getLoc(), copy.getSource(), copy.getTarget());
    rewriter.eraseOp(copy);
    return success();
  }

  LoweringState &state;
};

/// Whether `op` still works on tensors: a dist op before bufferization.
bool needsBufferization(Operation *op) {
  auto isTensor = [](Type type) { return isa<TensorType>(type); };
  return isa<DistDialect>(op->getDialect()) &&
         (llvm::any_of(op->getOperandTypes(), isTensor) ||
          llvm::any_of(op->getResultTypes(), isTensor));
}

struct ConvertDistToRuntimePass
    : public dist::impl::ConvertDistToRuntimeBase<ConvertDistToRuntimePass> {
  using ConvertDistToRuntimeBase::ConvertDistToRuntimeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool device = target == RuntimeTarget::Gpu;
    bool leftovers = false;
    module.walk([&](Operation *op) {
      if (needsBufferization(op)) {
        op->emitOpError("must be bufferized before convert-dist-to-runtime "
                        "(run dist-localize and one-shot-bufferize first)");
        leftovers = true;
      }
    });
    if (leftovers)
      return signalPassFailure();
    // Three walks, in this order, so that the runtime's declarations and
    // constant tables are created in the same order whatever the program:
    // the buffer ops, then the shard indices, then the copies.
    // The walk driver neither folds nor reorders, and visits each op once in
    // program order.
    MLIRContext *context = &getContext();
    LoweringState state(module, device);
    RewritePatternSet bufferOps(context);
    bufferOps
        .add<LowerAllGather, LowerAllSlice, LowerAllToAll, LowerReduceScatter,
             LowerAllReduce, LowerReplicateToPartial, LowerPermute,
             LowerRedistribute, LowerSegmentPacking<BufferPackSegmentsOp, true>,
             LowerSegmentPacking<BufferUnpackSegmentsOp, false>>(context,
                                                                 state);
    RewritePatternSet shardIndices(context);
    shardIndices.add<LowerShardIndex>(context, state);
    RewritePatternSet copies(context);
    copies.add<LowerCopy>(context, state);
    for (RewritePatternSet *patterns : {&bufferOps, &shardIndices, &copies}) {
      walkAndApplyPatterns(module,
                           FrozenRewritePatternSet(std::move(*patterns)));
      if (state.failed)
        return signalPassFailure();
    }
    guardStageCalls(module, state.calls);
    // The meshes now live in the runtime calls' constant tables; drop the
    // symbols nothing refers to any more, so the module is plain LLVM-able IR.
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      if (SymbolTable::symbolKnownUseEmpty(mesh, module))
        mesh.erase();
  }
};

} // namespace
