//===- Redistribute.cpp - Point-to-point exchanges (semantics §3) ---------===//
//
// For every receiver, its target block is cut at the source's block
// boundaries; each piece lies in exactly one source block, whose index per
// dim fixes the sender's coordinate on the axes that split that dim. The
// remaining axes (within one mesh: not partial ones, whose coordinate must
// match) are free: they pick among the replicas holding the piece.
// SenderBalancer is the one rule both the tables and the search's evaluator
// apply (semantics §3 redistribute): the receiver itself when it holds the
// piece; else the replica after which the busier of it and the receiver is
// least busy, then the least loaded; the receiver's own coordinate on the
// free axes (the cheapest link) first on ties.
//
//===----------------------------------------------------------------------===//

#include "dist/Planner/Redistribute.h"
#include "Moves/BlockCoverage.h"
#include "dist/Support/MixedRadix.h"

#include "llvm/ADT/Twine.h"
#include "llvm/ADT/bit.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace dist::planner;
using llvm::Expected;

LinkCosts::~LinkCosts() = default;

AxisCostParams SameMeshLinks::link(int64_t sender, int64_t receiver) const {
  const Mesh &mesh = model.getMesh();
  std::vector<int64_t> a = mesh.coordinateOf(sender),
                       b = mesh.coordinateOf(receiver);
  std::vector<unsigned> differing;
  for (unsigned axis = 0; axis < mesh.getNumAxes(); ++axis)
    if (a[axis] != b[axis])
      differing.push_back(axis);
  return model.pointToPointLink(differing);
}

AxisCostParams dist::planner::defaultTransferParams(const CostModel &srcModel,
                                                    const CostModel &dstModel) {
  AxisCostParams a = srcModel.slowestLink(), b = dstModel.slowestLink();
  return {std::max(a.alpha, b.alpha), std::max(a.beta, b.beta)};
}

RedistributeCandidates
dist::planner::redistributeCandidateSet(const Mesh &mesh, const Layout &from,
                                        const Layout &target) {
  RedistributeCandidates out;
  Layout canonicalFrom = from;
  canonicalFrom.canonicalize();
  // Each refinement is compared in place (one axis pushed and popped), so
  // that no candidate is built here. `repeat`: a layout an earlier family
  // already holds.
  auto addFamily = [&](Layout base, const Layout *repeat) {
    base.partialAxes = from.partialAxes;
    base.partialKind = from.partialKind;
    base.canonicalize();
    RedistributeCandidates::Family &family = out.families.emplace_back();
    family.withBase = base != canonicalFrom && !(repeat && base == *repeat);
    family.refinements.reserve(mesh.getNumAxes() * base.getRank());
    Layout refined = base;
    for (AxisList &axes : refined.dimAxes)
      axes.reserve(axes.size() + 1);
    for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
      if (mesh.getAxisSize(a) == 1 || !base.isReplicated(a))
        continue;
      for (unsigned d = 0; d < base.getRank(); ++d) {
        refined.dimAxes[d].push_back(a);
        if (refined != canonicalFrom && !(repeat && refined == *repeat))
          family.refinements.push_back({a, d});
        refined.dimAxes[d].pop_back();
      }
    }
    family.base = std::move(base);
  };
  Layout r = target;
  for (AxisList &axes : r.dimAxes)
    axes.erase(std::remove_if(axes.begin(), axes.end(),
                              [&](unsigned a) { return from.isPartial(a); }),
               axes.end());
  addFamily(std::move(r), nullptr);
  if (llvm::any_of(from.partialAxes,
                   [&](unsigned a) { return mesh.getAxisSize(a) > 1; }))
    return out;
  // The full replica keeps the axes of size 1 that start a dim of the
  // target (they split nothing; a plan on a mesh with such axes places them
  // so, UnitAxes.cpp). Its family repeats none of R's but R itself (R a
  // single split), and is R's own where R splits nothing. Only from states
  // without partial values over axes of size > 1 (see the header; partial
  // size-1 axes hold nothing, and the search drops them).
  Layout whole = target;
  bool rSplits = false;
  for (AxisList &axes : whole.dimAxes) {
    auto unit = [&](unsigned a) {
      return mesh.getAxisSize(a) == 1 && !from.isPartial(a);
    };
    rSplits |= llvm::any_of(axes, [&](unsigned a) {
      return mesh.getAxisSize(a) > 1 && !from.isPartial(a);
    });
    axes.erase(std::find_if_not(axes.begin(), axes.end(), unit), axes.end());
  }
  if (rSplits) {
    Layout rBase = out.families[0].base;
    addFamily(std::move(whole), &rBase);
  }
  return out;
}

