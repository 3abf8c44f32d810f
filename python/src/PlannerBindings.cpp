//===- PlannerBindings.cpp - Mesh, Layout, Topology and plan() ------------===//
//
// Binds the MLIR-free planner (include/dist/Planner). plan() makes exactly
// the library calls dist-plan makes, so that Plan.to_json() is byte-identical
// to `dist-plan --format json` for the same request.
//
//===----------------------------------------------------------------------===//

#include "Bindings.h"

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/LayoutProblemJSON.h"
#include "dist/Planner/Mesh.h"
#include "dist/Planner/Plan.h"
#include "dist/Planner/PlanCache.h"
#include "dist/Planner/Planner.h"

#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

namespace py = pybind11;
using namespace dist::planner;

namespace dist::python {

[[noreturn]] void throwValueError(llvm::Error error,
                                  const std::string &context) {
  std::string message = llvm::toString(std::move(error));
  throw py::value_error(context.empty() ? message : context + ": " + message);
}

namespace {

std::string quote(llvm::StringRef name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\')
      out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

std::vector<std::string> axisNames(const Mesh &mesh,
                                   llvm::ArrayRef<unsigned> axes) {
  std::vector<std::string> names;
  for (unsigned axis : axes)
    names.push_back(mesh.getAxis(axis).name);
  return names;
}

unsigned axisIndex(const Mesh &mesh, const std::string &name) {
  std::optional<unsigned> index = mesh.findAxis(name);
  if (!index)
    throw py::value_error(quote(name) + " is not an axis of mesh " +
                          mesh.str());
  return *index;
}

//===----------------------------------------------------------------------===//
// Persistent plan caches
//===----------------------------------------------------------------------===//

// One PlanCache per directory for the life of the process, as the pass keeps
// one per MLIRContext: repeated plan() calls then hit the memory level, and
// other processes (dist-plan, dist-opt) share the disk level.
//
// Warnings are collected, never printed from C++: the Python layer turns them
// into `warnings.warn` calls after the GIL is back. Per-request warnings go
// to the handler passed to getOrPlan; the few a cache reports on its own
// (while opening its directory) go to a process-wide queue that the next
// plan() call drains.
std::mutex orphanMutex;
std::vector<std::string> orphanWarnings;

void recordOrphanWarning(llvm::StringRef message) {
  std::lock_guard<std::mutex> lock(orphanMutex);
  orphanWarnings.push_back(message.str());
}

void drainOrphanWarnings(std::vector<std::string> &into) {
  std::lock_guard<std::mutex> lock(orphanMutex);
  for (std::string &message : orphanWarnings)
    into.push_back(std::move(message));
  orphanWarnings.clear();
}

std::mutex cachesMutex;
std::map<std::string, std::unique_ptr<PlanCache>> caches;

/// The cache for `directory`. A directory the cache cannot use (it warns and
/// degrades to memory only) is not remembered, so that a later call retries
/// it once the user has fixed the permissions; `scratch` then owns it.
PlanCache &cacheFor(const std::string &directory,
                    std::unique_ptr<PlanCache> &scratch) {
  std::lock_guard<std::mutex> lock(cachesMutex);
  auto it = caches.find(directory);
  if (it != caches.end())
    return *it->second;
  PlanCache::Options options;
  options.directory = directory;
  auto cache = std::make_unique<PlanCache>(options, recordOrphanWarning);
  if (!cache->isPersistent()) {
    scratch = std::move(cache);
    return *scratch;
  }
  return *caches.emplace(directory, std::move(cache)).first->second;
}

//===----------------------------------------------------------------------===//
// Plans
//===----------------------------------------------------------------------===//

/// A plan together with the mesh that names its axes (and, for a
/// cross-mesh plan, the target's mesh: the steps after the transfer).
struct PlanResult {
  Mesh mesh;
  Plan plan;
  std::vector<std::string> warnings;
  std::optional<Mesh> targetMesh;
  const Mesh *targetMeshPtr() const {
    return targetMesh ? &*targetMesh : nullptr;
  }
};

PlanResult planBinding(const Mesh &mesh, std::vector<int64_t> shape,
                       int64_t elementBytes, const Layout &source,
                       const Layout &target, const std::string &strategyText,
                       const std::string &cacheDir,
                       std::optional<int64_t> maxPeakBytes,
                       const Topology &topology, const std::string &movesText,
                       std::optional<Mesh> targetMesh,
                       std::optional<Topology> targetTopology,
                       std::optional<std::pair<double, double>> transfer) {
  std::optional<Strategy> strategy = parseStrategy(strategyText);
  if (!strategy)
    throw py::value_error("strategy: '" + strategyText +
                          "' is not one of optimal, greedy");
  std::optional<MoveSet> moves = parseMoveSet(movesText);
  if (!moves)
    throw py::value_error("moves: '" + movesText +
                          "' is not one of all, collective");
  AlphaBetaCostModel model =
      unwrapOrThrow(AlphaBetaCostModel::create(mesh, topology), "topology");
  std::optional<AlphaBetaCostModel> targetModel;
  if (targetMesh)
    targetModel.emplace(unwrapOrThrow(
        AlphaBetaCostModel::create(*targetMesh, targetTopology ? *targetTopology
                                                               : Topology()),
        "to_mesh topology"));

  PlanRequest request(mesh, std::move(shape), elementBytes, source, target);
  request.strategy = *strategy;
  request.costModel = &model;
  request.maxPeakBytes = maxPeakBytes;
  request.moves = *moves;
  if (targetMesh) {
    request.targetMesh = *targetMesh;
    request.targetCostModel = &*targetModel;
    if (transfer)
      request.transfer = AxisCostParams{transfer->first, transfer->second};
  }
  // A malformed request is the caller's mistake (ValueError); a valid one
  // without a plan is NoPlanError, like dist-plan's exit codes 2 and 1.
  if (llvm::Error e = verifyRequest(request))
    throwValueError(std::move(e));

  std::vector<std::string> warnings;
  std::optional<Plan> plan;
  std::string failure;
  {
    py::gil_scoped_release release;
    auto collect = [&warnings](llvm::StringRef message) {
      warnings.push_back(message.str());
    };
    std::unique_ptr<PlanCache> scratch;
    llvm::Expected<Plan> planned =
        cacheDir.empty()
            ? planReshard(request)
            : cacheFor(cacheDir, scratch).getOrPlan(request, collect);
    if (planned)
      plan = std::move(*planned);
    else
      failure = llvm::toString(planned.takeError());
    drainOrphanWarnings(warnings);
  }
  if (!plan)
    throw NoPlanFailure("no plan: " + failure);
  return PlanResult{mesh, std::move(*plan), std::move(warnings),
                    std::move(targetMesh)};
}

py::dict stepToDict(const Mesh &mesh, const PlanStep &step) {
  const Move &move = step.move;
  py::dict out;
  out["op"] = stringifyMoveKind(move.kind).str();
  out["axes"] = axisNames(mesh, move.axes);
  out["dim"] = moveHasDim(move.kind) ? py::object(py::int_(move.dim))
                                     : py::object(py::none());
  out["to_dim"] = move.kind == MoveKind::AllToAll
                      ? py::object(py::int_(move.toDim))
                      : py::object(py::none());
  out["reduction"] =
      moveHasReduction(move.kind)
          ? py::object(py::str(stringifyReductionKind(move.reduction).str()))
          : py::object(py::none());
  out["cross_mesh"] = move.kind == MoveKind::Redistribute && move.crossMesh;
  out["bytes"] = step.bytesBefore;
  out["bytes_after"] = step.bytesAfter;
  out["recv_bytes"] = step.recvBytes;
  out["cost"] = step.cost;
  out["layout"] = py::cast(step.layout);
  return out;
}

} // namespace

void bindPlanner(py::module_ &m) {
  m.attr("PLANNER_VERSION") = kPlannerVersion;
  m.attr("DEFAULT_ALPHA") = kDefaultAlpha;
  m.attr("DEFAULT_BETA") = kDefaultBeta;
  m.attr("MAX_MESH_AXES") = kMaxMeshAxes;
  // The element types and their sizes, from the one table the runtime, the
  // planner and the compiler read (dist_mlir.DTYPES).
  py::dict elementBytes;
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, RuntimeCode)             \
  elementBytes[Name] = Bytes;
#include "dist/Support/ElementTypes.def"
  m.attr("ELEMENT_BYTES") = elementBytes;
  // The keywords of a plan request, from the table the other doors read
  // (dist_mlir.plan's parameters are checked against it).
  py::list requestKeywords;
#define DIST_PLAN_REQUEST_KEY(Flag, Key, Keyword)                              \
  if (llvm::StringRef(Keyword).size())                                         \
    requestKeywords.append(Keyword);
#include "dist/Planner/PlanRequestKeys.def"
  m.attr("PLAN_REQUEST_KEYWORDS") = requestKeywords;

