//===- ReferenceExecutor.cpp - Simulated devices for plan checking --------===//

#include "ReferenceExecutor.h"

#include "dist/Planner/Redistribute.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

using namespace dist::planner;
using namespace dist::planner::test;
using llvm::Error;
using llvm::Expected;

namespace {

Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

std::string coordText(llvm::ArrayRef<int64_t> coord) {
  std::string out = "(";
  for (size_t i = 0; i < coord.size(); ++i)
    out += (i ? "," : "") + std::to_string(coord[i]);
  return out + ")";
}

double identityOf(ReductionKind kind, double value) {
  switch (kind) {
  case ReductionKind::Sum:
    return 0;
  case ReductionKind::Prod:
    return 1;
  case ReductionKind::Max:
  case ReductionKind::Min:
  case ReductionKind::Avg:
    return value;
  }
  return 0;
}

double reduce(ReductionKind kind, const std::vector<double> &values) {
  double acc = values[0];
  for (size_t i = 1; i < values.size(); ++i) {
    double v = values[i];
    switch (kind) {
    case ReductionKind::Sum:
    case ReductionKind::Avg:
      acc += v;
      break;
    case ReductionKind::Prod:
      acc *= v;
      break;
    case ReductionKind::Max:
      acc = std::max(acc, v);
      break;
    case ReductionKind::Min:
      acc = std::min(acc, v);
      break;
    }
  }
  if (kind == ReductionKind::Avg)
    acc /= double(values.size());
  return acc;
}

/// Layout facts for one device: the local shape and, per dim, the global
/// index at each local position (-1: padding) and its inverse (-1: not
/// held). Built from the planner's own block semantics (blockPieces, which
/// handles interleaved dims), element by element.
struct Placement {
  std::vector<int64_t> local;
  std::vector<std::vector<int64_t>> globalOf, localOf;
};

} // namespace

ReferenceExecutor::ReferenceExecutor(const Mesh &mesh,
                                     std::vector<int64_t> globalShape)
    : mesh(mesh), shape(std::move(globalShape)) {
  for (int64_t n : shape)
    numElements *= n;
}

std::vector<double> ReferenceExecutor::iota() const {
  std::vector<double> values(numElements);
  for (int64_t i = 0; i < numElements; ++i)
    values[i] = double(i);
  return values;
}

static Placement placementOf(const Mesh &mesh, const Layout &layout,
                             llvm::ArrayRef<int64_t> shape,
                             llvm::ArrayRef<int64_t> coord) {
  Placement p;
  p.local = localShape(mesh, layout, shape);
  p.globalOf.resize(shape.size());
  p.localOf.resize(shape.size());
  for (unsigned d = 0; d < shape.size(); ++d) {
    p.globalOf[d].assign(p.local[d], -1);
    p.localOf[d].assign(shape[d], -1);
    int64_t shard = shardIndex(mesh, layout, d, coord);
    for (const BlockPiece &run : blockPieces(mesh, layout, shape, d, shard))
      for (int64_t g = run.global.begin; g < run.global.end; ++g) {
        int64_t l = run.localOffset + (g - run.global.begin);
        p.globalOf[d][l] = g;
        p.localOf[d][g] = l;
      }
  }
  return p;
}

/// Calls fn(localIndex, globalIndex or -1 for padding) for every position of
/// a device's local buffer.
template <typename Fn>
static void forEachPosition(const Placement &p, llvm::ArrayRef<int64_t> shape,
                            Fn &&fn) {
  size_t rank = shape.size();
  int64_t count = 1;
  for (int64_t e : p.local)
    count *= e;
  std::vector<int64_t> pos(rank, 0);
  for (int64_t linear = 0; linear < count; ++linear) {
    int64_t global = 0;
    bool padding = false;
    for (size_t d = 0; d < rank; ++d) {
      int64_t g = p.globalOf[d][pos[d]];
      padding |= g < 0;
      global = global * shape[d] + std::max<int64_t>(g, 0);
    }
    fn(linear, padding ? -1 : global);
    for (size_t d = rank; d-- > 0;) {
      if (++pos[d] < p.local[d])
        break;
      pos[d] = 0;
    }
  }
}