RedistributeCandidates::Position
RedistributeCandidates::position(size_t i) const {
  Position p;
  for (const Family &f : families) {
    if (i < f.size()) {
      p.refinement = f.withBase && i == 0
                         ? nullptr
                         : &f.refinements[i - (f.withBase ? 1 : 0)];
      return p;
    }
    i -= f.size();
    ++p.family;
  }
  assert(false && "candidate index out of range");
  return p;
}

Layout RedistributeCandidates::layout(size_t i) const {
  Position p = position(i);
  Layout l = families[p.family].base;
  if (p.refinement)
    l.dimAxes[p.refinement->second].push_back(p.refinement->first);
  return l;
}

std::vector<Layout>
dist::planner::redistributeCandidates(const Mesh &mesh, const Layout &from,
                                      const Layout &target) {
  RedistributeCandidates set = redistributeCandidateSet(mesh, from, target);
  std::vector<Layout> out;
  out.reserve(set.size());
  for (size_t i = 0; i < set.size(); ++i)
    out.push_back(set.layout(i));
  return out;
}

namespace {
/// The free axes of a same-mesh exchange: of size > 1, splitting no dim of
/// the source and not partial. At most kMaxSenderCandidates replicas (in the
/// order of offsets from the receiver's coordinate, last free axis fastest)
/// are considered per piece: balancing over that many already spreads the
/// load, and the search prices exchanges on meshes of any size.
constexpr int64_t kMaxSenderCandidates = 64;

void sameMeshFreeAxes(const Mesh &mesh, const Layout &src,
                      std::vector<unsigned> &free) {
  free.clear();
  for (unsigned axis = 0; axis < mesh.getNumAxes(); ++axis)
    if (mesh.getAxisSize(axis) > 1 && !src.dimOf(axis) && !src.isPartial(axis))
      free.push_back(axis);
}

int64_t numSenderCandidates(const Mesh &mesh, llvm::ArrayRef<unsigned> free) {
  int64_t n = 1;
  for (unsigned axis : free)
    n = std::min(kMaxSenderCandidates, n * mesh.getAxisSize(axis));
  return n;
}

/// Candidate c's offset from the receiver's coordinate on free axis i
/// (mixed radix over the free axes, last fastest).
template <typename Fn>
void forEachFreeOffset(const Mesh &mesh, llvm::ArrayRef<unsigned> free,
                       int64_t c, Fn fn) {
  for (size_t i = free.size(); i-- > 0;) {
    int64_t size = mesh.getAxisSize(free[i]);
    fn(free[i], c % size);
    c /= size;
  }
}
} // namespace

static llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

namespace {
/// One dim of a piece: a range of global indices inside source block
/// `block` (the source's shard index along the dim).
struct DimPiece {
  DimRange range;
  int64_t block;
};

/// The receiver's runs along `dim` (one per segment of an interleaved dim),
/// cut at the source's block boundaries.
std::vector<DimPiece> cutAtBlocks(const Mesh &srcMesh, const Layout &src,
                                  const Mesh &dstMesh, const Layout &dst,
                                  llvm::ArrayRef<int64_t> shape, unsigned dim,
                                  int64_t dstShard) {
  std::vector<DimPiece> pieces;
  for (const BlockPiece &run : blockPieces(dstMesh, dst, shape, dim, dstShard))
    for (int64_t g = run.global.begin; g < run.global.end;) {
      BlockAt at = blockAt(srcMesh, src, shape, dim, g);
      int64_t end = std::min(run.global.end, at.end);
      pieces.push_back({{g, end}, at.shard});
      g = end;
    }
  return pieces;
}
} // namespace