  py::register_exception<NoPlanFailure>(m, "NoPlanError", PyExc_ValueError);

  py::class_<Mesh>(m, "Mesh", "planner::Mesh (semantics §1)")
      .def_static(
          "create",
          [](const std::vector<std::pair<std::string, int64_t>> &axes,
             std::vector<int64_t> devices) {
            std::vector<MeshAxis> meshAxes;
            for (const auto &[name, size] : axes)
              meshAxes.push_back({name, size});
            return unwrapOrThrow(
                Mesh::create(std::move(meshAxes), std::move(devices)));
          },
          py::arg("axes"), py::arg("devices"))
      .def_static(
          "parse",
          [](const std::string &text) {
            return unwrapOrThrow(Mesh::parse(text));
          },
          py::arg("text"))
      .def("__str__", &Mesh::str)
      .def("__eq__", [](const Mesh &a, const Mesh &b) { return a == b; })
      .def_property_readonly("axes",
                             [](const Mesh &mesh) {
                               std::vector<std::pair<std::string, int64_t>> out;
                               for (const MeshAxis &axis : mesh.getAxes())
                                 out.emplace_back(axis.name, axis.size);
                               return out;
                             })
      .def_property_readonly(
          "device_table",
          [](const Mesh &mesh) { return mesh.getDevices().vec(); },
          "The devices list; empty when it is the identity.")
      .def_property_readonly("num_devices", &Mesh::getNumDevices)
      .def(
          "rank_of",
          [](const Mesh &mesh, const std::vector<int64_t> &coord) {
            int64_t rank = mesh.rankOf(coord);
            if (rank < 0)
              throw py::value_error("not a coordinate of mesh " + mesh.str());
            return rank;
          },
          py::arg("coordinate"))
      .def(
          "coordinate_of",
          [](const Mesh &mesh, int64_t rank) {
            std::vector<int64_t> coord = mesh.coordinateOfRank(rank);
            if (coord.empty())
              throw py::value_error("rank " + std::to_string(rank) +
                                    " is not a device of mesh " + mesh.str());
            return coord;
          },
          py::arg("rank"));

