//===- Redistribute.h - point-to-point exchanges (§3) -----------*- C++ -*-===//
//
// A `redistribute` step moves a tensor from one layout to another (on the
// same mesh or onto another mesh) with point-to-point messages: every device
// receives exactly the elements of its target block it does not already
// hold, each from one device that holds it. computeExchange works out who
// sends which box to whom, and what the step costs; the planner prices the
// move with it and the compiler lowers the move from the very same table, so
// the IR and the plan agree on every byte.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PLANNER_REDISTRIBUTE_H
#define DIST_PLANNER_REDISTRIBUTE_H

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace dist::planner {
namespace detail {
class LayoutBlocks;
} // namespace detail
struct RedistributeCandidates;

/// One box of the global tensor sent from a source device to a target
/// device. Devices are row-major linear indices in their own mesh.
struct ExchangeTransfer {
  int64_t sender = 0;
  int64_t receiver = 0;
  std::vector<DimRange> box; // global indices, never empty
  int64_t bytes = 0;
  /// The sender and the receiver are the same world rank: a local copy,
  /// which is not wire traffic (priced at the local copy rate, semantics
  /// §3b, and free without one).
  bool local = false;
};

struct Exchange {
  /// Grouped by receiver (increasing), then by box in row-major order of
  /// the source blocks it intersects. Deterministic.
  std::vector<ExchangeTransfer> transfers;
  /// semantics §3: max over world ranks of max(receive side, send side), each
  /// side the sum over its peers of alpha + bytes * beta; plus (semantics
  /// §3b) the local copy rate times maxKeptBytes.
  double cost = 0;
  /// The most bytes one rank receives from other ranks (wire traffic).
  int64_t maxRecvBytes = 0;
  /// The most bytes one rank keeps from its old buffer (its local copies).
  int64_t maxKeptBytes = 0;
};

/// Prices one message between two devices (linear indices in the source
/// and the target mesh): alpha and beta of the link they use.
class LinkCosts {
public:
  virtual ~LinkCosts();
  virtual AxisCostParams link(int64_t sender, int64_t receiver) const = 0;
  /// Seconds per byte a rank copies within its own memory (semantics §3b
  /// "local"): the price of every byte it keeps.
  virtual double localSecondsPerByte() const = 0;
};

/// Within one mesh: the maxima of alpha and beta over the axes on which the
/// two coordinates differ, read from the cost model.
class SameMeshLinks final : public LinkCosts {
public:
  explicit SameMeshLinks(const CostModel &model) : model(model) {}
  AxisCostParams link(int64_t sender, int64_t receiver) const override;
  double localSecondsPerByte() const override {
    return model.localSecondsPerByte();
  }

private:
  const CostModel &model;
};

/// Between two meshes: one `transfer` link for every pair (semantics §3a).
class TransferLinks final : public LinkCosts {
public:
  /// `localSecondsPerByte`: the local copy rate of the ranks both meshes
  /// share (semantics §3b).
  TransferLinks(AxisCostParams transfer, double localSecondsPerByte)
      : transfer(transfer), local(localSecondsPerByte) {}
  AxisCostParams link(int64_t, int64_t) const override { return transfer; }
  double localSecondsPerByte() const override { return local; }

private:
  AxisCostParams transfer;
  double local;
};

/// semantics §3 redistribute, the senders: each source device's send load
/// while an exchange is assigned, in seconds as the step prices it (alpha
/// once per receiver it serves, plus bytes * beta), and the load of the
/// receiver being served (receivers are served one after another).
/// Candidates for a piece are offered in a fixed order and the first one
/// that `better` prefers to every earlier one wins, so computeExchange and
/// ExchangeCostEvaluator, offering the same candidates in the same order,
/// choose the same senders.
class SenderBalancer final {
public:
  void reset(int64_t numSenders) {
    load.assign(size_t(numSenders), 0.0);
    lastReceiver.assign(size_t(numSenders), -1);
    receiver = -1;
    receiverLoad = 0;
  }
  /// What sending `bytes` more to `to` over `link` adds to v's load (and
  /// to the receiver's).
  double increment(int64_t v, int64_t to, const AxisCostParams &link,
                   int64_t bytes) const {
    return (lastReceiver[v] == to ? 0.0 : link.alpha) +
           double(bytes) * link.beta;
  }
  void assign(int64_t v, int64_t to, const AxisCostParams &link,
              int64_t bytes) {
    double inc = increment(v, to, link, bytes);
    load[v] += inc;
    lastReceiver[v] = to;
    if (to != receiver) {
      receiver = to;
      receiverLoad = 0;
    }
    receiverLoad += inc;
  }
  /// The candidate to prefer of two for a piece `to` receives: the one
  /// after which the busier of sender and receiver is less busy, then the
  /// one whose own load grows to less. A replica over a dearer link (it
  /// differs from the receiver on more axes) thus serves only to relieve a
  /// sender busier than the receiver: where every replica's link costs the
  /// same this is the least loaded one, and where the links differ a
  /// little (calibrated axes) the load still decides.
  bool better(int64_t to, int64_t v, double inc, int64_t best,
              double bestInc) const {
    double r = to == receiver ? receiverLoad : 0.0;
    double mine = std::max(load[v], r) + inc;
    double theirs = std::max(load[best], r) + bestInc;
    if (mine != theirs)
      return mine < theirs;
    return load[v] + inc < load[best] + bestInc;
  }

private:
  std::vector<double> load;
  std::vector<int64_t> lastReceiver;
  int64_t receiver = -1;
  double receiverLoad = 0;
};

/// Exchanges past this many (receiver, box, candidate sender) visits are
/// refused with an error instead of taking seconds: the search then simply
/// has no redistribute edge.
constexpr int64_t kMaxExchangeWork = int64_t(1) << 24;

/// Works out the exchange from `src` on `srcMesh` to `dst` on `dstMesh`
/// (pass the same mesh twice for a same-mesh step, `sameMesh` = true).
///  - Same mesh: the partial axes and kind must be equal, and sender and
///    receiver agree on the partial axes. The receiver takes a piece it
///    holds from itself; else from a replica (the free axes: neither
///    splitting a source dim nor partial) chosen by SenderBalancer (the
///    busier of sender and receiver least busy after it, then the least
///    loaded sender); the receiver's own coordinate first on ties. At
///    most 64 replicas per piece are considered, nearest offsets first.
///    The balancing is greedy, so it is kept only when the step is then
///    cheaper than with every piece from the receiver's own replica.
///  - Across meshes: the source must not be partial (reduce first) and the
///    target is not partial. Among the replicas holding a box, a device on
///    the receiver's own world rank is taken (a free local copy), else the
///    least loaded (SenderBalancer), else the lowest index.
/// Errors: mismatched partial axes, a partial cross-mesh source, or an
/// exchange larger than kMaxExchangeWork.
llvm::Expected<Exchange> computeExchange(const Mesh &srcMesh, const Layout &src,
                                         const Mesh &dstMesh, const Layout &dst,
                                         llvm::ArrayRef<int64_t> globalShape,
                                         int64_t elementBytes, bool sameMesh,
                                         const LinkCosts &links);

/// The cost and the largest receive of a same-mesh redistribute, as
/// computeExchange prices it, without building the transfer list: the search
/// prices many candidate steps per state, so this reuses its buffers and
/// allocates nothing per call. Not thread-safe (one per search).
class ExchangeCostEvaluator {
public:
  ExchangeCostEvaluator(const CostModel &model,
                        llvm::ArrayRef<int64_t> globalShape,
                        int64_t elementBytes);
  ~ExchangeCostEvaluator();
  struct Result {
    double cost = 0;
    int64_t maxRecvBytes = 0;
    int64_t maxKeptBytes = 0;
  };
  /// Same preconditions as computeExchange with sameMesh; layouts must be
  /// valid for the mesh and shape. False when the exchange is larger than
  /// kMaxExchangeWork. The last few answers are remembered: the planner
  /// prices the chosen step again when it replays the plan, with the same
  /// evaluator.
  bool evaluate(const Layout &src, const Layout &dst, Result &result);
  /// A lower bound on every plan (any moves) from `from` to `target`, in
  /// O(devices x rank): partial axes that must still be reduced pay their
  /// collective latency bound; otherwise a device that needs data from m
  /// other devices' blocks pays alpha * ceil(log2(m + 1)) (one step of
  /// cost >= k alpha merges what at most k + 1 devices know), and every
  /// element it lacks the smallest beta.
  double planBound(const Layout &from, const Layout &target);
  /// Lower bounds on the cost of the exchanges from `src` to each of `dsts`,
  /// in O(devices x rank) each: per device, one smallest alpha per source
  /// block it takes data from plus the elements it lacks at the smallest
  /// beta; the most over devices. (The source's shard indices are computed
  /// once.)
  void lowerBounds(const Layout &src, llvm::ArrayRef<Layout> dsts,
                   std::vector<double> &out);
  /// The same for the first `count` candidates of a candidate set.
  void lowerBounds(const Layout &src, const RedistributeCandidates &dsts,
                   size_t count, std::vector<double> &out);

private:
  /// Per dim, the block size of `layout` (at least 1).
  void blockSizes(const Layout &layout, std::vector<int64_t> &out) const;
  const CostModel &model;
  const Mesh &mesh;
  std::vector<int64_t> shape;
  int64_t elementBytes;
  unsigned numAxes;
  int64_t numDevices;    // 0 when tooLarge: the loops over devices do nothing
  bool tooLarge = false; // more than kMaxExchangeWork devices
  /// The per-device tables below are built by the first exchange priced:
  /// the bounds do not read them, and many plans price none.
  bool deviceTablesBuilt = false;
  void buildDeviceTables();
  std::vector<int64_t> coords;     // numDevices x numAxes
  std::vector<int64_t> axisStride; // linear-index stride of each axis
  std::vector<AxisCostParams> linkByMask;
  std::vector<uint8_t> linkKnown;
  // Scratch, reused across calls.
  std::vector<int64_t> srcBlock, dstBlock;
  std::vector<int64_t> pairBytes, touched;
  std::vector<unsigned> pairMask; // per touched sender, see assignAndPrice
  std::vector<double> sendSide;
  // The replicas a piece may come from (see computeExchange): per candidate,
  // its offset on each free axis, and per receiver its index delta and the
  // axes on which it leaves the receiver's coordinate.
  std::vector<unsigned> freeAxes;
  std::vector<int64_t> candidateDigits, candidateDelta;
  std::vector<unsigned> candidateMask;
  // The idle axes of the exchange being priced and the number of devices
  // that share one's blocks along them (see evaluate).
  std::vector<unsigned> idleAxes;
  int64_t idleCopies = 1;
  SenderBalancer balancer;
  /// The link between two devices that differ on the axes of `mask`
  /// (pointToPointLink), asked of the model once per mask.
  const AxisCostParams &linkOf(unsigned mask) {
    return linkKnown[mask] ? linkByMask[mask] : learnLink(mask);
  }
  const AxisCostParams &learnLink(unsigned mask);
  /// evaluate's work, without the memory.
  bool priceExchange(const Layout &src, const Layout &dst, Result &result);
  /// One assignment of senders (the first `numCandidates` replicas per
  /// piece) and its price; false when too large.
  bool assignAndPrice(const Layout &src, const Layout &dst,
                      int64_t numCandidates, Result &result);
  /// The last assignAndPrice's send side exceeded its receive side.
  bool lastSendBound = false;
  /// The last kRemembered exchanges priced (a ring), see evaluate.
  struct Remembered {
    Layout src, dst;
    Result result;
  };
  static constexpr unsigned kRemembered = 8;
  std::vector<Remembered> remembered;
  unsigned nextRemembered = 0;
  /// planBound's target, worked out once (the search asks with one target).
  Layout planTargetLayout;
  std::unique_ptr<detail::LayoutBlocks> planTarget;
};

/// The layouts a redistribute from `from` may go to when the plan's target
/// is `target` (same mesh), in two families, each a base and the base with
/// one more axis it replicates appended to one of its dims:
///  - R = the target's dims without `from`'s partial axes, partial over
///    `from`'s partial axes; a refinement of R is then all-gathered (each
///    device receives a 1/p share over the slow links and the group
///    completes it over a faster axis);
///  - where R splits a dim and `from` holds no partial values (over axes
///    of size > 1), the replicated layout (the target's leading axes of
///    size 1 kept) and every single split of it: the family of a plan to a
///    full replica, so that from such a source a plan is never dearer than
///    the detour through one (an exchange to one split, gathers, then
///    slices; docs/planner.md). From partial states (after or before
///    reductions) it is left out: there it found no cheaper plan in the
///    benchmarks and cost a fifth more search on 6-D meshes.
/// `from` itself and repeats are never among them.
///
/// Kept as bases and refinements, not as layouts: the search bounds every
/// candidate but builds (allocates) only those it prices.
struct RedistributeCandidates {
  struct Family {
    /// The base (canonical).
    Layout base;
    /// The base is a candidate (not `from`, not a repeat); it comes first.
    bool withBase = false;
    /// (axis, dim): the base with `axis` appended to `dim`, in order.
    std::vector<std::pair<unsigned, unsigned>> refinements;

    size_t size() const { return (withBase ? 1 : 0) + refinements.size(); }
  };
  /// R's family, then the full replica's (where it is offered, above).
  llvm::SmallVector<Family, 2> families;

  size_t size() const {
    size_t n = 0;
    for (const Family &f : families)
      n += f.size();
    return n;
  }
  /// Where candidate i (0 <= i < size()) comes from: its family's index,
  /// and its refinement of the family's base, or null when it is the base.
  struct Position {
    unsigned family = 0;
    const std::pair<unsigned, unsigned> *refinement = nullptr;
  };
  Position position(size_t i) const;
  /// Candidate i (0 <= i < size()).
  Layout layout(size_t i) const;
};
RedistributeCandidates redistributeCandidateSet(const Mesh &mesh,
                                                const Layout &from,
                                                const Layout &target);
/// Every candidate of redistributeCandidateSet, built.
std::vector<Layout> redistributeCandidates(const Mesh &mesh, const Layout &from,
                                           const Layout &target);

/// The exchange as the runtime's distRtExchange table: per transfer,
/// 2 + 3 * rank integers (sender and receiver world ranks, the box's offset
/// in the sender's local buffer, its offset in the receiver's, its
/// extents). Local copies are included (sender == receiver rank).
std::vector<int64_t> exchangeTable(const Exchange &exchange,
                                   const Mesh &srcMesh, const Layout &src,
                                   const Mesh &dstMesh, const Layout &dst,
                                   llvm::ArrayRef<int64_t> globalShape);

/// The transfer parameters between two meshes when a topology gives none:
/// the slowest axis (largest alpha and largest beta, over axes of size > 1)
/// of either mesh's model (semantics §3a).
AxisCostParams defaultTransferParams(const CostModel &srcModel,
                                     const CostModel &dstModel);
/// The local copy rate of a cross-mesh transfer's kept bytes (a rank in both
/// meshes copies what it keeps): the larger of the two models' (semantics
/// §3b).
inline double transferLocalRate(const CostModel &srcModel,
                                const CostModel &dstModel) {
  return std::max(srcModel.localSecondsPerByte(),
                  dstModel.localSecondsPerByte());
}

} // namespace dist::planner

#endif // DIST_PLANNER_REDISTRIBUTE_H