/// One assignment of senders (within one mesh with `ownReplicaOnly`, every
/// piece from the replica with the receiver's own coordinate on the free
/// axes) and its price.
static Expected<Exchange>
assignExchange(const Mesh &srcMesh, const Layout &src, const Mesh &dstMesh,
               const Layout &dst, llvm::ArrayRef<int64_t> shape,
               int64_t elementBytes, bool sameMesh, const LinkCosts &links,
               bool ownReplicaOnly, bool *sendBound = nullptr) {
  const size_t rank = shape.size();
  if (sameMesh) {
    Layout a = src, b = dst;
    a.canonicalize();
    b.canonicalize();
    if (a.partialAxes != b.partialAxes ||
        (a.hasPartial() && a.partialKind != b.partialKind))
      return fail("redistribute keeps the partial axes and kind: the operand "
                  "and the target differ in them");
  } else if (src.hasPartial() || dst.hasPartial()) {
    return fail("redistribute across meshes needs non-partial layouts; "
                "reduce the partial axes on the source mesh first");
  }

  // Axes of the source mesh that split no dim: free to choose (within one
  // mesh, not the partial ones).
  std::vector<unsigned> freeAxes;
  int64_t numCandidates = 1;
  if (sameMesh) {
    sameMeshFreeAxes(srcMesh, src, freeAxes);
    numCandidates = ownReplicaOnly ? 1 : numSenderCandidates(srcMesh, freeAxes);
  } else {
    for (unsigned axis = 0; axis < srcMesh.getNumAxes(); ++axis)
      if (!src.dimOf(axis)) {
        freeAxes.push_back(axis);
        numCandidates *= srcMesh.getAxisSize(axis);
      }
  }

  Exchange ex;
  SenderBalancer balancer;
  balancer.reset(srcMesh.getNumDevices());
  int64_t work = 0;
  for (int64_t receiver = 0; receiver < dstMesh.getNumDevices(); ++receiver) {
    std::vector<int64_t> rcoord = dstMesh.coordinateOf(receiver);
    std::vector<std::vector<DimPiece>> perDim(rank);
    int64_t numPieces = 1;
    for (unsigned d = 0; d < rank; ++d) {
      perDim[d] = cutAtBlocks(srcMesh, src, dstMesh, dst, shape, d,
                              shardIndex(dstMesh, dst, d, rcoord));
      numPieces *= int64_t(perDim[d].size());
    }
    if (numPieces == 0)
      continue;
    work += numPieces * numCandidates;
    if (work > kMaxExchangeWork)
      return fail("the point-to-point exchange is too large to plan (over " +
                  llvm::Twine(kMaxExchangeWork) + " pieces)");
    const int64_t receiverRank = dstMesh.rankOfIndex(receiver);
    std::vector<size_t> idx(rank, 0);
    for (int64_t p = 0; p < numPieces; ++p) {
      // The sender's forced coordinates: each source block index decomposed
      // over the axes splitting its dim, minor-most axis first.
      std::vector<int64_t> scoord(srcMesh.getNumAxes(), 0);
      if (sameMesh)
        scoord = rcoord;
      std::vector<DimRange> box(rank);
      int64_t elements = 1;
      for (unsigned d = 0; d < rank; ++d) {
        const DimPiece &piece = perDim[d][idx[d]];
        box[d] = piece.range;
        elements *= piece.range.size();
        int64_t block = piece.block;
        for (size_t i = src.dimAxes[d].size(); i-- > 0;) {
          unsigned axis = src.dimAxes[d][i];
          int64_t size = srcMesh.getAxisSize(axis);
          scoord[axis] = block % size;
          block /= size;
        }
      }
      const int64_t bytes = elements * elementBytes;
      // Enumerate the replicas: every combination of the free axes (within
      // one mesh, as offsets from the receiver's coordinate, which comes
      // first and has the cheapest link).
      int64_t best = -1;
      double bestIncrement = 0;
      AxisCostParams bestLink;
      for (int64_t c = 0; c < numCandidates; ++c) {
        forEachFreeOffset(srcMesh, freeAxes, c, [&](unsigned axis, int64_t k) {
          scoord[axis] =
              sameMesh ? (rcoord[axis] + k) % srcMesh.getAxisSize(axis) : k;
        });
        int64_t candidate = srcMesh.linearIndexOf(scoord);
        if (srcMesh.rankOfIndex(candidate) == receiverRank ||
            numCandidates == 1) {
          best = candidate;
          break;
        }
        AxisCostParams link = links.link(candidate, receiver);
        double increment = balancer.increment(candidate, receiver, link, bytes);
        if (best < 0 || balancer.better(receiver, candidate, increment, best,
                                        bestIncrement)) {
          best = candidate;
          bestIncrement = increment;
          bestLink = link;
        }
      }
      ExchangeTransfer t;
      t.sender = best;
      t.receiver = receiver;
      t.box = std::move(box);
      t.bytes = bytes;
      t.local = srcMesh.rankOfIndex(best) == receiverRank;
      if (!t.local && numCandidates > 1)
        balancer.assign(best, receiver, bestLink, bytes);
      ex.transfers.push_back(std::move(t));
      // Next piece, last dim fastest.
      for (size_t d = rank; d-- > 0;) {
        if (++idx[d] < perDim[d].size())
          break;
        idx[d] = 0;
      }
    }
  }

  // Price it: per world rank, the sum over its peers of alpha + bytes *
  // beta, on the receive and on the send side.
  std::map<std::pair<int64_t, int64_t>, int64_t> pairBytes; // (s, r) indices
  for (const ExchangeTransfer &t : ex.transfers)
    if (!t.local)
      pairBytes[{t.sender, t.receiver}] += t.bytes;
  std::map<int64_t, double> recvSide, sendSide;
  std::map<int64_t, int64_t> received, kept;
  for (const ExchangeTransfer &t : ex.transfers)
    if (t.local)
      kept[t.receiver] += t.bytes;
  for (const auto &[pair, bytes] : pairBytes) {
    AxisCostParams link = links.link(pair.first, pair.second);
    double seconds = link.alpha + double(bytes) * link.beta;
    int64_t s = srcMesh.rankOfIndex(pair.first);
    int64_t r = dstMesh.rankOfIndex(pair.second);
    sendSide[s] += seconds;
    recvSide[r] += seconds;
    received[r] += bytes;
  }
  double worstRecv = 0, worstSend = 0;
  for (const auto &[r, seconds] : recvSide)
    worstRecv = std::max(worstRecv, seconds);
  for (const auto &[s, seconds] : sendSide)
    worstSend = std::max(worstSend, seconds);
  for (const auto &[r, bytes] : received)
    ex.maxRecvBytes = std::max(ex.maxRecvBytes, bytes);
  for (const auto &[r, bytes] : kept)
    ex.maxKeptBytes = std::max(ex.maxKeptBytes, bytes);
  // semantics §3b: what a rank keeps it copies locally. (Every receiver
  // keeps what it holds whoever else sends, so the choice of senders does
  // not change this term.)
  ex.cost = std::max(worstRecv, worstSend) +
            links.localSecondsPerByte() * double(ex.maxKeptBytes);
  if (sendBound)
    *sendBound = worstSend > worstRecv;
  return ex;
}

