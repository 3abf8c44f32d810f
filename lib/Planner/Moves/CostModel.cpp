//===- CostModel.cpp - The ring alpha-beta model and topology files -------===//

#include "dist/Planner/BoundedJSON.h"
#include "dist/Planner/CostModel.h"
#include "Model/Syntax.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <charconv>
#include <cmath>

using namespace dist::planner;
using llvm::createStringError;
using llvm::Error;
using llvm::Expected;
using llvm::inconvertibleErrorCode;

static Error fail(const llvm::Twine &msg) {
  return createStringError(inconvertibleErrorCode(), msg);
}

std::string dist::planner::formatDouble(double value) {
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  return std::string(buffer, result.ptr);
}

//===----------------------------------------------------------------------===//
// Topology
//===----------------------------------------------------------------------===//

static Error readParam(const llvm::json::Value &value, const llvm::Twine &where,
                       double &out) {
  std::optional<double> number = value.getAsNumber();
  if (!number)
    return fail("topology: " + where + " must be a number");
  if (!std::isfinite(*number) || *number < 0)
    return fail("topology: " + where + " must be finite and >= 0, got " +
                formatDouble(*number));
  out = *number;
  return Error::success();
}

static Error readParams(const llvm::json::Value &value, llvm::StringRef where,
                        AxisCostParams &params) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return fail("topology: " + where + " must be an object with \"alpha\" "
                "and/or \"beta\"");
  for (const auto &[key, field] : *object) {
    if (key == "alpha") {
      if (Error e = readParam(field, where + ".alpha", params.alpha))
        return e;
    } else if (key == "beta") {
      if (Error e = readParam(field, where + ".beta", params.beta))
        return e;
    } else {
      return fail("topology: unknown key \"" + key.str() + "\" in " + where +
                  " (expected \"alpha\" or \"beta\")");
    }
  }
  return Error::success();
}

static Error readDevice(const llvm::json::Value &value, DeviceParams &device) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return fail("topology: device must be an object with \"flops\", "
                "\"mem_bw\" and/or \"memory\"");
  for (const auto &[key, field] : *object) {
    double *out = key == "flops"    ? &device.flops
                  : key == "mem_bw" ? &device.memBandwidth
                  : key == "memory" ? &device.memory
                                    : nullptr;
    if (!out)
      return fail("topology: unknown key \"" + key.str() +
                  "\" in device (expected \"flops\", \"mem_bw\" or "
                  "\"memory\")");
    if (Error e = readParam(field, "device." + key.str(), *out))
      return e;
    // A rate of 0 would make every op take forever.
    if (*out == 0 && key != "memory")
      return fail("topology: device." + key.str() + " must be > 0");
  }
  return Error::success();
}

Expected<Topology> Topology::parseJSON(llvm::StringRef text) {
  Expected<llvm::json::Value> root = parseBoundedJSON(text);
  if (!root)
    return fail("topology: invalid JSON: " +
                llvm::toString(root.takeError()));
  const llvm::json::Object *object = root->getAsObject();
  if (!object)
    return fail("topology: the top level must be an object with \"axes\"");
  Topology topology;
  // Read "default" first so that it applies to axes that leave a field out.
  if (const llvm::json::Value *defaults = object->get("default"))
    if (Error e = readParams(*defaults, "default", topology.defaults))
      return std::move(e);
  for (const auto &[key, value] : *object) {
    if (key == "default")
      continue;
    if (key == "transfer") {
      AxisCostParams transfer = topology.defaults;
      if (Error e = readParams(value, "transfer", transfer))
        return std::move(e);
      topology.transfer = transfer;
      continue;
    }
    if (key == "device") {
      DeviceParams device;
      if (Error e = readDevice(value, device))
        return std::move(e);
      topology.device = device;
      continue;
    }
    if (key != "axes")
      return fail("topology: unknown key \"" + key.str() +
                  "\" (expected \"axes\", \"default\", \"transfer\" or "
                  "\"device\")");
    const llvm::json::Object *axes = value.getAsObject();
    if (!axes)
      return fail("topology: \"axes\" must be an object keyed by axis name");
    for (const auto &[name, params] : *axes) {
      AxisCostParams axisParams = topology.defaults;
      if (Error e = readParams(params, "axis \"" + name.str() + "\"",
                               axisParams))
        return std::move(e);
      topology.axes[name.str()] = axisParams;
    }
  }
  return topology;
}

