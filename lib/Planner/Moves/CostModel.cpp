//===- CostModel.cpp - The ring alpha-beta model and topology files -------===//

#include "dist/Planner/CostModel.h"
#include "Model/Syntax.h"
#include "dist/Planner/BoundedJSON.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
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

/// The non-local move kinds, as "ops" keys for error messages.
static std::string opKindList() {
  std::string out;
  for (MoveKind kind : kAllMoveKinds)
    if (!isLocalMove(kind))
      out +=
          (out.empty() ? "\"" : ", \"") + stringifyMoveKind(kind).str() + "\"";
  return out;
}

static Error readParams(const llvm::json::Value &value, llvm::StringRef where,
                        AxisCostParams &params,
                        std::map<MoveKind, MoveCostOverride> *ops = nullptr);

/// An axis's "ops": {KIND: {"alpha": ..., "beta": ...}} (semantics §3b).
static Error readOps(const llvm::json::Value &value, const std::string &where,
                     std::map<MoveKind, MoveCostOverride> &ops) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return fail("topology: " + where +
                " must be an object keyed by move kind (" + opKindList() + ")");
  for (const auto &[key, field] : *object) {
    std::optional<MoveKind> kind = parseMoveKind(key);
    if (!kind || isLocalMove(*kind))
      return fail("topology: unknown move kind \"" + key.str() + "\" in " +
                  where + " (expected " + opKindList() + ")");
    // NaN marks a field the kind leaves to the axis (readParam never
    // accepts one from the file).
    AxisCostParams read{NAN, NAN};
    if (Error e = readParams(field, where + "." + key.str(), read))
      return e;
    MoveCostOverride &override = ops[*kind];
    if (!std::isnan(read.alpha))
      override.alpha = read.alpha;
    if (!std::isnan(read.beta))
      override.beta = read.beta;
  }
  return Error::success();
}

/// {"alpha": ..., "beta": ...}, and with `ops` also "ops" (an axis).
static Error readParams(const llvm::json::Value &value, llvm::StringRef where,
                        AxisCostParams &params,
                        std::map<MoveKind, MoveCostOverride> *ops) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return fail("topology: " + where +
                " must be an object with \"alpha\" "
                "and/or \"beta\"");
  for (const auto &[key, field] : *object) {
    if (key == "alpha") {
      if (Error e = readParam(field, where + ".alpha", params.alpha))
        return e;
    } else if (key == "beta") {
      if (Error e = readParam(field, where + ".beta", params.beta))
        return e;
    } else if (key == "ops" && ops) {
      if (Error e = readOps(field, where.str() + ".ops", *ops))
        return e;
    } else {
      return fail("topology: unknown key \"" + key.str() + "\" in " + where +
                  (ops ? " (expected \"alpha\", \"beta\" or \"ops\")"
                       : " (expected \"alpha\" or \"beta\")"));
    }
  }
  return Error::success();
}

llvm::ArrayRef<llvm::StringRef> DeviceParams::elementTypes() {
  static const llvm::StringRef types[] = {
#define DIST_ELEMENT_TYPE(Enum, Name, Bytes, IsFloat, Code) Name,
#include "dist/Support/ElementTypes.def"
  };
  return types;
}

DeviceParams DeviceParams::defaults() {
  // Semantics §3b: an H100 SXM at 70% of its peak, the node whose links the
  // §3 defaults describe.
  DeviceParams device;
  device.flops = {{"bf16", 6.9e14}, {"f16", 6.9e14}, {"f32", 4.7e13},
                  {"f64", 2.3e13},  {"i1", 4.7e13},  {"i8", 4.7e13},
                  {"i16", 4.7e13},  {"i32", 4.7e13}, {"i64", 4.7e13}};
  device.memBandwidth = 2.3e12;
  return device;
}

double DeviceParams::flopsFor(llvm::StringRef elementType) const {
  if (elementType == "index")
    elementType = "i64";
  auto it = flops.find(elementType.str());
  if (it != flops.end())
    return it->second;
  double largest = 0;
  for (const auto &[type, rate] : flops)
    largest = std::max(largest, rate);
  return largest;
}