  py::class_<Layout>(m, "Layout", "planner::Layout (semantics §2)")
      .def_static(
          "parse",
          [](const Mesh &mesh, const std::string &text) {
            return unwrapOrThrow(parseLayout(mesh, text));
          },
          py::arg("mesh"), py::arg("text"))
      .def_static(
          "from_axes",
          [](const Mesh &mesh,
             const std::vector<std::vector<std::string>> &dims,
             const std::vector<std::string> &partial,
             const std::string &kindText,
             const std::vector<std::vector<int64_t>> &segments) {
            Layout layout;
            for (const std::vector<std::string> &names : dims) {
              layout.dimAxes.emplace_back();
              for (const std::string &name : names)
                layout.dimAxes.back().push_back(axisIndex(mesh, name));
            }
            if (!segments.empty() && segments.size() != dims.size())
              throw py::value_error("segments: one list per dim expected");
            layout.segments = segments;
            for (const std::string &name : partial)
              layout.partialAxes.push_back(axisIndex(mesh, name));
            std::optional<ReductionKind> kind = parseReductionKind(kindText);
            if (!kind)
              throw py::value_error("unknown reduction kind '" + kindText +
                                    "' (expected sum, max, min, prod or avg)");
            layout.partialKind = *kind;
            if (llvm::Error e = verifyLayout(mesh, layout, dims.size()))
              throwValueError(std::move(e));
            layout.canonicalize();
            return layout;
          },
          py::arg("mesh"), py::arg("dims"), py::arg("partial"), py::arg("kind"),
          py::arg("segments") = std::vector<std::vector<int64_t>>())
      .def(
          "text",
          [](const Layout &layout, const Mesh &mesh) {
            return printLayout(mesh, layout);
          },
          py::arg("mesh"))
      .def(
          "dim_axes",
          [](const Layout &layout, const Mesh &mesh) {
            std::vector<std::vector<std::string>> out;
            for (const AxisList &axes : layout.dimAxes)
              out.push_back(axisNames(mesh, axes));
            return out;
          },
          py::arg("mesh"))
      .def(
          "partial_axes",
          [](const Layout &layout, const Mesh &mesh) {
            return axisNames(mesh, layout.partialAxes);
          },
          py::arg("mesh"))
      .def_property_readonly(
          "partial_kind",
          [](const Layout &layout) -> py::object {
            if (!layout.hasPartial())
              return py::none();
            return py::str(stringifyReductionKind(layout.partialKind).str());
          })
      .def_property_readonly("rank", &Layout::getRank)
      .def_property_readonly("segments",
                             [](const Layout &layout) {
                               // Per dim: the segment lengths of an interleaved
                               // dim, else [].
                               std::vector<std::vector<int64_t>> out(
                                   layout.getRank());
                               for (unsigned d = 0; d < layout.getRank(); ++d)
                                 if (layout.isSegmented(d))
                                   out[d] = layout.segments[d];
                               return out;
                             })
      .def(
          "local_shape",
          [](const Layout &layout, const Mesh &mesh,
             const std::vector<int64_t> &shape) {
            if (llvm::Error e = verifyShape(shape))
              throwValueError(std::move(e), "shape");
            if (llvm::Error e = verifyLayout(mesh, layout, shape.size()))
              throwValueError(std::move(e));
            if (llvm::Error e = verifyLayoutShape(layout, shape))
              throwValueError(std::move(e));
            return localShape(mesh, layout, shape);
          },
          py::arg("mesh"), py::arg("shape"))
      .def("__eq__", [](const Layout &a, const Layout &b) { return a == b; });

