//===- TopologyFuzzer.cpp - Topology files and --alpha/--beta lists -------===//
//
// Input: a topology file (first byte even) or an --alpha/--beta list (odd).
// A topology that parses must give a cost model for a mesh that has its
// axes, with finite non-negative parameters.

#include "FuzzSupport.h"

#include "dist/Planner/CostModel.h"

#include <cmath>

using namespace dist::planner;
using namespace dist::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef text(reinterpret_cast<const char *>(data) + 1, size - 1);
  static const Mesh mesh = *Mesh::parse(R"(<["x"=2, "y"=4]>)");
  Topology topology;
  if (data[0] % 2 == 0) {
    llvm::Expected<Topology> parsed = Topology::parseJSON(text);
    if (!ok(parsed))
      return 0;
    topology = std::move(*parsed);
  } else if (!ok(topology.setFromList(text, /*alpha=*/data[0] % 4 == 1))) {
    return 0;
  }
  auto sane = [](const AxisCostParams &p) {
    return std::isfinite(p.alpha) && p.alpha >= 0 && std::isfinite(p.beta) &&
           p.beta >= 0;
  };
  fuzzCheck(sane(topology.defaults), "default parameters are finite, >= 0");
  for (const auto &[name, params] : topology.axes)
    fuzzCheck(sane(params), "axis parameters are finite and >= 0");
  llvm::Expected<AlphaBetaCostModel> model =
      AlphaBetaCostModel::create(mesh, topology.restrictedTo(mesh));
  fuzzCheck(bool(model), "a topology restricted to a mesh fits it");
  double cost = model->collectiveCost(MoveKind::AllGather, {0, 1}, 4096);
  fuzzCheck(cost >= 0 && !std::isnan(cost), "collective costs are >= 0");
  std::string fingerprint;
  model->appendFingerprint(fingerprint);
  return 0;
}
