//===- DistLocalOps.cpp - per-device forms of the collectives -------------===//
//
// The local ops (on tensors) and the buffer ops (their bufferized form, on
// memrefs) see only local buffers, so their verifiers check what the
// buffer-level semantics need: a resolvable mesh and group, equal element
// types, and the shape relations each op's description promises. Both
// families share these checks: an op's input is operand 0 and its output is
// its result (local ops) or operand 1 (buffer ops).
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"

#include "mlir/IR/OpImplementation.h"

#include "dist/Dialect/Dist/IR/DistCollectiveOpInterface.cpp.inc"

using namespace mlir;
using namespace dist;

/// Resolves the mesh and the axes, and returns the group size.
static FailureOr<int64_t> verifyGroup(Operation *op, FlatSymbolRefAttr meshName,
                                      ArrayAttr axes,
                                      SymbolTableCollection &symbolTable) {
  FailureOr<MeshOp> mesh = lookupMesh(op, meshName, symbolTable);
  if (failed(mesh))
    return failure();
  if (axes.empty())
    return op->emitOpError("requires at least one mesh axis");
  FailureOr<SmallVector<unsigned>> indices =
      getAxisIndices(axes, *mesh, [&] { return op->emitOpError(); });
  if (failed(indices))
    return failure();
  llvm::SmallDenseSet<unsigned> seen;
  int64_t groupSize = 1;
  for (unsigned index : *indices) {
    if (!seen.insert(index).second)
      return op->emitOpError("lists mesh axis \"")
             << cast<StringAttr>(mesh->getAxisNames()[index]).getValue()
             << "\" twice";
    groupSize *= mesh->getAxisSizes()[index];
  }
  return groupSize;
}

static ShapedType inputType(Operation *op) {
  return cast<ShapedType>(op->getOperand(0).getType());
}
static ShapedType outputType(Operation *op) {
  if (op->getNumResults() == 1)
    return cast<ShapedType>(op->getResult(0).getType());
  return cast<ShapedType>(op->getOperand(1).getType());
}

static LogicalResult verifyElementTypes(Operation *op) {
  ShapedType in = inputType(op), out = outputType(op);
  if (in.getElementType() != out.getElementType())
    return op->emitOpError("result element type ")
           << out.getElementType() << " differs from operand element type "
           << in.getElementType();
  if (in.getRank() != out.getRank())
    return op->emitOpError("result rank ")
           << out.getRank() << " differs from operand rank " << in.getRank();
  auto hasEncoding = [](ShapedType type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getEncoding();
  };
  if (hasEncoding(in) || hasEncoding(out))
    return op->emitOpError("works on local buffers, which carry no encoding");
  return success();
}

static LogicalResult verifyDim(Operation *op, int64_t dim,
                               StringRef name = "dim") {
  int64_t rank = outputType(op).getRank();
  if (dim >= rank)
    return op->emitOpError()
           << name << " " << dim << " is out of range for rank " << rank;
  return success();
}

/// Every dim but those in `changed` keeps its size.
static LogicalResult verifyOtherDimsEqual(Operation *op,
                                          ArrayRef<int64_t> changed) {
  ShapedType in = inputType(op), out = outputType(op);
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (!llvm::is_contained(changed, d) &&
        in.getDimSize(d) != out.getDimSize(d))
      return op->emitOpError("dim ")
             << d << " changes size from " << in.getDimSize(d) << " to "
             << out.getDimSize(d) << " but this op does not touch it";
  return success();
}

static LogicalResult verifyNotLarger(Operation *op, int64_t dim,
                                     StringRef what) {
  if (outputType(op).getDimSize(dim) > inputType(op).getDimSize(dim))
    return op->emitOpError() << what << " " << dim;
  return success();
}

static LogicalResult verifySameType(Operation *op) {
  if (failed(verifyElementTypes(op)))
    return failure();
  if (inputType(op).getShape() != outputType(op).getShape())
    return op->emitOpError("result shape [")
           << outputType(op).getShape() << "] differs from operand shape ["
           << inputType(op).getShape() << "]";
  return success();
}