/// "flops": one rate, or one per element type (types left out run at the
/// largest rate given).
static Error readFlops(const llvm::json::Value &value,
                       std::map<std::string, double> &flops) {
  auto positive = [](double rate, const llvm::Twine &where) -> Error {
    if (rate == 0)
      return fail("topology: " + where + " must be > 0");
    return Error::success();
  };
  if (const llvm::json::Object *object = value.getAsObject()) {
    flops.clear();
    for (const auto &[key, field] : *object) {
      if (!llvm::is_contained(DeviceParams::elementTypes(), key.str()))
        return fail("topology: unknown element type \"" + key.str() +
                    "\" in device.flops (expected " +
                    llvm::join(DeviceParams::elementTypes(), ", ") + ")");
      double rate = 0;
      if (Error e = readParam(field, "device.flops." + key.str(), rate))
        return e;
      if (Error e = positive(rate, "device.flops." + key.str()))
        return e;
      flops[key.str()] = rate;
    }
    if (flops.empty())
      return fail("topology: device.flops names no element type");
    return Error::success();
  }
  double rate = 0;
  if (Error e = readParam(value, "device.flops", rate))
    return e;
  if (Error e = positive(rate, "device.flops"))
    return e;
  flops = {{"f32", rate}};
  return Error::success();
}

static Error readDevice(const llvm::json::Value &value, DeviceParams &device) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return fail("topology: device must be an object with \"flops\", "
                "\"mem_bw\" and/or \"memory\"");
  // Fields left out are the default device's (semantics §3b).
  device = DeviceParams::defaults();
  for (const auto &[key, field] : *object) {
    if (key == "flops") {
      if (Error e = readFlops(field, device.flops))
        return e;
      continue;
    }
    double *out = key == "mem_bw"   ? &device.memBandwidth
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

/// "local": {"beta": SECONDS_PER_BYTE} (semantics §3b).
static Error readLocal(const llvm::json::Value &value, double &beta) {
  const llvm::json::Object *object = value.getAsObject();
  if (!object)
    return fail("topology: local must be an object with \"beta\"");
  for (const auto &[key, field] : *object) {
    if (key != "beta")
      return fail("topology: unknown key \"" + key.str() +
                  "\" in local (expected \"beta\")");
    if (Error e = readParam(field, "local.beta", beta))
      return e;
  }
  return Error::success();
}

Expected<Topology> Topology::parseJSON(llvm::StringRef text) {
  Expected<llvm::json::Value> root = parseBoundedJSON(text);
  if (!root)
    return fail("topology: invalid JSON: " + llvm::toString(root.takeError()));
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
    // Provenance written by dist-calibrate (semantics §8): not read.
    if (key == "calibration")
      continue;
    if (key == "local") {
      if (Error e = readLocal(value, topology.localBeta))
        return std::move(e);
      continue;
    }
    if (key != "axes")
      return fail("topology: unknown key \"" + key.str() +
                  "\" (expected \"axes\", \"default\", \"transfer\", "
                  "\"local\", \"device\" or \"calibration\")");
    const llvm::json::Object *axes = value.getAsObject();
    if (!axes)
      return fail("topology: \"axes\" must be an object keyed by axis name");
    for (const auto &[name, params] : *axes) {
      AxisCostParams axisParams = topology.defaults;
      std::map<MoveKind, MoveCostOverride> ops;
      if (Error e = readParams(params, "axis \"" + name.str() + "\"",
                               axisParams, &ops))
        return std::move(e);
      topology.axes[name.str()] = axisParams;
      if (!ops.empty())
        topology.axisOps[name.str()] = std::move(ops);
    }
  }
  return topology;
}