/// Local index of `global` in a device's buffer, or -1 if the device's block
/// does not contain it.
static int64_t localIndexOf(const Placement &p, llvm::ArrayRef<int64_t> shape,
                            int64_t global) {
  size_t rank = shape.size();
  std::vector<int64_t> g(rank);
  for (size_t d = rank; d-- > 0;) {
    g[d] = global % shape[d];
    global /= shape[d];
  }
  int64_t local = 0;
  for (size_t d = 0; d < rank; ++d) {
    int64_t i = p.localOf[d][g[d]];
    if (i < 0)
      return -1;
    local = local * p.local[d] + i;
  }
  return local;
}

DistributedTensor
ReferenceExecutor::materialise(const Layout &layout,
                               const std::vector<double> &global,
                               PartialInput mode, uint64_t seed) const {
  DistributedTensor t;
  t.layout = layout;
  t.layout.canonicalize();
  int64_t numDevices = mesh.getNumDevices();
  t.buffers.resize(numDevices);
  std::mt19937_64 rng(seed);
  for (int64_t dev = 0; dev < numDevices; ++dev) {
    std::vector<int64_t> coord = mesh.coordinateOf(dev);
    Placement p = placementOf(mesh, layout, shape, coord);
    int64_t count = 1;
    for (int64_t e : p.local)
      count *= e;
    std::vector<double> &buffer = t.buffers[dev];
    buffer.assign(count, 0);
    forEachPosition(p, shape, [&](int64_t local, int64_t g) {
      buffer[local] = g < 0 ? 0 : global[g];
    });
  }
  if (!layout.hasPartial())
    return t;

  // Split every value over its partial group (devices equal off the partial
  // axes). Iterate groups through their coordinate-0 member.
  ReductionKind kind = layout.partialKind;
  std::vector<int64_t> members;
  for (int64_t dev = 0; dev < numDevices; ++dev) {
    std::vector<int64_t> coord = mesh.coordinateOf(dev);
    bool leader = true;
    for (unsigned a : layout.partialAxes)
      leader &= coord[a] == 0;
    if (!leader)
      continue;
    members.clear();
    for (int64_t other = 0; other < numDevices; ++other) {
      std::vector<int64_t> oc = mesh.coordinateOf(other);
      bool same = true;
      for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
        if (!layout.isPartial(a))
          same &= oc[a] == coord[a];
      if (same)
        members.push_back(other);
    }
    size_t size = t.buffers[dev].size();
    for (size_t i = 0; i < size; ++i) {
      double value = t.buffers[dev][i];
      bool random = mode == PartialInput::RandomSplit &&
                    kind != ReductionKind::Prod && members.size() > 1;
      if (!random) {
        for (int64_t m : members)
          if (m != dev)
            t.buffers[m][i] = identityOf(kind, value);
        continue;
      }
      std::uniform_int_distribution<int> small(-3, 3), below(0, 5);
      size_t keeper = rng() % members.size();
      double rest = 0;
      for (size_t j = 0; j < members.size(); ++j) {
        if (j == keeper)
          continue;
        double v;
        switch (kind) {
        case ReductionKind::Sum:
        case ReductionKind::Avg:
          v = kind == ReductionKind::Sum ? small(rng) : value + small(rng);
          rest += kind == ReductionKind::Sum ? v : v - value;
          break;
        case ReductionKind::Max:
          v = value - below(rng);
          break;
        default: // Min
          v = value + below(rng);
          break;
        }
        t.buffers[members[j]][i] = v;
      }
      double kept = value;
      if (kind == ReductionKind::Sum)
        kept = value - rest;
      else if (kind == ReductionKind::Avg)
        kept = value - rest; // deviations sum to zero: the mean is `value`
      t.buffers[members[keeper]][i] = kept;
    }
  }
  return t;
}

namespace {
/// Every link costs nothing: the executor checks data, not prices.
struct FreeLinks final : LinkCosts {
  AxisCostParams link(int64_t, int64_t) const override { return {0, 0}; }
  double localSecondsPerByte() const override { return 0; }
};
} // namespace