Expected<Exchange> dist::planner::computeExchange(
    const Mesh &srcMesh, const Layout &src, const Mesh &dstMesh,
    const Layout &dst, llvm::ArrayRef<int64_t> shape, int64_t elementBytes,
    bool sameMesh, const LinkCosts &links) {
  bool sendBound = false;
  Expected<Exchange> own = assignExchange(
      srcMesh, src, dstMesh, dst, shape, elementBytes, sameMesh, links,
      /*ownReplicaOnly=*/sameMesh, &sendBound);
  if (!own || !sameMesh || !sendBound)
    return own;
  // The own replicas give every receiver its fewest senders, over the
  // cheapest links: no assignment has a smaller receive side, so only
  // where the send side bounds the step can balancing help.
  std::vector<unsigned> freeAxes;
  sameMeshFreeAxes(srcMesh, src, freeAxes);
  if (numSenderCandidates(srcMesh, freeAxes) == 1)
    return own;
  // Balancing is greedy, so it is kept only where it is cheaper than the
  // receivers' own replicas (the step is then never dearer than that).
  Expected<Exchange> balanced = assignExchange(
      srcMesh, src, dstMesh, dst, shape, elementBytes, sameMesh, links,
      /*ownReplicaOnly=*/false);
  if (!balanced || !(balanced->cost < own->cost)) {
    if (!balanced)
      llvm::consumeError(balanced.takeError());
    return own;
  }
  return balanced;
}