  py::class_<Topology>(m, "Topology", "planner::Topology (semantics §3)")
      .def(py::init<>())
      .def_static(
          "parse_json",
          [](const std::string &text) {
            return unwrapOrThrow(Topology::parseJSON(text));
          },
          py::arg("text"))
      .def(
          "set_from_list",
          [](Topology &topology, const std::string &list, bool alpha) {
            if (llvm::Error e = topology.setFromList(list, alpha))
              throwValueError(std::move(e), alpha ? "alpha" : "beta");
          },
          py::arg("list"), py::arg("alpha"))
      .def(
          "cost_params",
          [](const Topology &topology, const Mesh &mesh) {
            AlphaBetaCostModel model = unwrapOrThrow(
                AlphaBetaCostModel::create(mesh, topology), "topology");
            std::vector<std::pair<std::string, std::pair<double, double>>> out;
            for (unsigned i = 0; i < mesh.getNumAxes(); ++i)
              out.push_back(
                  {mesh.getAxis(i).name,
                   {model.getParams(i).alpha, model.getParams(i).beta}});
            return out;
          },
          py::arg("mesh"),
          "Per mesh axis (name, (alpha, beta)); fails when the topology "
          "names an axis the mesh lacks.");

  m.def(
      "parse_tensor_spec",
      [](const std::string &text) {
        TensorSpec spec = unwrapOrThrow(parseTensorSpec(text));
        return py::make_tuple(spec.shape, spec.elementType, spec.elementBytes);
      },
      py::arg("text"));

  py::class_<PlanResult>(m, "Plan", "planner::Plan with its mesh")
      .def_property_readonly("strategy",
                             [](const PlanResult &r) {
                               return stringifyStrategy(r.plan.strategy).str();
                             })
      .def_property_readonly("cost",
                             [](const PlanResult &r) { return r.plan.cost; })
      .def_property_readonly(
          "peak_bytes", [](const PlanResult &r) { return r.plan.peakBytes; })
      .def_property_readonly(
          "lower_bound", [](const PlanResult &r) { return r.plan.lowerBound; })
      .def_property_readonly("cache",
                             [](const PlanResult &r) {
                               return stringifyCacheStatus(r.plan.cache).str();
                             })
      .def_readonly("warnings", &PlanResult::warnings)
      .def_property_readonly("steps",
                             [](const PlanResult &r) {
                               py::list steps;
                               const Mesh *mesh = &r.mesh;
                               for (const PlanStep &step : r.plan.steps) {
                                 if (step.move.crossMesh && r.targetMesh)
                                   mesh = &*r.targetMesh;
                                 steps.append(stepToDict(*mesh, step));
                               }
                               return steps;
                             })
      .def("to_json",
           [](const PlanResult &r) {
             return planToJSON(r.mesh, r.plan, r.targetMeshPtr());
           })
      .def("table", [](const PlanResult &r) {
        return printPlanTable(r.mesh, r.plan, r.targetMeshPtr());
      });

  m.def("plan", &planBinding, py::arg("mesh"), py::arg("shape"),
        py::arg("element_bytes"), py::arg("source"), py::arg("target"),
        py::arg("strategy"), py::arg("cache_dir"), py::arg("max_peak_bytes"),
        py::arg("topology"), py::arg("moves") = "all",
        py::arg("target_mesh") = std::nullopt,
        py::arg("target_topology") = std::nullopt,
        py::arg("transfer") = std::nullopt);

  // The layout solver on a problem as JSON (LayoutProblemJSON.h): the
  // answer's JSON; NoPlanError when nothing fits the memory budget,
  // ValueError for a bad problem.
  m.def("solve_layouts", [](const std::string &problem) {
    llvm::Expected<std::string> answer =
        layout::solveLayoutProblemJSON(problem);
    if (answer)
      return *answer;
    layout::LayoutProblemFailure failure =
        layout::describeLayoutProblemError(answer.takeError());
    if (failure.noChoiceFits)
      throw NoPlanFailure(failure.message);
    throw py::value_error(failure.message);
  });
}

} // namespace dist::python