Topology Topology::restrictedTo(const Mesh &mesh) const {
  Topology out = *this;
  out.axes.clear();
  for (const auto &[name, params] : axes)
    if (mesh.findAxis(name))
      out.axes[name] = params;
  return out;
}

Error Topology::setFromList(llvm::StringRef list, bool alpha) {
  llvm::StringRef what = alpha ? "alpha" : "beta";
  llvm::SmallVector<llvm::StringRef> items;
  list.split(items, ',', -1, /*KeepEmpty=*/false);
  if (items.empty())
    return fail(what + " list is empty (expected NAME=VALUE,...)");
  for (llvm::StringRef item : items) {
    auto [name, valueText] = item.split('=');
    name = name.trim();
    valueText = valueText.trim();
    if (name.empty() || valueText.empty() || !item.contains('='))
      return fail(what + " entry '" + item + "' is not NAME=VALUE");
    double value;
    const char *first = valueText.data(), *last = first + valueText.size();
    auto result = std::from_chars(first, last, value);
    if (result.ec != std::errc() || result.ptr != last)
      return fail(what + " for axis \"" + name + "\" is not a number: '" +
                  valueText + "'");
    if (!std::isfinite(value) || value < 0)
      return fail(what + " for axis \"" + name +
                  "\" must be finite and >= 0, got " + valueText);
    auto it = axes.try_emplace(name.str(), defaults).first;
    (alpha ? it->second.alpha : it->second.beta) = value;
  }
  return Error::success();
}

//===----------------------------------------------------------------------===//
// CostModel
//===----------------------------------------------------------------------===//

CostModel::~CostModel() = default;

double CostModel::stepCost(const Move &move, int64_t bytesBefore) const {
  if (isLocalMove(move.kind))
    return 0;
  // A permute that changes no coordinate (it only relabels size-1 axes)
  // moves no data.
  if (move.kind == MoveKind::Permute && move.axes.empty())
    return 0;
  return collectiveCost(move.kind, move.axes, bytesBefore);
}

//===----------------------------------------------------------------------===//
// AlphaBetaCostModel
//===----------------------------------------------------------------------===//

AlphaBetaCostModel::AlphaBetaCostModel(Mesh mesh,
                                       std::vector<AxisCostParams> params)
    : CostModel(std::move(mesh)), params(std::move(params)) {
  bool any = false;
  for (unsigned a = 0; a < this->mesh.getNumAxes(); ++a) {
    if (this->mesh.getAxisSize(a) == 1)
      continue;
    const AxisCostParams &p = this->params[a];
    minAlpha = any ? std::min(minAlpha, p.alpha) : p.alpha;
    minBeta = any ? std::min(minBeta, p.beta) : p.beta;
    any = true;
  }
}

Expected<AlphaBetaCostModel>
AlphaBetaCostModel::create(const Mesh &mesh, const Topology &topology) {
  std::vector<AxisCostParams> params(mesh.getNumAxes(), topology.defaults);
  for (const auto &[name, axisParams] : topology.axes) {
    std::optional<unsigned> axis = mesh.findAxis(name);
    if (!axis)
      return fail("topology names axis " + detail::quoteName(name) +
                  ", which is not in mesh " + mesh.str());
    params[*axis] = axisParams;
  }
  return AlphaBetaCostModel(mesh, std::move(params));
}