std::vector<int64_t>
dist::planner::exchangeTable(const Exchange &exchange, const Mesh &srcMesh,
                             const Layout &src, const Mesh &dstMesh,
                             const Layout &dst, llvm::ArrayRef<int64_t> shape) {
  const size_t rank = shape.size();
  // Where a global index sits in a device's local buffer along a dim: in
  // the run (segment block) that holds it.
  auto localOf = [&](const Mesh &mesh, const Layout &layout,
                     llvm::ArrayRef<int64_t> coord, unsigned d, int64_t g) {
    for (const BlockPiece &run : blockPieces(
             mesh, layout, shape, d, shardIndex(mesh, layout, d, coord)))
      if (g >= run.global.begin && g < run.global.end)
        return run.localOffset + (g - run.global.begin);
    return int64_t(-1); // not held: computeExchange never asks
  };
  std::vector<int64_t> table;
  table.reserve(exchange.transfers.size() * (2 + 3 * rank));
  for (const ExchangeTransfer &t : exchange.transfers) {
    std::vector<int64_t> sc = srcMesh.coordinateOf(t.sender);
    std::vector<int64_t> rc = dstMesh.coordinateOf(t.receiver);
    table.push_back(srcMesh.rankOfIndex(t.sender));
    table.push_back(dstMesh.rankOfIndex(t.receiver));
    // Each box lies inside one run of the sender and one of the receiver.
    for (unsigned d = 0; d < rank; ++d)
      table.push_back(localOf(srcMesh, src, sc, d, t.box[d].begin));
    for (unsigned d = 0; d < rank; ++d)
      table.push_back(localOf(dstMesh, dst, rc, d, t.box[d].begin));
    for (unsigned d = 0; d < rank; ++d)
      table.push_back(t.box[d].size());
  }
  return table;
}

//===----------------------------------------------------------------------===//
// ExchangeCostEvaluator
//===----------------------------------------------------------------------===//

ExchangeCostEvaluator::ExchangeCostEvaluator(const CostModel &model,
                                             llvm::ArrayRef<int64_t> shape,
                                             int64_t elementBytes)
    : model(model), mesh(model.getMesh()), shape(shape.begin(), shape.end()),
      elementBytes(elementBytes), numAxes(mesh.getNumAxes()),
      numDevices(mesh.getNumDevices()) {
  // Past kMaxExchangeWork devices no exchange is priced (evaluate says it is
  // too large), so nothing per device is kept either: on 2^31 devices that
  // would be 32 GiB (std::bad_alloc).
  if (numDevices > kMaxExchangeWork) {
    numDevices = 0;
    tooLarge = true;
  }
}

void ExchangeCostEvaluator::buildDeviceTables() {
  deviceTablesBuilt = true;
  // Coordinates in index order (semantics §1: the last axis fastest),
  // each device's from the previous one's.
  coords.assign(size_t(numDevices) * numAxes, 0);
  for (int64_t dev = 1; dev < numDevices; ++dev) {
    int64_t *c = &coords[dev * numAxes];
    std::copy(c - numAxes, c, c);
    for (unsigned a = numAxes; a-- > 0;) {
      if (++c[a] < mesh.getAxisSize(a))
        break;
      c[a] = 0;
    }
  }
  axisStride.assign(numAxes, 1);
  for (unsigned a = numAxes; a-- > 1;)
    axisStride[a - 1] = axisStride[a] * mesh.getAxisSize(a);
  linkByMask.resize(size_t(1) << numAxes);
  linkKnown.assign(size_t(1) << numAxes, 0);
  pairBytes.assign(numDevices, 0);
  pairMask.assign(numDevices, 0);
  sendSide.assign(numDevices, 0);
}

ExchangeCostEvaluator::~ExchangeCostEvaluator() = default;

const AxisCostParams &ExchangeCostEvaluator::learnLink(unsigned mask) {
  std::vector<unsigned> axes;
  for (unsigned a = 0; a < numAxes; ++a)
    if (mask & (1u << a))
      axes.push_back(a);
  linkByMask[mask] = model.pointToPointLink(axes);
  linkKnown[mask] = true;
  return linkByMask[mask];
}

void ExchangeCostEvaluator::blockSizes(const Layout &layout,
                                       std::vector<int64_t> &out) const {
  out.resize(shape.size());
  for (unsigned d = 0; d < shape.size(); ++d)
    out[d] = std::max<int64_t>(
        1, dist::mixed_radix::blockSize(shape[d], layout.shardCount(mesh, d)));
}