/// The group must be able to supply `out` entries along `dim` from `q`
/// buffers of `in` entries each.
static LogicalResult verifyGroupSupplies(Operation *op, int64_t q, int64_t dim,
                                         StringRef verb) {
  int64_t in = inputType(op).getDimSize(dim);
  int64_t out = outputType(op).getDimSize(dim);
  if (out > q * in)
    return op->emitOpError("result dim ")
           << dim << " has " << out << " entries but the group of " << q << " "
           << verb << " only " << q * in;
  return success();
}

//===----------------------------------------------------------------------===//
// Shared verifiers, one per semantics
//===----------------------------------------------------------------------===//

/// The dims a gather, slice, scatter or all-to-all names are in range and
/// the others keep their size; `notLarger`, if any, is the error for a
/// result larger than the input along `dim`.
static LogicalResult verifyDims(CollectiveOpInterface op,
                                StringRef notLarger = {}) {
  int64_t dim = *op.getMoveDim();
  if (failed(verifyElementTypes(op)) || failed(verifyDim(op, dim)))
    return failure();
  SmallVector<int64_t, 2> changed{dim};
  if (std::optional<int64_t> toDim = op.getMoveToDim()) {
    if (failed(verifyDim(op, *toDim, "to_dim")))
      return failure();
    if (dim == *toDim)
      return op.emitOpError("source and destination dim are both ") << dim;
    if (failed(verifyNotLarger(op, *toDim,
                               "chunks cannot be larger than the input along "
                               "to_dim")))
      return failure();
    changed.push_back(*toDim);
  }
  if (!notLarger.empty() && failed(verifyNotLarger(op, dim, notLarger)))
    return failure();
  return verifyOtherDimsEqual(op, changed);
}

/// The optional array attribute `name`. The local and buffer forms of a
/// collective are built from one Dist_Collective record, so they carry the
/// same attributes under the same names.
static std::optional<ArrayRef<int64_t>> arrayAttr(Operation *op,
                                                  StringRef name) {
  if (auto attr = op->getAttrOfType<DenseI64ArrayAttr>(name))
    return attr.asArrayRef();
  return std::nullopt;
}

/// `dim_axes`: per operand dim `nSrc, srcAxes, nDst, dstAxes`, axes in
/// range and each at most once per side, and equal shard counts per dim (a
/// permute keeps them).
static LogicalResult verifyPermuteDimAxes(Operation *op,
                                          const planner::Mesh &mesh,
                                          ArrayRef<int64_t> dimAxes) {
  int64_t rank = inputType(op).getRank(), at = 0;
  llvm::SmallDenseSet<int64_t> seen[2];
  for (int64_t d = 0; d < rank; ++d) {
    int64_t parts[2] = {1, 1};
    for (int side = 0; side < 2; ++side) {
      if (at >= static_cast<int64_t>(dimAxes.size()))
        return op->emitOpError("dim_axes ends inside dim ") << d;
      int64_t count = dimAxes[at++];
      if (count < 0 || count > mesh.getNumAxes() ||
          at + count > static_cast<int64_t>(dimAxes.size()))
        return op->emitOpError("dim_axes: dim ")
               << d << " lists " << count << " axes";
      for (int64_t k = 0; k < count; ++k) {
        int64_t axis = dimAxes[at++];
        if (axis < 0 || axis >= mesh.getNumAxes())
          return op->emitOpError("dim_axes: axis ")
                 << axis << " is not an axis of the mesh";
        if (!seen[side].insert(axis).second)
          return op->emitOpError("dim_axes: axis ")
                 << axis << " splits two dims of the "
                 << (side ? "target" : "source");
        parts[side] *= mesh.getAxisSize(axis);
      }
    }
    if (parts[0] != parts[1])
      return op->emitOpError("dim_axes: dim ")
             << d << " has " << parts[0] << " shards in the source but "
             << parts[1] << " in the target";
  }
  if (at != static_cast<int64_t>(dimAxes.size()))
    return op->emitOpError("dim_axes has ")
           << dimAxes.size() - at << " entries past the operand's " << rank
           << " dims";
  return success();
}