double AlphaBetaCostModel::collectiveCost(MoveKind kind,
                                          llvm::ArrayRef<unsigned> axes,
                                          int64_t bytesBefore) const {
  double p = 1, alpha = 0, beta = 0;
  for (unsigned axis : axes) {
    p *= double(mesh.getAxisSize(axis));
    alpha = std::max(alpha, params[axis].alpha);
    beta = std::max(beta, params[axis].beta);
  }
  double n = double(bytesBefore);
  switch (kind) {
  case MoveKind::AllGather:
    return (p - 1) * alpha + (p - 1) * n * beta;
  case MoveKind::AllToAll:
  case MoveKind::ReduceScatter:
    return (p - 1) * alpha + (p - 1) / p * n * beta;
  case MoveKind::AllReduce:
    return 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta;
  case MoveKind::Permute:
    return axes.empty() ? 0 : alpha + n * beta;
  case MoveKind::AllSlice:
  case MoveKind::ReplicateToPartial:
    return 0;
  case MoveKind::Redistribute:
    // Not a function of the group: the planner prices it from the exact
    // exchange (computeExchange) and never asks here.
    return 0;
  }
  return 0;
}

AxisCostParams
AlphaBetaCostModel::pointToPointLink(llvm::ArrayRef<unsigned> axes) const {
  AxisCostParams link{0, 0};
  for (unsigned axis : axes) {
    link.alpha = std::max(link.alpha, params[axis].alpha);
    link.beta = std::max(link.beta, params[axis].beta);
  }
  return link;
}

AxisCostParams AlphaBetaCostModel::slowestLink() const {
  AxisCostParams link{0, 0};
  bool any = false;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    if (mesh.getAxisSize(a) == 1)
      continue;
    link.alpha = std::max(link.alpha, params[a].alpha);
    link.beta = std::max(link.beta, params[a].beta);
    any = true;
  }
  // A mesh of one device has no links; its configured parameters are the
  // best guess for the link out of it.
  if (!any)
    for (const AxisCostParams &p : params) {
      link.alpha = std::max(link.alpha, p.alpha);
      link.beta = std::max(link.beta, p.beta);
    }
  return link;
}

double AlphaBetaCostModel::axisLatencyBound(unsigned axis) const {
  if (axis >= mesh.getNumAxes())
    return 0;
  return double(mesh.getAxisSize(axis) - 1) * params[axis].alpha;
}

double
AlphaBetaCostModel::groupLatencyExcess(llvm::ArrayRef<unsigned> axes) const {
  double product = 1, sum = 0, alpha = 0;
  for (unsigned axis : axes) {
    if (axis >= mesh.getNumAxes())
      return 0;
    double p = double(mesh.getAxisSize(axis));
    product *= p;
    sum += p - 1;
    alpha = std::max(alpha, params[axis].alpha);
  }
  return std::max(0.0, product - 1 - sum) * alpha;
}

bool AlphaBetaCostModel::sequentialReduceScatterIsCheaper() const {
  // One reduce-scatter per axis pays sum_i (p_i - 1) alpha_i <= (P - 1)
  // alpha_max latency, strictly less once two factors exceed 1 and
  // alpha_max > 0; on evenly divisible dims its bandwidth term
  // sum_i (p_i - 1)/(p_1..p_i) n beta_i never exceeds (P - 1)/P n beta_max.
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
    if (mesh.getAxisSize(a) > 1 && !(params[a].alpha > 0))
      return false;
  return true;
}

bool AlphaBetaCostModel::permuteCostIsUniform() const {
  const AxisCostParams *first = nullptr;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    if (mesh.getAxisSize(a) == 1)
      continue;
    if (first && !(params[a] == *first))
      return false;
    first = &params[a];
  }
  return true;
}

bool AlphaBetaCostModel::sameKindStepsCommute() const {
  const AxisCostParams *first = nullptr;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    if (mesh.getAxisSize(a) == 1)
      continue;
    if (first && params[a].beta != first->beta)
      return false;
    first = &params[a];
  }
  return true;
}

bool AlphaBetaCostModel::axesInterchangeable(unsigned a, unsigned b) const {
  return a < mesh.getNumAxes() && b < mesh.getNumAxes() &&
         mesh.getAxisSize(a) == mesh.getAxisSize(b) && params[a] == params[b];
}

void AlphaBetaCostModel::appendFingerprint(std::string &out) const {
  out += "alpha-beta-ring{";
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    out += a ? ";" : "";
    out += detail::quoteName(mesh.getAxis(a).name) + ":" +
           formatDouble(params[a].alpha) + "," + formatDouble(params[a].beta);
  }
  out += "}";
}