Expected<DistributedTensor>
ReferenceExecutor::redistribute(const DistributedTensor &tensor,
                                const Layout &targetLayout,
                                const ReferenceExecutor *targetExecutor) const {
  const bool sameMesh = targetExecutor == nullptr;
  const Mesh &dstMesh = sameMesh ? mesh : targetExecutor->mesh;
  const Layout &src = tensor.layout;
  Layout dst = targetLayout;
  dst.canonicalize();
  if (!sameMesh && dst.hasPartial())
    return fail("redistribute across meshes to a partial layout");
  dst.partialKind = src.partialKind;
  FreeLinks links;
  Expected<Exchange> ex = computeExchange(mesh, src, dstMesh, dst, shape,
                                          /*elementBytes=*/1, sameMesh, links);
  if (!ex)
    return ex.takeError();
  DistributedTensor out;
  out.layout = dst;
  out.buffers.resize(dstMesh.getNumDevices());
  std::vector<std::vector<int>> written(dstMesh.getNumDevices());
  for (int64_t dev = 0; dev < dstMesh.getNumDevices(); ++dev) {
    int64_t count = 1;
    for (int64_t e : localShape(dstMesh, dst, shape))
      count *= e;
    out.buffers[dev].assign(count, 0);
    written[dev].assign(count, 0);
  }
  for (const ExchangeTransfer &t : ex->transfers) {
    std::vector<int64_t> sc = mesh.coordinateOf(t.sender);
    std::vector<int64_t> rc = dstMesh.coordinateOf(t.receiver);
    if (sameMesh)
      for (unsigned a : src.partialAxes)
        if (sc[a] != rc[a])
          return fail("redistribute: " + coordText(sc) + " sends to " +
                      coordText(rc) + " across partial axis " +
                      mesh.getAxis(a).name);
    if (t.local !=
        (mesh.rankOfIndex(t.sender) == dstMesh.rankOfIndex(t.receiver)))
      return fail("redistribute: a transfer is marked local wrongly");
    Placement from = placementOf(mesh, src, shape, sc);
    Placement to = placementOf(dstMesh, dst, shape, rc);
    // Walk the box's elements.
    size_t rank = shape.size();
    std::vector<int64_t> pos(rank);
    int64_t count = 1;
    for (const DimRange &r : t.box)
      count *= r.size();
    int64_t bytes = 0;
    for (int64_t k = 0; k < count; ++k) {
      int64_t rest = k, g = 0;
      for (size_t d = rank; d-- > 0;) {
        pos[d] = t.box[d].begin + rest % t.box[d].size();
        rest /= t.box[d].size();
      }
      for (size_t d = 0; d < rank; ++d)
        g = g * shape[d] + pos[d];
      int64_t i = localIndexOf(from, shape, g);
      if (i < 0)
        return fail("redistribute: sender " + coordText(sc) +
                    " does not hold global element " + std::to_string(g));
      int64_t j = localIndexOf(to, shape, g);
      if (j < 0)
        return fail("redistribute: receiver " + coordText(rc) +
                    " is sent global element " + std::to_string(g) +
                    ", outside its block");
      out.buffers[t.receiver][j] = tensor.buffers[t.sender][i];
      ++written[t.receiver][j];
      ++bytes;
    }
    if (bytes != t.bytes)
      return fail("redistribute: a transfer's byte count is wrong");
  }
  for (int64_t dev = 0; dev < dstMesh.getNumDevices(); ++dev) {
    std::vector<int64_t> coord = dstMesh.coordinateOf(dev);
    Placement p = placementOf(dstMesh, dst, shape, coord);
    Error error = Error::success();
    forEachPosition(p, shape, [&](int64_t local, int64_t g) {
      if (error || g < 0)
        return;
      if (written[dev][local] != 1)
        error = fail("redistribute: device " + coordText(coord) +
                     " receives global element " + std::to_string(g) + " " +
                     std::to_string(written[dev][local]) + " times");
    });
    if (error)
      return std::move(error);
  }
  return out;
}

