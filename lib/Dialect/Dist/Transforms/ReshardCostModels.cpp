//===- ReshardCostModels.cpp - cost options -> per-mesh cost models -------===//

#include "ReshardCostModels.h"

#include "dist/Dialect/Dist/IR/DistDialect.h"
#include "dist/Dialect/Dist/IR/PlannerInterop.h"
#include "dist/Dialect/Dist/Transforms/TopologyResolver.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>

using namespace mlir;
using namespace dist;

/// Parses `AXIS=NUMBER` items of the alpha/beta options.
static LogicalResult
parseAxisValues(StringRef passName, ArrayRef<std::string> items,
                StringRef option, std::map<std::string, double> &values,
                function_ref<InFlightDiagnostic()> emitError) {
  for (StringRef item : items) {
    auto [axis, number] = item.split('=');
    double value = 0;
    if (axis.empty() || number.empty() || number.getAsDouble(value) ||
        !std::isfinite(value) || value < 0)
      return emitError() << passName << ": bad " << option << " entry '" << item
                         << "' (expected AXIS=VALUE with a finite VALUE >= 0)";
    values[axis.str()] = value;
  }
  return success();
}

LogicalResult ReshardCostModels::initialize(
    StringRef name, StringRef topologyFile, ArrayRef<std::string> alpha,
    ArrayRef<std::string> beta, function_ref<InFlightDiagnostic()> emitError) {
  passName = name.str();
  if (failed(parseAxisValues(passName, alpha, "alpha", alphaOverrides,
                             emitError)) ||
      failed(parseAxisValues(passName, beta, "beta", betaOverrides, emitError)))
    return failure();
  if (topologyFile.empty())
    return success();
  // Resolved once the module is in view (resolveAuto).
  if (topologyFile == "auto") {
    autoPending = true;
    return success();
  }
  return loadFile(topologyFile, emitError);
}

LogicalResult
ReshardCostModels::loadFile(StringRef topologyFile,
                            function_ref<InFlightDiagnostic()> emitError) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(topologyFile);
  if (!file)
    return emitError() << passName << ": cannot read topology file '"
                       << topologyFile << "': " << file.getError().message();
  llvm::Expected<planner::Topology> parsed =
      planner::Topology::parseJSON((*file)->getBuffer());
  if (!parsed)
    return emitError() << passName << ": topology file '" << topologyFile
                       << "': " << llvm::toString(parsed.takeError());
  fileTopology = std::move(*parsed);
  return success();
}

LogicalResult ReshardCostModels::resolveAuto(Operation *root) {
  if (!autoPending)
    return success();
  // The meshes of the whole module (a pass on one function sees its module).
  Operation *module =
      isa<ModuleOp>(root) ? root : root->getParentOfType<ModuleOp>();
  if (!module)
    module = root;
  SmallVector<MeshOp> meshOps;
  module->walk([&](MeshOp mesh) { meshOps.push_back(mesh); });
  // Errors at the first mesh, what the calibration would have measured.
  auto emitError = [&] {
    return meshOps.empty() ? mlir::emitError(root->getLoc())
                           : meshOps.front().emitError();
  };
  const TopologyResolver &resolver = getTopologyResolver();
  if (!resolver)
    return emitError()
           << passName
           << ": topology=auto needs a tool that calibrates this machine "
              "(dist-opt, dist-run); here, pass a topology file "
              "(dist-calibrate writes one, semantics §8)";
  std::vector<std::pair<std::string, planner::Mesh>> meshes;
  for (MeshOp mesh : meshOps) {
    FailureOr<planner::Mesh> plannerMesh =
        getPlannerMesh(mesh, [&] { return mesh.emitError(); });
    if (failed(plannerMesh))
      return failure();
    meshes.emplace_back(mesh.getSymName().str(), std::move(*plannerMesh));
  }
  llvm::Expected<std::string> file = resolver(meshes);
  if (!file)
    return emitError() << passName << ": " << llvm::toString(file.takeError());
  // Once: the file serves every later run of the pass.
  autoPending = false;
  return loadFile(*file, emitError);
}

LogicalResult ReshardCostModels::checkAxesExist(Operation *root) const {
  llvm::StringSet<> known;
  root->walk([&](MeshOp mesh) {
    for (StringRef axis : mesh.getAxisNames().getAsValueRange<StringAttr>())
      known.insert(axis);
  });
  auto check = [&](StringRef axis, StringRef where) -> LogicalResult {
    if (known.contains(axis) || known.empty())
      return success();
    return root->emitError(passName)
           << ": " << where << " names axis \"" << axis
           << "\", which no mesh in this module has";
  };
  for (auto &[axis, value] : alphaOverrides)
    if (failed(check(axis, "option 'alpha'")))
      return failure();
  for (auto &[axis, value] : betaOverrides)
    if (failed(check(axis, "option 'beta'")))
      return failure();
  if (fileTopology)
    for (auto &[axis, params] : fileTopology->axes)
      if (failed(check(axis, "the topology file")))
        return failure();
  return success();
}