bool ExchangeCostEvaluator::evaluate(const Layout &src, const Layout &dst,
                                     Result &result) {
  // Block arithmetic of contiguous dims only; interleaved layouts go
  // through computeExchange.
  if (src.hasSegments() || dst.hasSegments() || tooLarge)
    return false;
  for (const Remembered &r : remembered)
    if (r.src == src && r.dst == dst) {
      result = r.result;
      return true;
    }
  if (!priceExchange(src, dst, result))
    return false;
  if (remembered.size() < kRemembered)
    remembered.push_back({src, dst, result});
  else
    remembered[nextRemembered] = {src, dst, result};
  nextRemembered = (nextRemembered + 1) % kRemembered;
  return true;
}

bool ExchangeCostEvaluator::priceExchange(const Layout &src, const Layout &dst,
                                          Result &result) {
  if (!deviceTablesBuilt)
    buildDeviceTables();
  blockSizes(src, srcBlock);
  blockSizes(dst, dstBlock);
  sameMeshFreeAxes(mesh, src, freeAxes);
  const int64_t numCandidates = numSenderCandidates(mesh, freeAxes);
  candidateDigits.resize(size_t(numCandidates) * freeAxes.size());
  candidateDelta.resize(numCandidates);
  candidateMask.resize(numCandidates);
  for (int64_t c = 0; c < numCandidates; ++c) {
    size_t i = 0;
    forEachFreeOffset(mesh, freeAxes, c, [&](unsigned, int64_t k) {
      candidateDigits[c * freeAxes.size() + freeAxes.size() - 1 - i++] = k;
    });
  }
  // Idle axes (of size > 1, splitting no dim of either layout, not
  // partial): moving a device along them changes neither its blocks nor,
  // with every piece from the receiver's own replica, its senders' offsets.
  // That assignment is the same around every idle coordinate, so
  // assignAndPrice prices it on the devices at idle coordinate 0 alone.
  idleAxes.clear();
  idleCopies = 1;
  for (unsigned a = 0; a < numAxes; ++a)
    if (mesh.getAxisSize(a) > 1 && !src.dimOf(a) && !dst.dimOf(a) &&
        !src.isPartial(a)) {
      idleAxes.push_back(a);
      idleCopies *= mesh.getAxisSize(a);
    }
  // As computeExchange: the receiver's own replicas, then (with a choice)
  // the balanced assignment, the cheaper of the two. What a device
  // receives does not depend on who sends it.
  if (!assignAndPrice(src, dst, 1, result))
    return false;
  // The receiver's own replica has the cheapest link to it (it differs on
  // the fewest axes), so the own replicas give every receiver its smallest
  // receive side: when that already bounds the step, no balancing can make
  // it cheaper (and computeExchange keeps the own replicas too).
  Result balanced;
  if (numCandidates > 1 && lastSendBound &&
      assignAndPrice(src, dst, numCandidates, balanced) &&
      balanced.cost < result.cost)
    result.cost = balanced.cost;
  return true;
}