Expected<DistributedTensor>
ReferenceExecutor::apply(const DistributedTensor &tensor,
                         const Move &move) const {
  if (move.kind == MoveKind::Redistribute) {
    if (move.crossMesh)
      return fail("a cross-mesh redistribute needs the target's executor");
    Expected<Layout> next = applyMove(mesh, tensor.layout, move, shape);
    if (!next)
      return next.takeError();
    return redistribute(tensor, *next);
  }
  Expected<Layout> next = applyMove(mesh, tensor.layout, move, shape);
  if (!next)
    return next.takeError();
  const Layout &src = tensor.layout;
  DistributedTensor out;
  out.layout = *next;
  int64_t numDevices = mesh.getNumDevices();
  out.buffers.resize(numDevices);
  std::string moveText = printMove(mesh, move);

  // Devices that differ from `coord` only on the move's axes.
  auto groupOf = [&](const std::vector<int64_t> &coord) {
    std::vector<int64_t> group;
    for (int64_t other = 0; other < numDevices; ++other) {
      std::vector<int64_t> oc = mesh.coordinateOf(other);
      bool same = true;
      for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
        if (std::find(move.axes.begin(), move.axes.end(), a) == move.axes.end())
          same &= oc[a] == coord[a];
      if (same)
        group.push_back(other);
    }
    return group;
  };

  AxisList changedAxes; // permute: axes any sender differs on
  for (int64_t dev = 0; dev < numDevices; ++dev) {
    std::vector<int64_t> coord = mesh.coordinateOf(dev);
    Placement dst = placementOf(mesh, out.layout, shape, coord);
    int64_t count = 1;
    for (int64_t e : dst.local)
      count *= e;
    std::vector<double> &buffer = out.buffers[dev];
    buffer.assign(count, 0);
    std::vector<int64_t> group = groupOf(coord);
    std::vector<Placement> groupSrc;
    for (int64_t m : group)
      groupSrc.push_back(placementOf(mesh, src, shape, mesh.coordinateOf(m)));
    Placement own = placementOf(mesh, src, shape, coord);

    int64_t sender = dev;
    Placement senderSrc = own;
    if (move.kind == MoveKind::Permute) {
      std::vector<int64_t> sc = permuteSender(mesh, src, out.layout, coord);
      sender = mesh.linearIndexOf(sc);
      senderSrc = placementOf(mesh, src, shape, sc);
      for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
        if (sc[a] != coord[a] &&
            std::find(changedAxes.begin(), changedAxes.end(), a) ==
                changedAxes.end())
          changedAxes.push_back(a);
      if (deviceBlock(mesh, src, shape, sc) !=
          deviceBlock(mesh, out.layout, shape, coord))
        return fail(moveText + ": sender " + coordText(sc) +
                    " does not hold the block of receiver " + coordText(coord));
    }

    Error error = Error::success();
    forEachPosition(dst, shape, [&](int64_t local, int64_t g) {
      if (error || g < 0)
        return;
      auto missing = [&](const char *where) {
        error = fail(moveText + ": device " + coordText(coord) +
                     " needs global element " + std::to_string(g) +
                     ", which is not in " + where);
      };
      switch (move.kind) {
      case MoveKind::AllSlice: {
        int64_t i = localIndexOf(own, shape, g);
        if (i < 0)
          return missing("its own buffer");
        buffer[local] = tensor.buffers[dev][i];
        return;
      }
      case MoveKind::ReplicateToPartial: {
        int64_t i = localIndexOf(own, shape, g);
        if (i < 0)
          return missing("its own buffer");
        double value = tensor.buffers[dev][i];
        bool keeper = true;
        for (unsigned a : move.axes)
          keeper &= coord[a] == 0;
        buffer[local] = keeper ? value : identityOf(move.reduction, value);
        return;
      }
      case MoveKind::AllGather:
      case MoveKind::AllToAll: {
        for (size_t j = 0; j < group.size(); ++j) {
          int64_t i = localIndexOf(groupSrc[j], shape, g);
          if (i >= 0) {
            buffer[local] = tensor.buffers[group[j]][i];
            return;
          }
        }
        return missing("any buffer of its group");
      }
      case MoveKind::ReduceScatter:
      case MoveKind::AllReduce: {
        std::vector<double> values;
        for (size_t j = 0; j < group.size(); ++j) {
          int64_t i = localIndexOf(groupSrc[j], shape, g);
          if (i < 0)
            return missing("every buffer of its group");
          values.push_back(tensor.buffers[group[j]][i]);
        }
        buffer[local] = reduce(move.reduction, values);
        return;
      }
      case MoveKind::Permute: {
        int64_t i = localIndexOf(senderSrc, shape, g);
        if (i < 0)
          return missing("its sender's buffer");
        buffer[local] = tensor.buffers[sender][i];
        return;
      }
      case MoveKind::Redistribute:
        return; // handled above
      }
    });
    if (error)
      return std::move(error);
  }
  if (move.kind == MoveKind::Permute) {
    std::sort(changedAxes.begin(), changedAxes.end());
    AxisList claimed = move.axes;
    std::sort(claimed.begin(), claimed.end());
    if (claimed != changedAxes)
      return fail(moveText + ": senders differ from receivers on " +
                  std::to_string(changedAxes.size()) +
                  " axes, not on the move's axes");
  }
  return out;
}