FailureOr<const planner::AlphaBetaCostModel *>
ReshardCostModels::get(MeshOp mesh, const planner::Mesh &plannerMesh) {
  std::shared_ptr<planner::AlphaBetaCostModel> &model = models[mesh];
  if (model)
    return model.get();
  // Everything the file gives for this mesh (defaults, per-kind parameters,
  // local copies, semantics §3b), so that no key is dropped on the way to
  // the planner; then each axis's own parameters and the options on top.
  planner::Topology topology = fileTopology
                                   ? fileTopology->restrictedTo(plannerMesh)
                                   : planner::Topology();
  for (StringRef axis : mesh.getAxisNames().getAsValueRange<StringAttr>()) {
    planner::AxisCostParams params = topology.defaults;
    if (auto it = topology.axes.find(axis.str()); it != topology.axes.end())
      params = it->second;
    else if (std::optional<std::pair<double, double>> own =
                 mesh.getAxisCost(axis))
      params = {own->first, own->second};
    // Per-kind parameters (semantics §3b) follow the axis's, so the
    // overrides below apply to the kinds that leave a field out.
    if (auto it = alphaOverrides.find(axis.str()); it != alphaOverrides.end())
      params.alpha = it->second;
    if (auto it = betaOverrides.find(axis.str()); it != betaOverrides.end())
      params.beta = it->second;
    topology.axes[axis.str()] = params;
  }
  llvm::Expected<planner::AlphaBetaCostModel> built =
      planner::AlphaBetaCostModel::create(plannerMesh, topology);
  if (!built)
    return mesh.emitError("cannot build the cost model: ")
           << llvm::toString(built.takeError());
  model = std::make_shared<planner::AlphaBetaCostModel>(std::move(*built));
  return model.get();
}

std::optional<int64_t> dist::getElementBytes(Type type) {
  if (auto integer = dyn_cast<IntegerType>(type))
    return (integer.getWidth() + 7) / 8;
  if (auto floating = dyn_cast<FloatType>(type))
    return (floating.getWidth() + 7) / 8;
  return std::nullopt;
}

planner::PlanCache &dist::getPlanCache(MLIRContext *context,
                                       StringRef directory) {
  return context->getLoadedDialect<DistDialect>()->getPlanCache(
      directory, [context](StringRef warning) {
        mlir::emitWarning(UnknownLoc::get(context)) << warning;
      });
}

FailureOr<planner::PlanRequest>
ReshardCostModels::requestFor(ReshardOp reshard,
                              SymbolTableCollection &symbolTable,
                              std::optional<ResolvedShardings> *resolvedOut) {
  RankedTensorType sourceType = reshard.getInput().getType();
  RankedTensorType targetType = reshard.getType();
  FailureOr<ResolvedShardings> resolved = resolveShardings(
      reshard, cast<ShardingAttr>(sourceType.getEncoding()),
      cast<ShardingAttr>(targetType.getEncoding()), symbolTable,
      /*allowCrossMesh=*/true);
  if (failed(resolved))
    return failure();
  std::optional<int64_t> elementBytes =
      getElementBytes(sourceType.getElementType());
  if (!elementBytes)
    return reshard.emitOpError("cannot plan a reshard of element type ")
           << sourceType.getElementType() << ", which has no fixed byte size";
  FailureOr<const planner::AlphaBetaCostModel *> model =
      get(resolved->mesh, resolved->plannerMesh);
  if (failed(model))
    return failure();
  planner::PlanRequest request(
      resolved->plannerMesh, std::vector<int64_t>(sourceType.getShape()),
      *elementBytes, resolved->source, resolved->target);
  request.costModel = *model;
  if (resolved->isCrossMesh()) {
    FailureOr<const planner::AlphaBetaCostModel *> targetModel =
        get(resolved->targetMesh, *resolved->targetPlannerMesh);
    if (failed(targetModel))
      return failure();
    request.targetMesh = *resolved->targetPlannerMesh;
    request.targetCostModel = *targetModel;
    request.transfer = transfer();
  }
  if (resolvedOut)
    resolvedOut->emplace(*resolved);
  return request;
}