static LogicalResult verifyPermuteSymbols(CollectiveOpInterface op,
                                          SymbolTableCollection &t) {
  FailureOr<MeshOp> mesh = lookupMesh(op, op.getMeshAttr(), t);
  if (failed(mesh))
    return failure();
  FailureOr<planner::Mesh> plannerMesh =
      getPlannerMesh(*mesh, [&] { return op.emitOpError(); });
  if (failed(plannerMesh))
    return failure();
  std::optional<ArrayRef<int64_t>> table = arrayAttr(op, "sources");
  std::optional<ArrayRef<int64_t>> dimAxes = arrayAttr(op, "dim_axes");
  if (table.has_value() == dimAxes.has_value())
    return op.emitOpError("needs exactly one of `sources` (a table) and "
                          "`dim_axes` (the layouts)");
  if (dimAxes)
    return verifyPermuteDimAxes(op, *plannerMesh, *dimAxes);
  // One entry per world rank up to the largest the mesh names; ranks
  // outside the mesh receive nothing (-1).
  int64_t entries = plannerMesh->getMaxRank() + 1;
  ArrayRef<int64_t> sources = *table;
  if (static_cast<int64_t>(sources.size()) != entries)
    return op.emitOpError("has ")
           << sources.size() << " sources but mesh " << op.getMeshAttr()
           << " needs one per world rank 0.." << entries - 1;
  for (auto [rank, source] : llvm::enumerate(sources)) {
    bool member = !plannerMesh->coordinateOfRank(rank).empty();
    if (!member && source != -1)
      return op.emitOpError("rank ")
             << rank << " is not in mesh " << op.getMeshAttr()
             << " but receives from " << source << " (expected -1)";
    if (member && plannerMesh->coordinateOfRank(source).empty())
      return op.emitOpError("rank ") << rank << " receives from " << source
                                     << ", which is not a rank of the mesh";
  }
  return success();
}