Topology Topology::restrictedTo(const Mesh &mesh) const {
  Topology out = *this;
  out.axes.clear();
  out.axisOps.clear();
  for (const auto &[name, params] : axes)
    if (mesh.findAxis(name))
      out.axes[name] = params;
  for (const auto &[name, ops] : axisOps)
    if (mesh.findAxis(name))
      out.axisOps[name] = ops;
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

double CostModel::stepCost(const Move &move, int64_t bytesBefore,
                           int64_t localBytes) const {
  double local = localCost(localBytes);
  if (isLocalMove(move.kind))
    return local;
  // A permute that changes no coordinate (it only relabels size-1 axes)
  // moves no data.
  if (move.kind == MoveKind::Permute && move.axes.empty())
    return local;
  return collectiveCost(move.kind, move.axes, bytesBefore) + local;
}

//===----------------------------------------------------------------------===//
// AlphaBetaCostModel
//===----------------------------------------------------------------------===//

AlphaBetaCostModel::AlphaBetaCostModel(Mesh mesh,
                                       std::vector<AxisCostParams> params,
                                       std::vector<KindParams> kindParams,
                                       double localBeta)
    : CostModel(std::move(mesh)), params(std::move(params)),
      kindParams(std::move(kindParams)), localBeta(localBeta) {
  bool any = false;
  minBetaOfAxis.assign(this->mesh.getNumAxes(), 0);
  for (unsigned a = 0; a < this->mesh.getNumAxes(); ++a) {
    bool first = true;
    for (MoveKind kind : kAllMoveKinds) {
      if (isLocalMove(kind))
        continue;
      const AxisCostParams &p = getParams(a, kind);
      minBetaOfAxis[a] = first ? p.beta : std::min(minBetaOfAxis[a], p.beta);
      first = false;
      if (this->mesh.getAxisSize(a) == 1)
        continue;
      minAlpha = any ? std::min(minAlpha, p.alpha) : p.alpha;
      minBeta = any ? std::min(minBeta, p.beta) : p.beta;
      any = true;
    }
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
  // semantics §3b: a kind's own alpha or beta replaces the axis's.
  std::vector<KindParams> kindParams(mesh.getNumAxes());
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
    kindParams[a].fill(params[a]);
  for (const auto &[name, ops] : topology.axisOps) {
    std::optional<unsigned> axis = mesh.findAxis(name);
    if (!axis)
      return fail("topology names axis " + detail::quoteName(name) +
                  ", which is not in mesh " + mesh.str());
    for (const auto &[kind, override] : ops) {
      AxisCostParams &p = kindParams[*axis][static_cast<unsigned>(kind)];
      p.alpha = override.alpha.value_or(p.alpha);
      p.beta = override.beta.value_or(p.beta);
    }
  }
  return AlphaBetaCostModel(mesh, std::move(params), std::move(kindParams),
                            topology.localBeta);
}

AxisCostParams AlphaBetaCostModel::maxima(MoveKind kind,
                                          llvm::ArrayRef<unsigned> axes) const {
  AxisCostParams link{0, 0};
  for (unsigned axis : axes) {
    const AxisCostParams &p = getParams(axis, kind);
    link.alpha = std::max(link.alpha, p.alpha);
    link.beta = std::max(link.beta, p.beta);
  }
  return link;
}

double AlphaBetaCostModel::collectiveCost(MoveKind kind,
                                          llvm::ArrayRef<unsigned> axes,
                                          int64_t bytesBefore) const {
  double p = 1;
  for (unsigned axis : axes)
    p *= double(mesh.getAxisSize(axis));
  auto [alpha, beta] = maxima(kind, axes);
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
  return maxima(MoveKind::Redistribute, axes);
}

AxisCostParams AlphaBetaCostModel::slowestLink() const {
  std::vector<unsigned> linked, all;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    all.push_back(a);
    if (mesh.getAxisSize(a) > 1)
      linked.push_back(a);
  }
  // A mesh of one device has no links; its configured parameters are the
  // best guess for the link out of it.
  return maxima(MoveKind::Redistribute, linked.empty() ? all : linked);
}

/// The collectives whose latency the heuristic's bounds sum per axis.
static constexpr MoveKind kGroupCollectives[] = {
    MoveKind::AllGather, MoveKind::AllToAll, MoveKind::ReduceScatter,
    MoveKind::AllReduce};

double AlphaBetaCostModel::axisLatencyBound(unsigned axis) const {
  if (axis >= mesh.getNumAxes())
    return 0;
  double alpha = getParams(axis, kGroupCollectives[0]).alpha;
  for (MoveKind kind : kGroupCollectives)
    alpha = std::min(alpha, getParams(axis, kind).alpha);
  return double(mesh.getAxisSize(axis) - 1) * alpha;
}

double
AlphaBetaCostModel::groupLatencyExcess(llvm::ArrayRef<unsigned> axes) const {
  double product = 1, sum = 0;
  for (unsigned axis : axes) {
    if (axis >= mesh.getNumAxes())
      return 0;
    double p = double(mesh.getAxisSize(axis));
    product *= p;
    sum += p - 1;
  }
  // Each collective pays (P - 1) max alpha of its own kind: the smallest
  // such maximum over the kinds is safe for all of them.
  double alpha = maxima(kGroupCollectives[0], axes).alpha;
  for (MoveKind kind : kGroupCollectives)
    alpha = std::min(alpha, maxima(kind, axes).alpha);
  return std::max(0.0, product - 1 - sum) * alpha;
}

bool AlphaBetaCostModel::sequentialReduceScatterIsCheaper() const {
  // One reduce-scatter per axis pays sum_i (p_i - 1) alpha_i <= (P - 1)
  // alpha_max latency, strictly less once two factors exceed 1 and
  // alpha_max > 0; on evenly divisible dims its bandwidth term
  // sum_i (p_i - 1)/(p_1..p_i) n beta_i never exceeds (P - 1)/P n beta_max.
  // (All of reduce_scatter's own parameters.) With priced local copies the
  // sequence may pack its input twice where the group packs it once
  // (semantics §3b), so then nothing is guaranteed.
  if (localBeta != 0)
    return false;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
    if (mesh.getAxisSize(a) > 1 &&
        !(getParams(a, MoveKind::ReduceScatter).alpha > 0))
      return false;
  return true;
}

bool AlphaBetaCostModel::uniformOverAxes(MoveKind kind, bool betaOnly) const {
  const AxisCostParams *first = nullptr;
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    if (mesh.getAxisSize(a) == 1)
      continue;
    const AxisCostParams &p = getParams(a, kind);
    if (first && (betaOnly ? p.beta != first->beta : !(p == *first)))
      return false;
    first = &p;
  }
  return true;
}

