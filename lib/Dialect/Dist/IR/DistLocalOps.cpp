//===- DistLocalOps.cpp - per-device forms of the collectives -------------===//
//
// The local ops see only local buffers, so their verifiers check what the
// buffer-level semantics need: a resolvable mesh and group, equal element
// types, and the shape relations each op's description promises.
//
//===----------------------------------------------------------------------===//

#include "dist/Dialect/Dist/IR/DistOps.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"

#include "mlir/IR/OpImplementation.h"

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

static LogicalResult verifyElementTypes(Operation *op, RankedTensorType in,
                                        RankedTensorType out) {
  if (in.getElementType() != out.getElementType())
    return op->emitOpError("result element type ")
           << out.getElementType() << " differs from operand element type "
           << in.getElementType();
  if (in.getRank() != out.getRank())
    return op->emitOpError("result rank ")
           << out.getRank() << " differs from operand rank " << in.getRank();
  if (in.getEncoding() || out.getEncoding())
    return op->emitOpError("works on local buffers, which carry no encoding");
  return success();
}

static LogicalResult verifyDim(Operation *op, int64_t dim, int64_t rank,
                               StringRef name = "dim") {
  if (dim >= rank)
    return op->emitOpError() << name << " " << dim
                             << " is out of range for rank " << rank;
  return success();
}

/// Every dim but those in `changed` keeps its size.
static LogicalResult verifyOtherDimsEqual(Operation *op, RankedTensorType in,
                                          RankedTensorType out,
                                          ArrayRef<int64_t> changed) {
  for (int64_t d = 0; d < in.getRank(); ++d)
    if (!llvm::is_contained(changed, d) && in.getDimSize(d) != out.getDimSize(d))
      return op->emitOpError("dim ")
             << d << " changes size from " << in.getDimSize(d) << " to "
             << out.getDimSize(d) << " but this op does not touch it";
  return success();
}

template <typename OpTy>
static LogicalResult verifyLocalCommon(OpTy op) {
  return verifyElementTypes(op, op.getInput().getType(), op.getType());
}

template <typename OpTy>
static SmallVector<int64_t> axisIndicesOf(OpTy op, MeshOp mesh) {
  SmallVector<int64_t> indices;
  for (StringRef name : op.getAxes().template getAsValueRange<StringAttr>())
    if (std::optional<unsigned> index = mesh.findAxis(name))
      indices.push_back(*index);
  return indices;
}

//===----------------------------------------------------------------------===//

LogicalResult LocalAllGatherOp::verify() {
  if (failed(verifyLocalCommon(*this)) ||
      failed(verifyDim(*this, getDim(), getType().getRank())))
    return failure();
  return verifyOtherDimsEqual(*this, getInput().getType(), getType(),
                              {static_cast<int64_t>(getDim())});
}
LogicalResult LocalAllGatherOp::verifySymbolUses(SymbolTableCollection &t) {
  FailureOr<int64_t> q = verifyGroup(*this, getMeshAttr(), getAxes(), t);
  if (failed(q))
    return failure();
  int64_t in = getInput().getType().getDimSize(getDim());
  int64_t out = getType().getDimSize(getDim());
  if (out > *q * in)
    return emitOpError("result dim ")
           << getDim() << " has " << out << " entries but the group of " << *q
           << " gathers only " << *q * in;
  return success();
}
SmallVector<int64_t> LocalAllGatherOp::getAxisIndices(MeshOp mesh) {
  return axisIndicesOf(*this, mesh);
}

LogicalResult LocalAllSliceOp::verify() {
  if (failed(verifyLocalCommon(*this)) ||
      failed(verifyDim(*this, getDim(), getType().getRank())))
    return failure();
  if (getType().getDimSize(getDim()) > getInput().getType().getDimSize(getDim()))
    return emitOpError("a slice cannot be larger than its input along dim ")
           << getDim();
  return verifyOtherDimsEqual(*this, getInput().getType(), getType(),
                              {static_cast<int64_t>(getDim())});
}
LogicalResult LocalAllSliceOp::verifySymbolUses(SymbolTableCollection &t) {
  return verifyGroup(*this, getMeshAttr(), getAxes(), t);
}
SmallVector<int64_t> LocalAllSliceOp::getAxisIndices(MeshOp mesh) {
  return axisIndicesOf(*this, mesh);
}