/// dist.local.redistribute / dist.buffer.redistribute: the table's shape
/// and every box inside the local shapes.
static LogicalResult verifyRedistributeTable(Operation *op,
                                             ArrayRef<int64_t> table) {
  if (failed(verifyElementTypes(op)))
    return failure();
  ShapedType in = inputType(op), out = outputType(op);
  if (in.getRank() != out.getRank())
    return op->emitOpError("operand rank ")
           << in.getRank() << " differs from result rank " << out.getRank();
  int64_t rank = in.getRank();
  int64_t width = 2 + 3 * rank;
  if (table.size() % width != 0)
    return op->emitOpError("table has ")
           << table.size() << " entries, not a multiple of " << width
           << " (2 ranks + 3 x " << rank << " dims per transfer)";
  for (size_t t = 0; t * width < table.size(); ++t) {
    ArrayRef<int64_t> entry = table.slice(t * width, width);
    if (entry[0] < 0 || entry[1] < 0)
      return op->emitOpError("transfer ") << t << " names a negative rank";
    for (int64_t d = 0; d < rank; ++d) {
      int64_t from = entry[2 + d], to = entry[2 + rank + d],
              size = entry[2 + 2 * rank + d];
      if (size < 0 || from < 0 || to < 0 || from > in.getDimSize(d) - size ||
          to > out.getDimSize(d) - size)
        return op->emitOpError("transfer ")
               << t << " box along dim " << d << " (offsets " << from << ", "
               << to << ", size " << size
               << ") is outside the operand or the result";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The local and buffer levels, per move
//===----------------------------------------------------------------------===//

LogicalResult dist::verifyLocalCollective(CollectiveOpInterface op) {
  switch (op.getMoveKind()) {
  case planner::MoveKind::AllGather:
  case planner::MoveKind::AllToAll:
    return verifyDims(op);
  case planner::MoveKind::AllSlice:
    return verifyDims(op, "a slice cannot be larger than its input along dim");
  case planner::MoveKind::ReduceScatter:
    return verifyDims(op, "a scattered chunk cannot be larger than its input "
                          "along dim");
  case planner::MoveKind::AllReduce:
  case planner::MoveKind::ReplicateToPartial:
  case planner::MoveKind::Permute:
    return verifySameType(op);
  case planner::MoveKind::Redistribute:
    return verifyRedistributeTable(op, *arrayAttr(op, "table"));
  }
  llvm_unreachable("unknown move kind");
}

LogicalResult dist::verifyLocalCollectiveSymbols(CollectiveOpInterface op,
                                                 SymbolTableCollection &table) {
  planner::MoveKind kind = op.getMoveKind();
  if (kind == planner::MoveKind::Permute)
    return verifyPermuteSymbols(op, table);
  if (kind == planner::MoveKind::Redistribute)
    return failure(
        failed(lookupMesh(
            op, op->getAttrOfType<FlatSymbolRefAttr>("source_mesh"), table)) ||
        failed(lookupMesh(op, op.getMeshAttr(), table)));
  FailureOr<int64_t> q =
      verifyGroup(op, op.getMeshAttr(), op.getMoveAxes(), table);
  if (failed(q))
    return failure();
  if (kind == planner::MoveKind::AllGather)
    return verifyGroupSupplies(op, *q, *op.getMoveDim(), "gathers");
  if (kind == planner::MoveKind::AllToAll)
    return verifyGroupSupplies(op, *q, *op.getMoveDim(), "sends");
  return success();
}

SmallVector<int64_t> CollectiveOpInterface::getAxisIndices(MeshOp mesh) {
  SmallVector<int64_t> indices;
  if (ArrayAttr axes = getMoveAxes())
    for (StringRef name : axes.getAsValueRange<StringAttr>())
      if (std::optional<unsigned> index = mesh.findAxis(name))
        indices.push_back(*index);
  return indices;
}

LogicalResult
LocalShardIndexOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyGroup(*this, getMeshAttr(), getAxes(), table);
}

//===----------------------------------------------------------------------===//
// Segment packing
//===----------------------------------------------------------------------===//

/// Shapes agree off `dim`; along it the per-segment side holds sum(blocks)
/// rows and the packed side parts * sum(pieces); every piece fits its block
/// (pieces * parts covers the block).
template <typename OpTy>
static LogicalResult verifySegmentPacking(OpTy op, bool packs) {
  Operation *raw = op.getOperation();
  if (failed(verifyElementTypes(raw)))
    return failure();
  ShapedType in = inputType(raw), out = outputType(raw);
  int64_t dim = op.getDim();
  if (dim >= in.getRank())
    return op.emitOpError("dim ")
           << dim << " is out of range for rank " << in.getRank();
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (d != dim && in.getDimSize(d) != out.getDimSize(d))
      return op.emitOpError("result dim ")
             << d << " has " << out.getDimSize(d) << " entries, the operand "
             << in.getDimSize(d) << "; only dim " << dim << " changes";
  ArrayRef<int64_t> blocks = op.getBlocks(), pieces = op.getPieces();
  int64_t parts = static_cast<int64_t>(op.getParts());
  if (blocks.empty() || blocks.size() != pieces.size())
    return op.emitOpError("needs one block and one piece size per segment, "
                          "got ")
           << blocks.size() << " and " << pieces.size();
  int64_t blockRows = 0, pieceRows = 0;
  for (auto [block, piece] : llvm::zip(blocks, pieces)) {
    if (block < 0 || piece < 0)
      return op.emitOpError("block and piece sizes must be >= 0");
    if (block > piece * parts)
      return op.emitOpError("a block of ") << block << " rows does not fit in "
                                           << parts << " pieces of " << piece;
    blockRows += block;
    pieceRows += piece;
  }
  int64_t perSegment = packs ? in.getDimSize(dim) : out.getDimSize(dim);
  int64_t packed = packs ? out.getDimSize(dim) : in.getDimSize(dim);
  if (perSegment != blockRows)
    return op.emitOpError("the per-segment side has ")
           << perSegment << " rows along dim " << dim
           << ", but the blocks add up to " << blockRows;
  if (packed != parts * pieceRows)
    return op.emitOpError("the packed side has ")
           << packed << " rows along dim " << dim << ", not " << parts
           << " chunks of " << pieceRows;
  return success();
}

LogicalResult LocalPackSegmentsOp::verify() {
  return verifySegmentPacking(*this, /*packs=*/true);
}
LogicalResult LocalUnpackSegmentsOp::verify() {
  return verifySegmentPacking(*this, /*packs=*/false);
}
LogicalResult BufferPackSegmentsOp::verify() {
  return verifySegmentPacking(*this, /*packs=*/true);
}
LogicalResult BufferUnpackSegmentsOp::verify() {
  return verifySegmentPacking(*this, /*packs=*/false);
}
