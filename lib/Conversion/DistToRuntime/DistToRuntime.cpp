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

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/TypeSwitch.h"

namespace dist {
#define GEN_PASS_DEF_CONVERTDISTTORUNTIME
#include "dist/Conversion/Passes.h.inc"
} // namespace dist

using namespace mlir;
using namespace dist;

namespace {

MemRefType memrefType(Value value) { return cast<MemRefType>(value.getType()); }

int64_t numElements(Value memref) { return memrefType(memref).getNumElements(); }

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
    calls.call(b, loc, "distRtCopyStrided", b.getI32Type(), args);
  }

  void fill(OpBuilder &b, Location loc, Value dst, TypedAttr value) override {
    View to = view(b, loc, dst);
    Value rank = calls.i64(b, loc, to.sizes.size());
    if (isZero(value)) {
      Value args[] = {rank, table(b, loc, to.sizes), to.pointer,
                      table(b, loc, to.strides), calls.i32(b, loc, dtype),
                      stream};
      calls.call(b, loc, "distRtFillZero", b.getI32Type(), args);
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
                        calls.i32(b, loc, DIST_RT_COPY_HOST_TO_DEVICE),
                        stream};
    calls.call(b, loc, "distRtMemcpy", b.getI32Type(), copyArgs);
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
    calls.call(b, loc, "distRtCopyStrided", b.getI32Type(), args);
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
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, memref);
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref);
    int64_t bytes =
        (memrefType(memref).getElementTypeBitWidth() + 7) / 8;
    Value offsetBytes = arith::MulIOp::create(
        b, loc, meta.getOffset(), arith::ConstantIndexOp::create(b, loc, bytes));
    Value address = arith::IndexCastOp::create(
        b, loc, b.getI64Type(), arith::AddIOp::create(b, loc, base, offsetBytes));
    View v;
    v.pointer = LLVM::IntToPtrOp::create(
        b, loc, LLVM::LLVMPointerType::get(b.getContext()), address);
    v.sizes.assign(meta.getSizes().begin(), meta.getSizes().end());
    v.strides.assign(meta.getStrides().begin(), meta.getStrides().end());
    return v;
  }

  /// A host i64 array holding `values`, read by the runtime during the call.
  Value table(OpBuilder &b, Location loc, ArrayRef<Value> values) {
    auto type = MemRefType::get({static_cast<int64_t>(values.size())},
                                b.getI64Type());
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
  Value from = memref::SubViewOp::create(b, loc, src, srcOffsets, sizes, strides);
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
  scf::ForOp::create(b, loc, lb, ub, step, ValueRange{},
                     [&](OpBuilder &nested, Location nestedLoc, Value j,
                         ValueRange) {
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

/// A [q, shape...] temporary, freed by the caller.
Value allocChunks(OpBuilder &b, Location loc, int64_t q,
                  ArrayRef<int64_t> shape, Type elementType) {
  SmallVector<int64_t> chunked{q};
  chunked.append(shape.begin(), shape.end());
  return memref::AllocOp::create(b, loc,
                                 MemRefType::get(chunked, elementType));
}

int64_t groupSize(MeshOp mesh, ArrayRef<int64_t> axes) {
  int64_t q = 1;
  for (int64_t axis : axes)
    q *= mesh.getAxisSizes()[axis];
  return q;
}

class Lowering {
public:
  Lowering(ModuleOp module, SymbolTableCollection &symbols, bool device)
      : calls(module), symbols(symbols), device(device) {}

  LogicalResult lower(Operation *op) {
    // A tensor with a zero extent has empty blocks on every device (local
    // buffers have the same padded shape everywhere), so there is nothing to
    // move and no device joins the collective: all skip it alike. (A
    // memref.subview would also refuse offset 0 into the empty dim.)
    if (llvm::any_of(op->getOperands(), [](Value v) {
          auto type = dyn_cast<MemRefType>(v.getType());
          return type && type.hasStaticShape() && type.getNumElements() == 0;
        })) {
      op->erase();
      return success();
    }
    OpBuilder b(op);
    Location loc = op->getLoc();
    Type elementType = memrefType(op->getOperand(0)).getElementType();
    std::optional<int32_t> dtype = getRuntimeDType(elementType);
    if (!dtype)
      return op->emitOpError("element type ")
             << elementType << " has no runtime equivalent";
    std::unique_ptr<DataMover> mover;
    if (device)
      mover = std::make_unique<RuntimeMover>(calls, streamFor(op), *dtype);
    else
      mover = std::make_unique<LinalgMover>();
    if (isa<BufferPackSegmentsOp, BufferUnpackSegmentsOp>(op)) {
      lowerSegmentPacking(*mover, b, loc, op);
      op->erase();
      return success();
    }
    auto meshName = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
    auto meshOp = symbols.lookupNearestSymbolFrom<MeshOp>(op, meshName);
    if (!meshOp)
      return op->emitOpError("refers to unknown mesh ") << meshName;
    Ctx ctx{b, loc, meshOp, *dtype, calls.mesh(b, loc, meshOp), *mover,
            device ? streamFor(op) : Value()};
    LogicalResult result =
        llvm::TypeSwitch<Operation *, LogicalResult>(op)
            .Case([&](BufferAllGatherOp o) { return lowerAllGather(ctx, o); })
            .Case([&](BufferAllSliceOp o) { return lowerAllSlice(ctx, o); })
            .Case([&](BufferAllToAllOp o) { return lowerAllToAll(ctx, o); })
            .Case([&](BufferReduceScatterOp o) {
              return lowerReduceScatter(ctx, o);
            })
            .Case([&](BufferAllReduceOp o) { return lowerAllReduce(ctx, o); })
            .Case([&](BufferReplicateToPartialOp o) {
              return lowerReplicateToPartial(ctx, o);
            })
            .Case([&](BufferPermuteOp o) { return lowerPermute(ctx, o); })
            .Case([&](BufferRedistributeOp o) {
              return lowerRedistribute(ctx, o);
            })
            .Default([](Operation *) { return failure(); });
    if (succeeded(result))
      op->erase();
    return result;
  }

  /// Zero the output, then copy every piece between the per-segment and
  /// the packed layout (SegmentPieces.h): strided copies of row ranges,
  /// which run on the device's stream with target=gpu.
  void lowerSegmentPacking(DataMover &mover, OpBuilder &b, Location loc,
                           Operation *op) {
    Value in = op->getOperand(0), out = op->getOperand(1);
    bool packs = isa<BufferPackSegmentsOp>(op);
    auto attr = [&](StringRef name) {
      return op->getAttrOfType<DenseI64ArrayAttr>(name).asArrayRef();
    };
    int64_t dim = op->getAttrOfType<IntegerAttr>("dim").getInt();
    int64_t parts = op->getAttrOfType<IntegerAttr>("parts").getInt();
    mover.fill(b, loc, out, zeroOf(b, memrefType(out).getElementType()));
    forEachSegmentPiece(
        attr("blocks"), attr("pieces"), parts,
        [&](int64_t blockRow, int64_t packedRow, int64_t rows) {
          int64_t from = packs ? blockRow : packedRow;
          int64_t to = packs ? packedRow : blockRow;
          copyAlong(mover, b, loc, in, out, dim, b.getIndexAttr(from),
                    b.getIndexAttr(to), b.getIndexAttr(rows));
        });
  }

  /// This device's shard index: its group index over the axes.
  LogicalResult lowerShardIndex(LocalShardIndexOp op) {
    auto meshOp = symbols.lookupNearestSymbolFrom<MeshOp>(op, op.getMeshAttr());
    if (!meshOp)
      return op->emitOpError("refers to unknown mesh ") << op.getMeshAttr();
    SmallVector<int64_t> axes;
    for (StringRef name : op.getAxes().getAsValueRange<StringAttr>()) {
      std::optional<unsigned> axis = meshOp.findAxis(name);
      if (!axis)
        return op->emitOpError("names unknown axis \"") << name << "\"";
      axes.push_back(*axis);
    }
    OpBuilder b(op);
    Value index = calls.groupIndex(b, op.getLoc(),
                                   calls.mesh(b, op.getLoc(), meshOp), meshOp,
                                   axes);
    op.replaceAllUsesWith(index);
    op.erase();
    return success();
  }

  /// On the device, a buffer copy left by bufferization is a copy of backend
  /// memory on the function's stream, not a host memcpy.
  LogicalResult lowerCopy(memref::CopyOp copy) {
    Type elementType = memrefType(copy.getSource()).getElementType();
    std::optional<int32_t> dtype = getRuntimeDType(elementType);
    if (!dtype)
      return copy.emitOpError("element type ")
             << elementType << " has no runtime equivalent";
    OpBuilder b(copy);
    RuntimeMover mover(calls, streamFor(copy), *dtype);
    mover.copy(b, copy.getLoc(), copy.getSource(), copy.getTarget());
    copy.erase();
    return success();
  }

private:
  struct Ctx {
    OpBuilder &b;
    Location loc;
    MeshOp mesh;
    int32_t dtype;
    Value meshHandle;
    DataMover &mover;
    Value stream; // null: the runtime's own stream (synchronous on cpu)
  };

public:
  /// The stream of the function holding `op`: fetched once at its entry, so
  /// that every call of the function is ordered on it.
  Value streamFor(Operation *op) {
    auto func = op->getParentOfType<func::FuncOp>();
    Value &stream = streams[func];
    if (!stream) {
      OpBuilder b = OpBuilder::atBlockBegin(&func.getBody().front());
      stream = calls.call(b, func.getLoc(), "distRtDefaultStream",
                          LLVM::LLVMPointerType::get(b.getContext()), {})[0];
    }
    return stream;
  }

private:

  template <typename OpTy> SmallVector<int64_t> axesOf(OpTy op, MeshOp mesh) {
    SmallVector<int64_t> axes;
    for (StringRef name : op.getAxes().template getAsValueRange<StringAttr>())
      axes.push_back(*mesh.findAxis(name));
    return axes;
  }

  Value ptr(Ctx &c, Value memref) { return calls.bufferPtr(c.b, c.loc, memref); }
  Value i64(Ctx &c, int64_t v) { return calls.i64(c.b, c.loc, v); }
  Value i32(Ctx &c, int32_t v) { return calls.i32(c.b, c.loc, v); }
  Value null(Ctx &c) { return calls.nullPtr(c.b, c.loc); }

  /// (group, send, recv, countPerRank, dtype[, redop], stream) -> status.
  void collective(Ctx &c, StringRef name, Value group, Value send, Value recv,
                  int64_t count, std::optional<int32_t> redop = std::nullopt) {
    SmallVector<Value> args{group, ptr(c, send), ptr(c, recv), i64(c, count),
                            i32(c, c.dtype)};
    if (redop)
      args.push_back(i32(c, *redop));
    args.push_back(c.stream ? c.stream : null(c));
    // The runtime aborts the job on any failure (its default), so the
    // status needs no check here.
    calls.call(c.b, c.loc, name, c.b.getI32Type(), args);
  }

  LogicalResult lowerAllGather(Ctx &c, BufferAllGatherOp op) {
    SmallVector<int64_t> axes = axesOf(op, c.mesh);
    int64_t q = groupSize(c.mesh, axes), dim = op.getDim();
    Value in = op.getInput(), out = op.getOutput();
    ArrayRef<int64_t> shape = memrefType(in).getShape();
    Value group = calls.group(c.b, c.loc, c.meshHandle, axes);
    if (isChunkMajor(shape, dim) &&
        memrefType(out).getDimSize(dim) == q * shape[dim]) {
      collective(c, "distRtAllGather", group, in, out, numElements(in));
      return success();
    }
    Value chunks = allocChunks(c.b, c.loc, q, shape, memrefType(in).getElementType());
    collective(c, "distRtAllGather", group, in, chunks, numElements(in));
    unpackChunks(c.mover, c.b, c.loc, chunks, out, dim);
    memref::DeallocOp::create(c.b, c.loc, chunks);
    return success();
  }

  LogicalResult lowerAllToAll(Ctx &c, BufferAllToAllOp op) {
    SmallVector<int64_t> axes = axesOf(op, c.mesh);
    int64_t q = groupSize(c.mesh, axes);
    int64_t dim = op.getDim(), toDim = op.getToDim();
    Value in = op.getInput(), out = op.getOutput();
    Type elementType = memrefType(in).getElementType();
    // Each chunk is the input with `toDim` cut to the output's extent.
    SmallVector<int64_t> chunkShape(memrefType(in).getShape());
    chunkShape[toDim] = memrefType(out).getDimSize(toDim);
    Value group = calls.group(c.b, c.loc, c.meshHandle, axes);

    bool packed = !(isChunkMajor(chunkShape, toDim) &&
                    q * chunkShape[toDim] == memrefType(in).getDimSize(toDim));
    bool direct = isChunkMajor(chunkShape, dim) &&
                  memrefType(out).getDimSize(dim) == q * chunkShape[dim];
    // When both sides split evenly, the runtime reads and writes the chunks
    // in place (strided): no pack before the exchange, no unpack after.
    if ((packed || !direct) && lowerStridedAllToAll(c, group, in, out,
                                                    chunkShape, q, dim, toDim))
      return success();

    Value send = in;
    if (packed) {
      send = allocChunks(c.b, c.loc, q, chunkShape, elementType);
      packChunks(c.mover, c.b, c.loc, in, send, toDim);
    }
    Value recv = direct ? out : allocChunks(c.b, c.loc, q, chunkShape, elementType);
    int64_t count = 1;
    for (int64_t s : chunkShape)
      count *= s;
    collective(c, "distRtAllToAll", group, send, recv, count);
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
  bool lowerStridedAllToAll(Ctx &c, Value group, Value in, Value out,
                            ArrayRef<int64_t> chunkShape, int64_t q,
                            int64_t dim, int64_t toDim) {
    MemRefType inType = memrefType(in), outType = memrefType(out);
    int64_t rank = inType.getRank();
    if (rank >= DIST_RT_MAX_COPY_DIMS || !inType.getLayout().isIdentity() ||
        !outType.getLayout().isIdentity() ||
        q * chunkShape[toDim] != inType.getDimSize(toDim) ||
        q * chunkShape[dim] != outType.getDimSize(dim))
      return false;
    auto rowMajor = [](ArrayRef<int64_t> shape) {
      SmallVector<int64_t> strides(shape.size(), 1);
      for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * shape[d + 1];
      return strides;
    };
    SmallVector<int64_t> inStrides = rowMajor(inType.getShape());
    SmallVector<int64_t> outStrides = rowMajor(outType.getShape());
    Value args[] = {group,
                    i64(c, rank),
                    calls.constArray(c.b, c.loc, chunkShape),
                    ptr(c, in),
                    calls.constArray(c.b, c.loc, inStrides),
                    i64(c, chunkShape[toDim] * inStrides[toDim]),
                    ptr(c, out),
                    calls.constArray(c.b, c.loc, outStrides),
                    i64(c, chunkShape[dim] * outStrides[dim]),
                    i32(c, c.dtype),
                    c.stream ? c.stream : null(c)};
    calls.call(c.b, c.loc, "distRtAllToAllStrided", c.b.getI32Type(), args);
    return true;
  }

  LogicalResult lowerReduceScatter(Ctx &c, BufferReduceScatterOp op) {
    SmallVector<int64_t> axes = axesOf(op, c.mesh);
    int64_t q = groupSize(c.mesh, axes), dim = op.getDim();
    Value in = op.getInput(), out = op.getOutput();
    ArrayRef<int64_t> chunkShape = memrefType(out).getShape();
    Value group = calls.group(c.b, c.loc, c.meshHandle, axes);
    Value send = in;
    bool packed = !(isChunkMajor(chunkShape, dim) &&
                    q * chunkShape[dim] == memrefType(in).getDimSize(dim));
    if (packed) {
      send = allocChunks(c.b, c.loc, q, chunkShape, memrefType(in).getElementType());
      packChunks(c.mover, c.b, c.loc, in, send, dim);
    }
    collective(c, "distRtReduceScatter", group, send, out, numElements(out),
               getRuntimeReduction(op.getReduction()));
    if (packed)
      memref::DeallocOp::create(c.b, c.loc, send);
    return success();
  }

  LogicalResult lowerAllReduce(Ctx &c, BufferAllReduceOp op) {
    Value group = calls.group(c.b, c.loc, c.meshHandle, axesOf(op, c.mesh));
    collective(c, "distRtAllReduce", group, op.getInput(), op.getOutput(),
               numElements(op.getInput()),
               getRuntimeReduction(op.getReduction()));
    return success();
  }

  /// Keeps entries [r*S, (r+1)*S) of `dim`, r = this device's group index;
  /// whatever lies past the input is zero.
  LogicalResult lowerAllSlice(Ctx &c, BufferAllSliceOp op) {
    SmallVector<int64_t> axes = axesOf(op, c.mesh);
    int64_t q = groupSize(c.mesh, axes), dim = op.getDim();
    Value in = op.getInput(), out = op.getOutput();
    int64_t extent = memrefType(in).getDimSize(dim);
    int64_t size = memrefType(out).getDimSize(dim);
    OpBuilder &b = c.b;
    Location loc = c.loc;
    if (q * size > extent)
      c.mover.fill(b, loc, out, zeroOf(b, memrefType(out).getElementType()));
    Value r = calls.groupIndex(b, loc, c.meshHandle, c.mesh, axes);
    // offset = min(r*S, extent); rows = min(S, extent - offset).
    Value extentV = arith::ConstantIndexOp::create(b, loc, extent);
    Value offset = arith::MinUIOp::create(b, loc, times(b, loc, r, size), extentV);
    Value rows = arith::MinUIOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, size),
        arith::SubIOp::create(b, loc, extentV, offset));
    copyAlong(c.mover, b, loc, in, out, dim, offset, b.getIndexAttr(0), rows);
    return success();
  }

  /// Group member 0 keeps the value; for sum and prod the others hold the
  /// identity, for max, min and avg the value itself.
  LogicalResult lowerReplicateToPartial(Ctx &c, BufferReplicateToPartialOp op) {
    OpBuilder &b = c.b;
    Location loc = c.loc;
    Value in = op.getInput(), out = op.getOutput();
    Type elementType = memrefType(in).getElementType();
    ReductionKind kind = op.getReduction();
    if (kind != ReductionKind::sum && kind != ReductionKind::prod) {
      c.mover.copy(b, loc, in, out);
      return success();
    }
    TypedAttr identity = zeroOf(b, elementType);
    if (kind == ReductionKind::prod)
      identity = isa<FloatType>(elementType)
                     ? TypedAttr(b.getFloatAttr(elementType, 1.0))
                     : TypedAttr(b.getIntegerAttr(elementType, 1));
    Value r = calls.groupIndex(b, loc, c.meshHandle, c.mesh, axesOf(op, c.mesh));
    Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, r,
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

  /// Whole-buffer exchange along the compile-time table: rank r receives
  /// from sources[r] and sends to every rank naming it.
  LogicalResult lowerPermute(Ctx &c, BufferPermuteOp op) {
    if (std::optional<ArrayRef<int64_t>> dimAxes = op.getDimAxes()) {
      // The runtime builds the tables from the layouts.
      SmallVector<int64_t> entries(dimAxes->begin(), dimAxes->end());
      int64_t size = entries.size();
      if (entries.empty())
        entries.push_back(0); // an address even for a rank-0 tensor
      Value args[] = {c.meshHandle,
                      ptr(c, op.getInput()),
                      ptr(c, op.getOutput()),
                      i64(c, numElements(op.getInput())),
                      i32(c, c.dtype),
                      i64(c, memrefType(op.getInput()).getRank()),
                      calls.constArray(c.b, c.loc, entries),
                      i64(c, size),
                      c.stream ? c.stream : null(c)};
      calls.call(c.b, c.loc, "distRtPermuteByLayouts", c.b.getI32Type(), args);
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
                    ptr(c, op.getInput()),
                    ptr(c, op.getOutput()),
                    i64(c, numElements(op.getInput())),
                    i32(c, c.dtype),
                    calls.constArray(c.b, c.loc, sources),
                    calls.constArray(c.b, c.loc, offsets),
                    calls.constArray(c.b, c.loc, list),
                    c.stream ? c.stream : null(c)};
    calls.call(c.b, c.loc, "distRtPermute", c.b.getI32Type(), args);
    return success();
  }

  /// Point-to-point boxes along the compile-time table (distRtExchange).
  /// The target mesh is registered (c.meshHandle) so that a job too small
  /// for its ranks fails with a clear message; the source mesh too.
  LogicalResult lowerRedistribute(Ctx &c, BufferRedistributeOp op) {
    auto source =
        symbols.lookupNearestSymbolFrom<MeshOp>(op, op.getSourceMeshAttr());
    if (!source)
      return op->emitOpError("refers to unknown mesh ")
             << op.getSourceMeshAttr();
    calls.mesh(c.b, c.loc, source);
    MemRefType in = memrefType(op.getInput()), out = memrefType(op.getOutput());
    ArrayRef<int64_t> table = op.getTable();
    int64_t width = 2 + 3 * in.getRank();
    // Keep the table non-empty so it has an address even when nothing moves.
    SmallVector<int64_t> entries(table.begin(), table.end());
    if (entries.empty())
      entries.push_back(-1);
    Value args[] = {i64(c, in.getRank()),
                    calls.constArray(c.b, c.loc, in.getShape()),
                    ptr(c, op.getInput()),
                    calls.constArray(c.b, c.loc, out.getShape()),
                    ptr(c, op.getOutput()),
                    i64(c, int64_t(table.size()) / width),
                    calls.constArray(c.b, c.loc, entries),
                    i32(c, c.dtype),
                    c.stream ? c.stream : null(c)};
    calls.call(c.b, c.loc, "distRtExchange", c.b.getI32Type(), args);
    return success();
  }

  RuntimeCalls calls;
  SymbolTableCollection &symbols;
  bool device;
  DenseMap<Operation *, Value> streams;
};

struct ConvertDistToRuntimePass
    : public dist::impl::ConvertDistToRuntimeBase<ConvertDistToRuntimePass> {
  using ConvertDistToRuntimeBase::ConvertDistToRuntimeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (target != "cpu" && target != "gpu") {
      module.emitError("convert-dist-to-runtime: unknown target '")
          << target << "' (expected cpu or gpu)";
      return signalPassFailure();
    }
    bool device = target == "gpu";
    SmallVector<Operation *> ops;
    bool leftovers = false;
    module.walk([&](Operation *op) {
      if (isa<BufferAllGatherOp, BufferAllSliceOp, BufferAllToAllOp,
              BufferReduceScatterOp, BufferAllReduceOp,
              BufferReplicateToPartialOp, BufferPermuteOp,
              BufferRedistributeOp, BufferPackSegmentsOp,
              BufferUnpackSegmentsOp>(op))
        ops.push_back(op);
      else if (isa<LocalAllGatherOp, LocalAllSliceOp, LocalAllToAllOp,
                   LocalReduceScatterOp, LocalAllReduceOp,
                   LocalReplicateToPartialOp, LocalPermuteOp,
                   LocalRedistributeOp, LocalPackSegmentsOp,
                   LocalUnpackSegmentsOp, ReshardOp, AllGatherOp, AllSliceOp,
                   AllToAllOp, ReduceScatterOp, AllReduceOp,
                   ReplicateToPartialOp, PermuteOp, RedistributeOp>(op)) {
        op->emitOpError("must be bufferized before convert-dist-to-runtime "
                        "(run dist-localize and one-shot-bufferize first)");
        leftovers = true;
      }
    });
    if (leftovers)
      return signalPassFailure();
    // The user's compute is host loops: on device buffers it would read
    // GPU memory from the CPU. Say so at the op instead of crashing later.
    if (device) {
      bool compute = false;
      module.walk([&](linalg::LinalgOp op) {
        op->emitOpError("is compute on sharded data, which target=gpu does "
                        "not run yet (it is lowered to host loops); use "
                        "target=cpu");
        compute = true;
      });
      if (compute)
        return signalPassFailure();
    }
    SymbolTableCollection symbols;
    Lowering lowering(module, symbols, device);
    for (Operation *op : ops)
      if (failed(lowering.lower(op)))
        return signalPassFailure();
    SmallVector<LocalShardIndexOp> shardIndices;
    module.walk([&](LocalShardIndexOp op) { shardIndices.push_back(op); });
    for (LocalShardIndexOp op : shardIndices)
      if (failed(lowering.lowerShardIndex(op)))
        return signalPassFailure();
    if (device) {
      SmallVector<memref::CopyOp> copies;
      module.walk([&](memref::CopyOp copy) { copies.push_back(copy); });
      for (memref::CopyOp copy : copies)
        if (failed(lowering.lowerCopy(copy)))
          return signalPassFailure();
    }
    // The meshes now live in the runtime calls' constant tables; drop the
    // symbols nothing refers to any more, so the module is plain LLVM-able IR.
    for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
      if (SymbolTable::symbolKnownUseEmpty(mesh, module))
        mesh.erase();
  }
};

} // namespace