LogicalResult LocalAllToAllOp::verify() {
  int64_t rank = getType().getRank();
  if (failed(verifyLocalCommon(*this)) ||
      failed(verifyDim(*this, getDim(), rank)) ||
      failed(verifyDim(*this, getToDim(), rank, "to_dim")))
    return failure();
  if (getDim() == getToDim())
    return emitOpError("source and destination dim are both ") << getDim();
  if (getType().getDimSize(getToDim()) >
      getInput().getType().getDimSize(getToDim()))
    return emitOpError("chunks of to_dim ")
           << getToDim() << " cannot be larger than the input";
  return verifyOtherDimsEqual(
      *this, getInput().getType(), getType(),
      {static_cast<int64_t>(getDim()), static_cast<int64_t>(getToDim())});
}
LogicalResult LocalAllToAllOp::verifySymbolUses(SymbolTableCollection &t) {
  FailureOr<int64_t> q = verifyGroup(*this, getMeshAttr(), getAxes(), t);
  if (failed(q))
    return failure();
  int64_t in = getInput().getType().getDimSize(getDim());
  int64_t out = getType().getDimSize(getDim());
  if (out > *q * in)
    return emitOpError("result dim ")
           << getDim() << " has " << out << " entries but the group of " << *q
           << " sends only " << *q * in;
  return success();
}
SmallVector<int64_t> LocalAllToAllOp::getAxisIndices(MeshOp mesh) {
  return axisIndicesOf(*this, mesh);
}

LogicalResult LocalReduceScatterOp::verify() {
  if (failed(verifyLocalCommon(*this)) ||
      failed(verifyDim(*this, getDim(), getType().getRank())))
    return failure();
  if (getType().getDimSize(getDim()) > getInput().getType().getDimSize(getDim()))
    return emitOpError("a scattered chunk cannot be larger than its input "
                       "along dim ")
           << getDim();
  return verifyOtherDimsEqual(*this, getInput().getType(), getType(),
                              {static_cast<int64_t>(getDim())});
}
LogicalResult LocalReduceScatterOp::verifySymbolUses(SymbolTableCollection &t) {
  return verifyGroup(*this, getMeshAttr(), getAxes(), t);
}
SmallVector<int64_t> LocalReduceScatterOp::getAxisIndices(MeshOp mesh) {
  return axisIndicesOf(*this, mesh);
}

/// Ops whose result is the same buffer type as their input.
template <typename OpTy>
static LogicalResult verifySameLocalType(OpTy op) {
  if (op.getInput().getType() != op.getType())
    return op.emitOpError("result type ")
           << op.getType() << " differs from operand type "
           << op.getInput().getType();
  return verifyLocalCommon(op);
}

LogicalResult LocalAllReduceOp::verify() { return verifySameLocalType(*this); }
LogicalResult LocalAllReduceOp::verifySymbolUses(SymbolTableCollection &t) {
  return verifyGroup(*this, getMeshAttr(), getAxes(), t);
}
SmallVector<int64_t> LocalAllReduceOp::getAxisIndices(MeshOp mesh) {
  return axisIndicesOf(*this, mesh);
}

LogicalResult LocalReplicateToPartialOp::verify() {
  return verifySameLocalType(*this);
}
LogicalResult
LocalReplicateToPartialOp::verifySymbolUses(SymbolTableCollection &t) {
  return verifyGroup(*this, getMeshAttr(), getAxes(), t);
}
SmallVector<int64_t> LocalReplicateToPartialOp::getAxisIndices(MeshOp mesh) {
  return axisIndicesOf(*this, mesh);
}

LogicalResult LocalPermuteOp::verify() { return verifySameLocalType(*this); }
LogicalResult LocalPermuteOp::verifySymbolUses(SymbolTableCollection &t) {
  FailureOr<MeshOp> mesh = lookupMesh(*this, getMeshAttr(), t);
  if (failed(mesh))
    return failure();
  int64_t numDevices = 1;
  for (int64_t size : mesh->getAxisSizes())
    numDevices *= size;
  ArrayRef<int64_t> sources = getSources();
  if (static_cast<int64_t>(sources.size()) != numDevices)
    return emitOpError("has ") << sources.size() << " sources but mesh "
                               << getMeshAttr() << " has " << numDevices
                               << " devices";
  for (auto [rank, source] : llvm::enumerate(sources))
    if (source < 0 || source >= numDevices)
      return emitOpError("rank ") << rank << " receives from " << source
                                  << ", which is not a rank of the mesh";
  return success();
}
