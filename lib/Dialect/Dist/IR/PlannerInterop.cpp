//===- PlannerInterop.cpp - dist IR <-> planner data ----------------------===//

#include "dist/Dialect/Dist/IR/PlannerInterop.h"

#include "llvm/Support/Error.h"

using namespace mlir;
using namespace dist;

FailureOr<MeshOp> dist::lookupMesh(Operation *user, FlatSymbolRefAttr meshName,
                                   SymbolTableCollection &symbolTable) {
  auto mesh =
      symbolTable.lookupNearestSymbolFrom<MeshOp>(user, meshName.getAttr());
  if (!mesh)
    return user->emitOpError("refers to unknown mesh ") << meshName;
  return mesh;
}

FailureOr<planner::Mesh>
dist::getPlannerMesh(MeshOp mesh,
                     function_ref<InFlightDiagnostic()> emitError) {
  std::vector<planner::MeshAxis> axes;
  for (auto [name, size] :
       llvm::zip_equal(mesh.getAxisNames().getAsValueRange<StringAttr>(),
                       mesh.getAxisSizes()))
    axes.push_back({name.str(), size});
  std::vector<int64_t> devices;
  if (std::optional<ArrayRef<int64_t>> ids = mesh.getDevices())
    devices.assign(ids->begin(), ids->end());
  llvm::Expected<planner::Mesh> result =
      planner::Mesh::create(std::move(axes), std::move(devices));
  if (!result)
    return emitError() << llvm::toString(result.takeError());
  return std::move(*result);
}

static FailureOr<unsigned>
getAxisIndex(StringAttr name, MeshOp mesh,
             function_ref<InFlightDiagnostic()> emitError) {
  if (std::optional<unsigned> index = mesh.findAxis(name.getValue()))
    return *index;
  return emitError() << "mesh @" << mesh.getSymName() << " has no axis \""
                     << name.getValue() << "\""
                     << mesh.describeMissingAxis(name.getValue());
}

FailureOr<SmallVector<unsigned>>
dist::getAxisIndices(ArrayAttr axisNames, MeshOp mesh,
                     function_ref<InFlightDiagnostic()> emitError) {
  SmallVector<unsigned> indices;
  for (Attribute attr : axisNames) {
    FailureOr<unsigned> index =
        getAxisIndex(cast<StringAttr>(attr), mesh, emitError);
    if (failed(index))
      return failure();
    indices.push_back(*index);
  }
  return indices;
}

FailureOr<planner::Layout>
dist::getPlannerLayout(ShardingAttr sharding, MeshOp mesh,
                       function_ref<InFlightDiagnostic()> emitError) {
  planner::Layout layout;
  for (DimShardingAttr dim : sharding.getDims()) {
    planner::AxisList axes;
    for (StringAttr name : dim.getAxes()) {
      FailureOr<unsigned> index = getAxisIndex(name, mesh, emitError);
      if (failed(index))
        return failure();
      axes.push_back(*index);
    }
    layout.dimAxes.push_back(std::move(axes));
    if (!dim.getSegments().empty()) {
      layout.segments.resize(layout.dimAxes.size());
      layout.segments.back().assign(dim.getSegments().begin(),
                                    dim.getSegments().end());
    }
  }
  layout.canonicalize();
  for (StringAttr name : sharding.getPartialAxes()) {
    FailureOr<unsigned> index = getAxisIndex(name, mesh, emitError);
    if (failed(index))
      return failure();
    layout.partialAxes.push_back(*index);
  }
  // The planner keeps partial axes in mesh order; the attribute keeps the
  // order the user wrote, which is not significant.
  llvm::sort(layout.partialAxes);
  layout.partialKind = toPlanner(sharding.getPartialKind());
  return layout;
}

FailureOr<ResolvedShardings>
dist::resolveShardings(Operation *user, ShardingAttr source,
                       ShardingAttr target, SymbolTableCollection &symbolTable,
                       bool allowCrossMesh) {
  auto emitError = [&] { return user->emitOpError(); };
  if (source.getMesh() != target.getMesh() && !allowCrossMesh)
    return user->emitOpError("operand is on mesh ")
           << source.getMesh() << " but result is on mesh " << target.getMesh();
  FailureOr<MeshOp> mesh = lookupMesh(user, source.getMesh(), symbolTable);
  if (failed(mesh))
    return failure();
  FailureOr<planner::Mesh> plannerMesh = getPlannerMesh(*mesh, emitError);
  if (failed(plannerMesh))
    return failure();
  FailureOr<planner::Layout> src = getPlannerLayout(source, *mesh, emitError);
  if (failed(src))
    return failure();
  MeshOp targetMesh = *mesh;
  std::optional<planner::Mesh> targetPlannerMesh;
  if (source.getMesh() != target.getMesh()) {
    FailureOr<MeshOp> other = lookupMesh(user, target.getMesh(), symbolTable);
    if (failed(other))
      return failure();
    FailureOr<planner::Mesh> otherPlanner = getPlannerMesh(*other, emitError);
    if (failed(otherPlanner))
      return failure();
    targetMesh = *other;
    targetPlannerMesh = std::move(*otherPlanner);
  }
  FailureOr<planner::Layout> dst =
      getPlannerLayout(target, targetMesh, emitError);
  if (failed(dst))
    return failure();
  return ResolvedShardings{*mesh,           std::move(*plannerMesh),
                           std::move(*src), std::move(*dst),
                           targetMesh,      std::move(targetPlannerMesh)};
}

ShardingAttr dist::getShardingAttr(MLIRContext *context, MeshOp mesh,
                                   const planner::Layout &layout) {
  auto axisName = [&](unsigned index) {
    return cast<StringAttr>(mesh.getAxisNames()[index]);
  };
  SmallVector<DimShardingAttr> dims;
  for (auto [d, axes] : llvm::enumerate(layout.dimAxes)) {
    SmallVector<StringAttr> names = llvm::map_to_vector(axes, axisName);
    ArrayRef<int64_t> segments;
    if (layout.isSegmented(d))
      segments = layout.segments[d];
    dims.push_back(DimShardingAttr::get(context, names, segments));
  }
  SmallVector<StringAttr> partial =
      llvm::map_to_vector(layout.partialAxes, axisName);
  return ShardingAttr::get(context,
                           FlatSymbolRefAttr::get(mesh.getSymNameAttr()), dims,
                           toDialect(layout.partialKind), partial);
}

ReductionKind dist::toDialect(planner::ReductionKind kind) {
  switch (kind) {
  case planner::ReductionKind::Sum:
    return ReductionKind::sum;
  case planner::ReductionKind::Max:
    return ReductionKind::max;
  case planner::ReductionKind::Min:
    return ReductionKind::min;
  case planner::ReductionKind::Prod:
    return ReductionKind::prod;
  case planner::ReductionKind::Avg:
    return ReductionKind::avg;
  }
  return ReductionKind::sum;
}

planner::ReductionKind dist::toPlanner(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::sum:
    return planner::ReductionKind::Sum;
  case ReductionKind::max:
    return planner::ReductionKind::Max;
  case ReductionKind::min:
    return planner::ReductionKind::Min;
  case ReductionKind::prod:
    return planner::ReductionKind::Prod;
  case ReductionKind::avg:
    return planner::ReductionKind::Avg;
  }
  return planner::ReductionKind::Sum;
}