bool ExchangeCostEvaluator::assignAndPrice(const Layout &src, const Layout &dst,
                                           int64_t numCandidates,
                                           Result &result) {
  const size_t rank = shape.size();
  std::fill(sendSide.begin(), sendSide.end(), 0.0);
  result = Result();
  if (numCandidates > 1)
    balancer.reset(numDevices);
  double worstRecv = 0;
  int64_t work = 0;
  // Per dim, the source blocks a receiver's target block overlaps: first
  // block and count, and the overlap lengths are computed on the fly.
  int64_t first[32], count[32], pos[32], tBegin[32], tEnd[32];
  // Own replicas only: one device per idle translation class (see evaluate);
  // every other device receives and sends exactly as its representative.
  const bool representatives = numCandidates == 1 && idleCopies > 1;
  for (int64_t u = 0; u < numDevices; ++u) {
    if (representatives &&
        std::any_of(idleAxes.begin(), idleAxes.end(),
                    [&](unsigned a) { return coords[u * numAxes + a] != 0; }))
      continue;
    int64_t pieces = 1;
    const int64_t *uc = &coords[u * numAxes];
    for (unsigned d = 0; d < rank; ++d) {
      // The receiver's shard index along d (semantics §2).
      const AxisList &axes = dst.dimAxes[d];
      const int64_t t = dist::mixed_radix::compose(
          axes.size(), [&](size_t i) { return uc[axes[i]]; },
          [&](size_t i) { return mesh.getAxisSize(axes[i]); });
      tBegin[d] = std::min(t * dstBlock[d], shape[d]);
      tEnd[d] = std::min((t + 1) * dstBlock[d], shape[d]);
      if (tEnd[d] <= tBegin[d]) {
        pieces = 0;
        break;
      }
      first[d] = tBegin[d] / srcBlock[d];
      count[d] = (tEnd[d] - 1) / srcBlock[d] - first[d] + 1;
      pieces *= count[d];
      pos[d] = 0;
    }
    if (pieces == 0)
      continue;
    work += pieces * numCandidates * (representatives ? idleCopies : 1);
    if (work > kMaxExchangeWork)
      return false;
    touched.clear();
    for (int64_t c = 0; c < numCandidates; ++c) {
      int64_t delta = 0;
      unsigned mask = 0;
      for (size_t i = 0; i < freeAxes.size(); ++i) {
        int64_t k = candidateDigits[c * freeAxes.size() + i];
        if (k == 0)
          continue;
        unsigned axis = freeAxes[i];
        int64_t size = mesh.getAxisSize(axis);
        delta += ((uc[axis] + k) % size - uc[axis]) * axisStride[axis];
        mask |= 1u << axis;
      }
      candidateDelta[c] = delta;
      candidateMask[c] = mask;
    }
    int64_t kept = 0;
    for (int64_t p = 0; p < pieces; ++p) {
      int64_t elements = 1, sender = u;
      unsigned forcedMask = 0;
      for (unsigned d = 0; d < rank; ++d) {
        int64_t block = first[d] + pos[d];
        int64_t lo = std::max(tBegin[d], block * srcBlock[d]);
        int64_t hi = std::min(tEnd[d], (block + 1) * srcBlock[d]);
        elements *= hi - lo;
        for (size_t i = src.dimAxes[d].size(); i-- > 0;) {
          unsigned axis = src.dimAxes[d][i];
          int64_t size = mesh.getAxisSize(axis);
          if (block % size != uc[axis]) {
            sender += (block % size - uc[axis]) * axisStride[axis];
            forcedMask |= 1u << axis;
          }
          block /= size;
        }
      }
      if (sender != u) {
        // The same choice as computeExchange's (SenderBalancer).
        const int64_t bytes = elements * elementBytes;
        int64_t best = sender;
        unsigned bestMask = forcedMask;
        // With one candidate per piece there is no choice, and the loads
        // the balancer keeps are never read.
        if (numCandidates > 1) {
          AxisCostParams bestLink = linkOf(forcedMask);
          double bestIncrement = balancer.increment(sender, u, bestLink, bytes);
          for (int64_t c = 1; c < numCandidates; ++c) {
            int64_t v = sender + candidateDelta[c];
            const unsigned mask = forcedMask | candidateMask[c];
            const AxisCostParams link = linkOf(mask);
            double increment = balancer.increment(v, u, link, bytes);
            if (balancer.better(u, v, increment, best, bestIncrement)) {
              best = v;
              bestMask = mask;
              bestLink = link;
              bestIncrement = increment;
            }
          }
          balancer.assign(best, u, bestLink, bytes);
        }
        if (pairBytes[best] == 0) {
          touched.push_back(best);
          // The axes on which the sender's coordinate differs from the
          // receiver's: the source digits it supplies and the replica's
          // (nonzero) offsets.
          pairMask[best] = bestMask;
        }
        pairBytes[best] += bytes;
      } else {
        kept += elements * elementBytes;
      }
      for (size_t d = rank; d-- > 0;) {
        if (++pos[d] < count[d])
          break;
        pos[d] = 0;
      }
    }
    double recv = 0;
    int64_t received = 0;
    for (int64_t v : touched) {
      const AxisCostParams &link = linkOf(pairMask[v]);
      double seconds = link.alpha + double(pairBytes[v]) * link.beta;
      recv += seconds;
      sendSide[v] += seconds;
      received += pairBytes[v];
      pairBytes[v] = 0;
    }
    worstRecv = std::max(worstRecv, recv);
    result.maxRecvBytes = std::max(result.maxRecvBytes, received);
    result.maxKeptBytes = std::max(result.maxKeptBytes, kept);
  }
  double worstSend = 0;
  for (double s : sendSide)
    worstSend = std::max(worstSend, s);
  // semantics §3b, as computeExchange.
  result.cost =
      std::max(worstRecv, worstSend) + model.localCost(result.maxKeptBytes);
  lastSendBound = worstSend > worstRecv;
  return true;
}