bool AlphaBetaCostModel::permuteCostIsUniform() const {
  return uniformOverAxes(MoveKind::Permute, /*betaOnly=*/false);
}

bool AlphaBetaCostModel::sameKindStepsCommute() const {
  // The argument holds per kind: gathers among themselves, reduce-scatters
  // among themselves. A gather's own-block copy (semantics §3b) is its
  // input, n then p n in one order, n then q n in the other: with priced
  // copies the orders differ.
  return localBeta == 0 &&
         uniformOverAxes(MoveKind::AllGather, /*betaOnly=*/true) &&
         uniformOverAxes(MoveKind::ReduceScatter, /*betaOnly=*/true);
}

bool AlphaBetaCostModel::axesInterchangeable(unsigned a, unsigned b) const {
  return a < mesh.getNumAxes() && b < mesh.getNumAxes() &&
         mesh.getAxisSize(a) == mesh.getAxisSize(b) && params[a] == params[b] &&
         kindParams[a] == kindParams[b];
}

void AlphaBetaCostModel::appendFingerprint(std::string &out) const {
  out += "alpha-beta-ring{";
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    out += a ? ";" : "";
    out += detail::quoteName(mesh.getAxis(a).name) + ":" +
           formatDouble(params[a].alpha) + "," + formatDouble(params[a].beta);
    // Kinds with their own parameters (semantics §3b); none: the key is
    // what it was before "ops" existed.
    for (MoveKind kind : kAllMoveKinds)
      if (!(getParams(a, kind) == params[a]))
        out += "," + stringifyMoveKind(kind).str() + "=" +
               formatDouble(getParams(a, kind).alpha) + "," +
               formatDouble(getParams(a, kind).beta);
  }
  // Priced local copies (semantics §3b); free: the key is what it was
  // before "local" existed.
  if (localBeta != 0)
    out += ";local=" + formatDouble(localBeta);
  out += "}";
}