Error ReferenceExecutor::check(const DistributedTensor &tensor,
                               const std::vector<double> &global) const {
  const Layout &layout = tensor.layout;
  int64_t numDevices = mesh.getNumDevices();
  for (int64_t dev = 0; dev < numDevices; ++dev) {
    std::vector<int64_t> coord = mesh.coordinateOf(dev);
    // Partial layouts: check once per group, at its coordinate-0 member.
    bool leader = true;
    for (unsigned a : layout.partialAxes)
      leader &= coord[a] == 0;
    if (!leader)
      continue;
    std::vector<int64_t> members = {dev};
    if (layout.hasPartial()) {
      members.clear();
      for (int64_t other = 0; other < numDevices; ++other) {
        std::vector<int64_t> oc = mesh.coordinateOf(other);
        bool same = true;
        for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
          if (!layout.isPartial(a))
            same &= oc[a] == coord[a];
        if (same)
          members.push_back(other);
      }
    }
    Placement p = placementOf(mesh, layout, shape, coord);
    Error error = Error::success();
    forEachPosition(p, shape, [&](int64_t local, int64_t g) {
      if (error || g < 0)
        return;
      std::vector<double> values;
      for (int64_t m : members)
        values.push_back(tensor.buffers[m][local]);
      double value =
          layout.hasPartial() ? reduce(layout.partialKind, values) : values[0];
      if (std::fabs(value - global[g]) > 1e-9 * (1 + std::fabs(global[g])))
        error =
            fail("device " + coordText(coord) + " holds " +
                 std::to_string(value) + " for global element " +
                 std::to_string(g) + ", expected " + std::to_string(global[g]) +
                 " (layout " + printLayout(mesh, layout) + ")");
    });
    if (error)
      return error;
  }
  return Error::success();
}

Error ReferenceExecutor::run(const Layout &source, const Layout &target,
                             const Plan &plan, PartialInput mode,
                             uint64_t seed) const {
  std::vector<double> global = iota();
  DistributedTensor t = materialise(source, global, mode, seed);
  if (Error e = check(t, global))
    return fail("materialised source is wrong: " +
                llvm::toString(std::move(e)));
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    Expected<DistributedTensor> next = apply(t, plan.steps[i].move);
    if (!next)
      return fail("step " + std::to_string(i + 1) + ": " +
                  llvm::toString(next.takeError()));
    if (next->layout != plan.steps[i].layout)
      return fail("step " + std::to_string(i + 1) + " ends at " +
                  printLayout(mesh, next->layout) + " but the plan says " +
                  printLayout(mesh, plan.steps[i].layout));
    t = std::move(*next);
  }
  Layout expected = target;
  expected.canonicalize();
  if (t.layout != expected)
    return fail("the plan ends at " + printLayout(mesh, t.layout) +
                ", not at " + printLayout(mesh, expected));
  return check(t, global);
}

Error ReferenceExecutor::runCrossMesh(const Layout &source,
                                      const Layout &target, const Plan &plan,
                                      const ReferenceExecutor &targetExecutor,
                                      PartialInput mode, uint64_t seed) const {
  std::vector<double> global = iota();
  DistributedTensor t = materialise(source, global, mode, seed);
  const ReferenceExecutor *exec = this;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Move &move = plan.steps[i].move;
    Expected<DistributedTensor> next =
        move.kind == MoveKind::Redistribute && move.crossMesh
            ? redistribute(t, move.permuteTarget, &targetExecutor)
            : exec->apply(t, move);
    if (!next)
      return fail("step " + std::to_string(i + 1) + ": " +
                  llvm::toString(next.takeError()));
    if (move.kind == MoveKind::Redistribute && move.crossMesh) {
      if (exec != this)
        return fail("step " + std::to_string(i + 1) + ": a second transfer");
      exec = &targetExecutor;
    }
    if (next->layout != plan.steps[i].layout)
      return fail("step " + std::to_string(i + 1) + " ends at " +
                  printLayout(exec->mesh, next->layout) +
                  " but the plan says " +
                  printLayout(exec->mesh, plan.steps[i].layout));
    t = std::move(*next);
  }
  if (exec != &targetExecutor)
    return fail("the plan never leaves the source mesh");
  Layout expected = target;
  expected.canonicalize();
  if (t.layout != expected)
    return fail("the plan ends at " + printLayout(exec->mesh, t.layout) +
                ", not at " + printLayout(exec->mesh, expected));
  return exec->check(t, global);
}