/// The floor of one exchange (see lowerBounds): per device, one smallest
/// alpha per source block its target block overlaps other than its own (a
/// distinct sender each), plus the elements it lacks at the smallest beta;
/// the most over devices.
static double exchangeFloor(const Mesh &mesh, const detail::LayoutBlocks &src,
                            const detail::LayoutBlocks &dst, double alpha,
                            int64_t elementBytes, double beta) {
  double worst = 0;
  detail::forEachBlockCoverage</*Ideal=*/false>(
      mesh, src, dst, [&](const detail::BlockCoverage &c) {
        int64_t senders = c.sourceBlocks - (c.held > 0 ? 1 : 0);
        worst = std::max(worst,
                         double(senders) * alpha +
                             (c.wanted - c.held) * double(elementBytes) * beta);
      });
  return worst;
}

void ExchangeCostEvaluator::lowerBounds(const Layout &src,
                                        llvm::ArrayRef<Layout> dsts,
                                        std::vector<double> &out) {
  out.assign(dsts.size(), 0);
  if (tooLarge)
    return;
  const detail::LayoutBlocks source(mesh, src, shape, /*ideal=*/false);
  for (size_t k = 0; k < dsts.size(); ++k)
    out[k] = exchangeFloor(
        mesh, source, detail::LayoutBlocks(mesh, dsts[k], shape, false),
        model.minLatency(), elementBytes, model.minSecondsPerByte());
}

void ExchangeCostEvaluator::lowerBounds(const Layout &src,
                                        const RedistributeCandidates &dsts,
                                        size_t count,
                                        std::vector<double> &out) {
  out.assign(count, 0);
  if (tooLarge)
    return;
  const detail::LayoutBlocks source(mesh, src, shape, /*ideal=*/false);
  llvm::SmallVector<detail::LayoutBlocks, 2> bases;
  for (const RedistributeCandidates::Family &f : dsts.families)
    bases.emplace_back(mesh, f.base, shape, /*ideal=*/false);
  for (size_t k = 0; k < count; ++k) {
    RedistributeCandidates::Position p = dsts.position(k);
    detail::LayoutBlocks target = bases[p.family];
    if (p.refinement)
      target.appendAxis(mesh, p.refinement->first, p.refinement->second);
    out[k] = exchangeFloor(mesh, source, target, model.minLatency(),
                           elementBytes, model.minSecondsPerByte());
  }
}

double ExchangeCostEvaluator::planBound(const Layout &from,
                                        const Layout &target) {
  const double alpha = model.minLatency(), beta = model.minSecondsPerByte();
  // Partial axes whose values are not final in the target must be reduced
  // by collectives over groups that contain them.
  double reduction = 0;
  for (unsigned a : from.partialAxes)
    if (mesh.getAxisSize(a) > 1 &&
        !(target.isPartial(a) && target.partialKind == from.partialKind))
      reduction += model.axisLatencyBound(a);
  const bool final = reduction == 0;
  double worst = 0;
  if (tooLarge)
    return worst;
  // The search asks with one target throughout.
  if (!planTarget || planTargetLayout != target) {
    planTargetLayout = target;
    planTarget =
        std::make_unique<detail::LayoutBlocks>(mesh, planTargetLayout, shape);
  }
  detail::forEachBlockCoverage(
      mesh, detail::LayoutBlocks(mesh, from, shape), *planTarget,
      [&](const detail::BlockCoverage &c) {
        // Missing elements on blocks of semantics §2 and on ideal blocks
        // (see ReportedLowerBound.cpp); the smaller of the two.
        const double held = final ? c.held : 0;
        double missing = std::min(c.wanted - held,
                                  c.wantedIdeal - (final ? c.heldIdeal : 0));
        if (missing < 1e-2)
          missing = 0;
        double latency = reduction;
        if (final) {
          int64_t others = c.sourceBlocks - (held > 0 ? 1 : 0);
          // ceil(log2(others + 1)) rounds of doubling reach them all: for
          // an integer that is its bit width (exact, and no libm call).
          if (others > 0)
            latency = alpha * double(llvm::bit_width(uint64_t(others)));
        }
        worst =
            std::max(worst, latency + missing * double(elementBytes) * beta);
      });
  return worst;
}
