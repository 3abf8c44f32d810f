//===- OptimalSearch.cpp - Exact A* over layouts --------------------------===//
//
// States are packed layouts (plus the open slice run, see SearchSpace.h);
// edges are the moves SearchSpace generates, weighted by the cost model; the
// heuristic is LowerBound, which never overestimates, and on hard requests
// the larger of it and AbstractBound (also admissible). A* with an admissible
// heuristic returns a cheapest path once the goal is popped; because the
// bound is not guaranteed consistent, a state whose cost improves after it
// was expanded is reopened.
//
// Ties. Plans are ranked by cost (compared with costTolerance), then by
// number of steps, then by discovery order, which is fixed by the order in
// which moves are generated. Popping continues past the first goal while
// the queue still holds entries whose f is within tolerance of the best
// cost and whose step bound is smaller, so a plan with fewer steps and
// (numerically) equal cost is not missed.
//
//===----------------------------------------------------------------------===//

#include "Search/AdmissibleHeuristic.h"
#include "Search/PatternDatabaseHeuristic.h"
#include "Search/Search.h"
#include "Search/SearchSpace.h"

#include "dist/Planner/Redistribute.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <queue>

using namespace dist::planner;
using namespace dist::planner::detail;

namespace {
thread_local OptimalSearchOptions threadSearchOptions;
} // namespace

const OptimalSearchOptions &OptimalSearchOptions::threadDefaults() {
  return threadSearchOptions;
}

ScopedSearchOptions::ScopedSearchOptions(const OptimalSearchOptions &options)
    : saved(threadSearchOptions) {
  threadSearchOptions = options;
}

ScopedSearchOptions::~ScopedSearchOptions() { threadSearchOptions = saved; }

namespace {
constexpr uint32_t kNoNode = ~uint32_t(0);

uint64_t hashOf(const StateKey &k) {
  // splitmix64 finaliser over both words: every input bit reaches the low
  // bits the table indexes with.
  uint64_t h = k.slots ^ (uint64_t(k.extra) * 0x9E3779B97F4A7C15ull);
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

/// The best known cost of each state, next to its key, so that the common
/// case -- an edge to a known state that it does not improve -- touches one
/// cache line. Open addressing with linear probing; entries are never
/// erased except the one just inserted (on overflow). The search computes
/// the hashes of a whole expansion first and prefetches their buckets, so
/// the (mostly cache-missing) probes overlap.
///
/// The table lives in the thread's scratch memory (see ScratchMemory) and
/// starts each search as the last one left it: the buckets that search
/// filled are emptied, one by one, instead of writing every bucket of a
/// table most small searches barely touch.
class StateIndex {
public:
  struct Known {
    double g;
    uint32_t node;
    uint16_t steps;
  };
  struct Bucket {
    uint64_t slots;
    uint32_t extra; // kEmpty: free
    uint32_t node;
    double g;
    uint16_t steps;
  };
  /// The table and the positions of its filled buckets, kept from one
  /// search to the next.
  struct Storage {
    std::vector<Bucket> buckets;
    std::vector<uint32_t> filled;
  };

  explicit StateIndex(Storage &storage)
      : buckets(storage.buckets), filled(storage.filled) {
    if (buckets.size() < kInitialBuckets || buckets.size() > kKeepBuckets) {
      buckets.assign(kInitialBuckets, emptyBucket());
    } else {
      for (uint32_t i : filled)
        buckets[i].extra = kEmpty;
    }
    filled.clear();
  }

  void prefetch(uint64_t hash) const {
    __builtin_prefetch(&buckets[hash & (buckets.size() - 1)]);
  }
  /// Returns the bucket of `key` and whether it was inserted (with `value`).
  std::pair<Bucket *, bool> tryEmplace(const StateKey &key, uint64_t hash,
                                       const Known &value) {
    size_t mask = buckets.size() - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
      Bucket &b = buckets[i];
      if (b.extra == kEmpty) {
        if ((filled.size() + 1) * 4 > buckets.size() * 3) {
          grow();
          return tryEmplace(key, hash, value);
        }
        b = Bucket{key.slots, key.extra, value.node, value.g, value.steps};
        filled.push_back(uint32_t(i));
        return {&b, true};
      }
      if (b.slots == key.slots && b.extra == key.extra)
        return {&b, false};
    }
  }
  /// Removes the bucket tryEmplace just inserted (nothing was inserted
  /// after it, so no probe sequence passes through it yet).
  void eraseLast(Bucket *b) {
    b->extra = kEmpty;
    filled.pop_back();
  }

private:
  // A key's extra uses bits 0..16 only (kind, run flag, dim, start).
  static constexpr uint32_t kEmpty = ~uint32_t(0);
  static constexpr size_t kInitialBuckets = 1024;
  // Keep what a typical hard search needs, not what a huge one took.
  static constexpr size_t kKeepBuckets = size_t(1) << 18;
  static Bucket emptyBucket() { return Bucket{0, kEmpty, 0, 0, 0}; }
  void grow() {
    std::vector<Bucket> old(buckets.size() * 2, emptyBucket());
    old.swap(buckets);
    size_t mask = buckets.size() - 1;
    for (uint32_t &at : filled) {
      const Bucket &b = old[at];
      size_t i = hashOf({b.slots, b.extra}) & mask;
      while (buckets[i].extra != kEmpty)
        i = (i + 1) & mask;
      buckets[i] = b;
      at = uint32_t(i);
    }
  }
  std::vector<Bucket> &buckets;
  std::vector<uint32_t> &filled;
};

/// relabel[a] = the axis that plays a's part after relabelling.
using Relabeling = std::array<uint8_t, kMaxMeshAxes>;

Relabeling identityRelabeling() {
  Relabeling r;
  for (unsigned a = 0; a < kMaxMeshAxes; ++a)
    r[a] = a;
  return r;
}

/// Axes that are interchangeable for the rest of the search: equal size,
/// interchangeable in the cost model, and treated alike by the target (both
/// replicated in it, or both partial in it). Swapping two of them maps any
/// plan to a plan of equal cost and equal length, and fixes the target, so
/// layouts that differ only by such swaps have the same cost to go and are
/// searched as one canonical state: within each class, slots are sorted.
class Symmetry {
public:
  Symmetry(const Mesh &mesh, const CostModel &model,
           const PackedLayout &target) {
    unsigned numAxes = mesh.getNumAxes();
    std::vector<bool> taken(numAxes, false);
    for (unsigned a = 0; a < numAxes; ++a) {
      if (taken[a] || isDimSlot(target.slot[a]))
        continue;
      std::vector<uint8_t> cls = {uint8_t(a)};
      for (unsigned b = a + 1; b < numAxes; ++b)
        if (!taken[b] && target.slot[b] == target.slot[a] &&
            mesh.getAxisSize(b) == mesh.getAxisSize(a) &&
            model.axesInterchangeable(a, b)) {
          cls.push_back(b);
          taken[b] = true;
        }
      if (cls.size() > 1)
        classes.push_back(cls);
    }
  }

  /// Per axis, the axes of its class below it (see forEachPermuteEdge).
  std::array<uint8_t, kMaxMeshAxes> lowerTwins() const {
    std::array<uint8_t, kMaxMeshAxes> masks{};
    for (const std::vector<uint8_t> &cls : classes)
      for (size_t i = 1; i < cls.size(); ++i)
        masks[cls[i]] = masks[cls[i - 1]] | uint8_t(1u << cls[i - 1]);
    return masks;
  }

  /// Canonicalizes `layout` in place and returns the relabeling applied.
  Relabeling canonicalize(PackedLayout &layout) const {
    Relabeling r = identityRelabeling();
    for (const std::vector<uint8_t> &cls : classes) {
      // (slot, axis) pairs sorted by slot; the i-th smallest slot goes to
      // the i-th axis of the class.
      std::pair<uint8_t, uint8_t> pairs[kMaxMeshAxes];
      unsigned n = cls.size();
      // Insertion sort: at most 8 entries.
      for (unsigned i = 0; i < n; ++i) {
        std::pair<uint8_t, uint8_t> p = {layout.slot[cls[i]], cls[i]};
        unsigned j = i;
        for (; j > 0 && p < pairs[j - 1]; --j)
          pairs[j] = pairs[j - 1];
        pairs[j] = p;
      }
      for (unsigned i = 0; i < n; ++i) {
        layout.slot[cls[i]] = pairs[i].first;
        r[pairs[i].second] = cls[i];
      }
    }
    return r;
  }

private:
  std::vector<std::vector<uint8_t>> classes;
};

PackedLayout relabelLayout(const PackedLayout &layout, const Relabeling &r,
                           unsigned numAxes) {
  PackedLayout out = layout;
  for (unsigned a = 0; a < numAxes; ++a)
    out.slot[r[a]] = layout.slot[a];
  return out;
}

Relabeling inverse(const Relabeling &r, unsigned numAxes) {
  Relabeling inv = identityRelabeling();
  for (unsigned a = 0; a < numAxes; ++a)
    inv[r[a]] = a;
  return inv;
}

struct Node {
  SearchState state; // canonical (see Symmetry)
  PackedMove move;   // the move from `parent`, in the parent's frame
  /// The move's result, relabelled into this state: relabel[axis in the
  /// parent's frame] = axis here.
  Relabeling relabel;
  uint32_t parent = kNoNode;
  uint32_t version = 0;
  double g = 0;
  double h = 0; // the latency bound until hFull, then the full bound
  // LowerBound::Latency::classOnly and classBandwidth: bounds for the
  // permutes out of this state (see pushPermutes).
  double classLatency = 0, classBandwidth = 0;
  int64_t bytes = 0;
  uint16_t steps = 0;
  /// What the incoming move (of every equally good path seen) leaves out of
  /// the moves generated next; see OrderMark.
  OrderMark order;
  bool hFull = false;
  /// Its best path from the source is slices only (see "Undoing free
  /// slices" below).
  bool sliceOnly = false;
  /// h includes the AbstractBound (once the search has built it).
  bool hAbstract = false;
  bool closed = false;
  /// The permutes out of this state were generated; its redistribute
  /// edges were bounded.
  bool permutesDone = false, redistributesDone = false;
  /// With redistribute allowed: a bound on every plan from here (the
  /// reported bound, which holds for point-to-point steps too); the
  /// collective-only bound `h` is capped by it (see redistributeCap).
  double hCap = std::numeric_limits<double>::infinity();
  /// hCap is redistributeCap's, not yet the cheap one inherited from the
  /// parent (its cap less the edge's cost: the cost to go never drops by
  /// more than the edge costs); computed when the state reaches the front.
  bool hCapFull = true;
};

/// The edges of one expansion (see searchOptimal).
struct Pending {
  Edge edge;
  SearchState next; // canonical
  Relabeling relabel;
  StateKey key;
  uint64_t hash;
  /// The bound's latency terms of `next`, when already computed.
  bool hasLatency;
  LowerBound::Latency latency;
};

/// What an entry of the open queue asks for when it reaches the front.
enum class Tier : uint8_t {
  /// Expand the node: its collective moves (permutes excepted).
  Expand,
  /// Generate the permutes out of the node.
  Permutes,
  /// Bound the node's redistribute edges, one entry per candidate.
  RedistributeBounds,
  /// Price and relax the redistribute edge to `candidate`.
  Redistribute,
};

struct Entry {
  double f;
  uint32_t stepBound; // steps so far + (0 at the target layout, else 1)
  uint32_t seq;
  uint32_t node;
  uint32_t version;
  Tier tier;
  uint8_t candidate = 0;
  /// std::priority_queue pops the greatest; we want the smallest
  /// (f, stepBound, seq).
  bool operator<(const Entry &o) const {
    if (f != o.f)
      return f > o.f;
    if (stepBound != o.stepBound)
      return stepBound > o.stepBound;
    return seq > o.seq;
  }
};
/// The edges of one expansion in borrowed storage whose elements are
/// overwritten, not constructed again, from one expansion to the next (a
/// Pending is large, and zeroing it was a few percent of a hard search).
class PendingEdges {
public:
  explicit PendingEdges(std::vector<Pending> &storage) : storage(storage) {}
  void clear() { count = 0; }
  /// The next element, every field of it to be assigned by the caller.
  Pending &add() {
    if (count == storage.size())
      storage.emplace_back();
    return storage[count++];
  }
  Pending &back() { return storage[count - 1]; }
  const Pending *begin() const { return storage.data(); }
  const Pending *end() const { return storage.data() + count; }

private:
  std::vector<Pending> &storage;
  size_t count = 0;
};

/// A priority queue on a borrowed vector.
class OpenQueue {
public:
  explicit OpenQueue(std::vector<Entry> &heap) : heap(heap) { heap.clear(); }
  bool empty() const { return heap.empty(); }
  const Entry &top() const { return heap.front(); }
  void push(const Entry &e) {
    heap.push_back(e);
    std::push_heap(heap.begin(), heap.end());
  }
  void pop() {
    std::pop_heap(heap.begin(), heap.end());
    heap.pop_back();
  }

private:
  std::vector<Entry> &heap;
};

/// Per-thread memory the optimal search reuses across calls. A lease marks
/// it taken, so that a nested call (none today) would use its own.
struct ScratchMemory {
  std::vector<Node> nodes;
  std::vector<Entry> open;
  std::vector<Pending> pending;
  StateIndex::Storage index;
  bool taken = false;

  class Lease {
  public:
    explicit Lease(ScratchMemory &m) : m(m) { m.taken = true; }
    ~Lease() {
      // Keep what a typical hard search needs, not what a huge one took.
      if (m.nodes.capacity() > kKeepNodes)
        std::vector<Node>().swap(m.nodes);
      if (m.open.capacity() > 4 * kKeepNodes)
        std::vector<Entry>().swap(m.open);
      m.taken = false;
    }

  private:
    ScratchMemory &m;
  };
  static constexpr size_t kKeepNodes = size_t(1) << 16;
};

ScratchMemory &threadScratchMemory() {
  thread_local ScratchMemory memory;
  return memory;
}
} // namespace

namespace {

/// One A* search of one request (see the file comment). The constructor
/// sets up the bounds and the root; run() searches and returns the moves.
class OptimalSearch {
public:
  OptimalSearch(const PlanRequest &request, const CostModel &model,
                SearchStats *stats, const OptimalSearchOptions &options,
                ExchangeCostEvaluator *exchange);
  llvm::Expected<std::vector<Move>> run();

private:
  struct ClassVisit {
    double g;
    unsigned steps;
    uint32_t node;
  };

  // Bounds and queue entries.
  double redistributeCap(const SearchState &state);
  double permuteF(const Node &n) const;
  double abstractH(const SearchState &state) const;
  void push(uint32_t id);
  void pushPermutes(uint32_t id);
  void addRoot();

  // Edges: collected for one expansion, then relaxed in generation order.
  bool undoesFreeSlices(const Edge &edge) const;
  void collect(const Edge &edge);
  void relax(uint32_t parent, double g, uint16_t steps, const Pending &p);
  void addChild(uint32_t parent, double g2, uint16_t steps2, const Pending &p);
  void setPath(Node &child, uint32_t parent, double g2, uint16_t steps2,
               const Pending &p) const;
  void relaxKnown(StateIndex::Bucket &known, uint32_t parent, double g2,
                  uint16_t steps2, const Pending &p);

  // One method per tier.
  bool isStale(const Entry &e) const;
  void boundRedistributes(const Entry &e);
  void priceRedistribute(const Entry &e);
  void expandPermutes(const Entry &e);
  void expand(const Entry &e);
  void buildAbstractBoundIfWorthIt(const Entry &e);
  bool raiseBound(const Entry &e);

  // The answer.
  llvm::Error failure(bool outOfTime) const;
  std::vector<Move> movesToBest() const;

  const PlanRequest &request;
  const CostModel &model;
  SearchStats *stats;
  const OptimalSearchOptions &options;
  const Mesh &mesh;
  const unsigned numAxes, rank;
  const PackedLayout source, target;
  SearchSpace space;
  /// Exact gathers (reduce-scatters) on different dims are generated in
  /// increasing dim order only (see OrderMark) when the model says the
  /// orders cost the same; a peak limit can tell them apart, so then every
  /// order is searched.
  const bool ordered;
  LowerBound bound;
  /// A permute moves a whole buffer, unless it only relabels size-1 axes
  /// (no coordinate changes): then it is free.
  bool sizeOneAxes = false;
  double permuteLatency = 0, permutePerByte = 0;
  /// When every (coordinate-changing) permute of a buffer costs the same,
  /// all members of a permute class are one price away from each other: the
  /// permutes out of the class need generating only from its cheapest member
  /// (the first whose permutes come to the front; a later one is no better).
  bool uniformPermutes = false;
  std::map<std::vector<int64_t>, ClassVisit> permutedClasses;

  // The node array and the queue keep their memory from one search to the
  // next on the same thread (page faults were a few percent of a search).
  ScratchMemory own;
  ScratchMemory &memory;
  ScratchMemory::Lease lease;
  std::vector<Node> &nodes;
  StateIndex index;
  OpenQueue open;
  uint32_t seq = 0;

  // Redistribute (semantics §3, point-to-point) goes from a state to the
  // layouts redistributeCandidates names. The plans searched are the
  // collective ones and those of the form: partial reductions
  // (reduce_scatter, all_reduce), one redistribute, then any collectives.
  // (Slices before a redistribute cannot make it cheaper: it sends only
  // what each device lacks, from wherever it is held.) A state records
  // whether a redistribute may still come (SearchState::pointToPointClosed).
  // After it can't, only collectives remain and the collective bounds below
  // (LowerBound, AbstractBound, the permute floors) hold as they are;
  // before, they are capped by ExchangeCostEvaluator::planBound, which holds
  // for any sequence of moves. The search is exact over that family.
  const bool allowRedistribute;
  std::optional<ExchangeCostEvaluator> ownExchangeCosts;
  ExchangeCostEvaluator &exchangeCosts;
  std::vector<double> floors;
  /// Per node, the redistribute targets its RedistributeBounds entry
  /// bounded, which its Redistribute entries (one per target) price: a
  /// node's state never changes.
  llvm::DenseMap<uint32_t, RedistributeCandidates> redistributeTargets;
  Layout targetLayout;
  /// Layouts unpacked for the exchange bounds and prices, their memory kept
  /// from one pop to the next.
  Layout capLayout, fromLayout;

  // Permutes are many (every layout with the same shard counts) and rarely
  // on the best path, so they are generated only when an entry that bounds
  // them all reaches the front: the cheapest possible permute of this
  // buffer plus the latency bound, whose class part permutes do not change.
  // (Holding back the targets with a misplaced axis behind a second entry
  // was tried: their bound is weak, so that entry came to the front in the
  // hard searches anyway and the permutes were enumerated twice; keeping
  // the targets compact until they reach the front cost more in heap work
  // than it saved.)
  // Once a request has proved hard (abstractBoundAfter expansions), the
  // search also uses the abstract distances (PatternDatabaseHeuristic.h),
  // when they see more than the closed form at the source: the larger of
  // two admissible bounds is admissible, and improved states are reopened,
  // so switching in the middle keeps the search exact. States queued before
  // keep their smaller bound until they reach the front, where it is raised
  // (and they go back in line if it grew).
  std::optional<AbstractBound> abstract;
  bool abstractPossible;
  size_t expansions = 0;
  double rootBound = -1; // the closed form at the source, once needed

  Symmetry symmetry;
  /// Permute targets that the symmetry relabels into one another are one
  /// state, reached at one price when every permute costs the same: only
  /// the first of them in enumeration order (the one the search would keep)
  /// is generated.
  std::array<uint8_t, kMaxMeshAxes> twinMasks;
  const uint8_t *permuteTwins;

  uint32_t best = kNoNode;
  double bestCost = std::numeric_limits<double>::infinity();
  unsigned bestSteps = ~0u;
  bool overflow = false;
  uint64_t edges = 0;

  /// The edges of one expansion, canonicalised and hashed up front so that
  /// their index buckets can be prefetched; relaxed afterwards in
  /// generation order (exactly as if each were relaxed when generated).
  PendingEdges pending;
  /// Whether the state being expanded is past its redistribute (the
  /// generators do not carry the flag).
  bool expandingClosed;

  // Undoing free slices. Where slices are free (no local copy price, no
  // peak limit), a state reached by slices alone holds the source's dim
  // lists followed by the axes those slices added. An all_gather or
  // all_to_all that only moves added axes (the minor-most ones) leads to a
  // layout the same slices, minus those axes or onto the other dim, reach
  // at no cost: the slices on the other dims as before, and on each changed
  // dim one slice run, which is a valid step when its blocks nest (checked
  // below; a gather's or all_to_all's own nesting covers the dim it joins).
  // Such an edge costs more than the free path to the same layout (and
  // whatever follows it there follows the free path too), so no optimal
  // plan takes it: it is not generated. The expanding state's view and
  // shard counts are kept in freeView / freeShards while it qualifies.
  const bool freeSlices;
  bool expandingFree = false;
  DimView freeView;
  int64_t freeShards[kMaxSearchRank];
  uint8_t sourceLen[kMaxSearchRank];
  int64_t sourceShards[kMaxSearchRank];
};

ScratchMemory &unusedScratch(ScratchMemory &own) {
  ScratchMemory &shared = threadScratchMemory();
  return shared.taken ? own : shared;
}

OptimalSearch::OptimalSearch(const PlanRequest &request, const CostModel &model,
                             SearchStats *stats,
                             const OptimalSearchOptions &options,
                             ExchangeCostEvaluator *exchange)
    : request(request), model(model), stats(stats), options(options),
      mesh(request.mesh), numAxes(mesh.getNumAxes()),
      rank(request.globalShape.size()), source(packLayout(request.source)),
      target(packLayout(request.target)),
      space(mesh, request.globalShape, request.elementBytes, model,
            request.maxPeakBytes, target),
      ordered(!request.maxPeakBytes && model.sameKindStepsCommute()),
      bound(mesh, request.globalShape, request.elementBytes, model, target),
      memory(unusedScratch(own)), lease(memory), nodes(memory.nodes),
      index(memory.index), open(memory.open),
      allowRedistribute(request.moves == MoveSet::All),
      exchangeCosts(exchange
                        ? *exchange
                        : ownExchangeCosts.emplace(model, request.globalShape,
                                                   request.elementBytes)),
      targetLayout(request.target),
      abstractPossible(AbstractBound::applicable(mesh, rank, model)),
      symmetry(mesh, model, target), twinMasks(symmetry.lowerTwins()),
      pending(memory.pending), expandingClosed(!allowRedistribute),
      freeSlices(!request.maxPeakBytes && !(model.localSecondsPerByte() > 0)) {
  space.setFinalReplicateToPartialOnly(!request.maxPeakBytes);
  for (unsigned a = 0; a < numAxes; ++a)
    sizeOneAxes |= mesh.getAxisSize(a) == 1;
  permuteLatency = sizeOneAxes ? 0 : model.minLatency();
  permutePerByte = sizeOneAxes ? 0 : model.minSecondsPerByte();
  uniformPermutes = !sizeOneAxes && model.permuteCostIsUniform();
  permuteTwins = uniformPermutes ? twinMasks.data() : nullptr;
  targetLayout.canonicalize();
  nodes.clear();
  nodes.reserve(1024);
  addRoot();
  DimView v;
  space.view(nodes[0].state.layout, v);
  space.shardCounts(v, sourceShards);
  for (unsigned d = 0; d < rank; ++d)
    sourceLen[d] = v.len[d];
}

double OptimalSearch::redistributeCap(const SearchState &state) {
  if (!allowRedistribute || state.pointToPointClosed)
    return std::numeric_limits<double>::infinity();
  // Inside a slice run the layout is not yet a real one (its nesting is
  // checked when the run ends); assume nothing.
  if (state.run.open)
    return 0.0;
  unpackLayoutInto(state.layout, numAxes, rank, capLayout);
  return exchangeCosts.planBound(capLayout, targetLayout);
}

/// The f of the entry that generates the permutes out of `n`: every
/// permute child's f is at least this.
double OptimalSearch::permuteF(const Node &n) const {
  double rest = n.classLatency + n.classBandwidth;
  if (abstract)
    rest = std::max(rest, abstract->permuteFloor(n.state.layout));
  return n.g + permuteLatency + permutePerByte * double(n.bytes) + rest;
}

/// A state inside a slice run is one step from the run's start, not from
/// its layout (the run's nesting is checked as a whole, and the abstract
/// slice edges check it the same way), so it gets no abstract bound.
double OptimalSearch::abstractH(const SearchState &state) const {
  return state.run.open ? 0.0 : (*abstract)(state.layout);
}

void OptimalSearch::push(uint32_t id) {
  const Node &n = nodes[id];
  // At least one more step unless at the target, or in an open slice run
  // (extending it to the target adds no step).
  uint32_t stepBound =
      n.steps + (n.state.layout == target || n.state.run.open ? 0 : 1);
  open.push({n.g + std::min(n.h, n.hCap), stepBound, seq++, id, n.version,
             Tier::Expand});
}

void OptimalSearch::pushPermutes(uint32_t id) {
  const Node &n = nodes[id];
  open.push({permuteF(n), uint32_t(n.steps) + 1, seq++, id, n.version,
             Tier::Permutes});
}

void OptimalSearch::addRoot() {
  Node root;
  root.state.layout = source;
  // relabel of the root: the source (in request axes) into its canonical
  // frame.
  root.relabel = symmetry.canonicalize(root.state.layout);
  root.bytes = space.bytesOf(source);
  LowerBound::Latency lat = bound.latencies(root.state.layout, root.state.run);
  root.h = lat.full + lat.classBandwidth;
  root.classLatency = lat.classOnly;
  root.classBandwidth = lat.classBandwidth;
  root.hCap = redistributeCap(root.state);
  root.sliceOnly = true;
  nodes.push_back(root);
  StateKey rootKey = keyOf(root.state);
  index.tryEmplace(rootKey, hashOf(rootKey), StateIndex::Known{0, 0, 0});
  push(0);
}

bool OptimalSearch::undoesFreeSlices(const Edge &edge) const {
  const PackedMove &m = edge.move;
  if (!(m.kind == MoveKind::AllGather || m.kind == MoveKind::AllToAll) ||
      !costLess(0.0, edge.cost))
    return false;
  const unsigned d = m.dim;
  if (freeView.len[d] < sourceLen[d] + m.numAxes)
    return false; // it moves an axis of the source's
  int64_t q = 1;
  for (unsigned i = 0; i < m.numAxes; ++i)
    q *= mesh.getAxisSize(m.axes[i]);
  // The dim it leaves, as one slice run from the source's blocks.
  return blocksNest(request.globalShape[d], sourceShards[d],
                    freeShards[d] / q / sourceShards[d]);
}

void OptimalSearch::collect(const Edge &edge) {
  if (expandingFree && undoesFreeSlices(edge))
    return;
  if (++edges > options.maxEdges)
    overflow = true;
  Pending &p = pending.add();
  p.edge = edge;
  p.next = edge.next;
  MoveKind kind = edge.move.kind;
  p.next.pointToPointClosed =
      allowRedistribute &&
      (expandingClosed ||
       !(kind == MoveKind::ReduceScatter || kind == MoveKind::AllReduce));
  p.relabel = symmetry.canonicalize(p.next.layout);
  p.key = keyOf(p.next);
  p.hash = hashOf(p.key);
  p.hasLatency = false;
  index.prefetch(p.hash);
}

void OptimalSearch::relax(uint32_t parent, double g, uint16_t steps,
                          const Pending &p) {
  if (stats)
    ++stats->generated;
  double g2 = g + p.edge.cost;
  uint16_t steps2 = steps + (p.edge.newStep ? 1 : 0);
  auto [it, inserted] = index.tryEmplace(
      p.key, p.hash, StateIndex::Known{g2, uint32_t(nodes.size()), steps2});
  if (!inserted) {
    relaxKnown(*it, parent, g2, steps2, p);
    return;
  }
  if (nodes.size() >= options.maxStates) {
    overflow = true;
    index.eraseLast(it);
    return;
  }
  addChild(parent, g2, steps2, p);
}

/// `child` reached from `parent` by `p`'s edge at cost g2 in steps2 steps.
void OptimalSearch::setPath(Node &child, uint32_t parent, double g2,
                            uint16_t steps2, const Pending &p) const {
  const Edge &edge = p.edge;
  child.move = edge.move;
  child.relabel = p.relabel;
  child.parent = parent;
  child.order = edge.order;
  child.g = g2;
  child.steps = steps2;
  child.bytes = edge.bytesAfter;
  child.sliceOnly =
      nodes[parent].sliceOnly && edge.move.kind == MoveKind::AllSlice;
}

void OptimalSearch::addChild(uint32_t parent, double g2, uint16_t steps2,
                             const Pending &p) {
  const Edge &edge = p.edge;
  const SearchState &next = p.next;
  Node child;
  child.state = next;
  setPath(child, parent, g2, steps2, p);
  LowerBound::Latency lat =
      p.hasLatency ? p.latency : bound.latencies(next.layout, next.run);
  child.h = lat.full + lat.classBandwidth;
  if (abstract) {
    child.h = std::max(child.h, abstractH(next));
    child.hAbstract = true;
  }
  child.classLatency = lat.classOnly;
  child.classBandwidth = lat.classBandwidth;
  // Inherited while the state waits in the queue (most never reach its
  // front); the exact cap is computed there (see hCapFull).
  if (allowRedistribute && !next.pointToPointClosed && !next.run.open) {
    child.hCap = std::max(0.0, nodes[parent].hCap - edge.cost);
    child.hCapFull = false;
  } else {
    child.hCap = redistributeCap(next);
  }
  nodes.push_back(child);
  push(nodes.size() - 1);
}

void OptimalSearch::relaxKnown(StateIndex::Bucket &known, uint32_t parent,
                               double g2, uint16_t steps2, const Pending &p) {
  const Edge &edge = p.edge;
  bool better =
      costLess(g2, known.g) || (costEqual(g2, known.g) && steps2 < known.steps);
  Node &child = nodes[known.node];
  if (!better) {
    // An equally good path whose last move leaves out other continuations
    // (OrderMark) widens what the state generates to what both allow, so
    // that an order pruned as a duplicate always has its sorted twin.
    if (ordered && costEqual(g2, known.g) && steps2 == known.steps) {
      OrderMark meet = OrderMark::meet(child.order, edge.order);
      if (!(meet == child.order)) {
        child.order = meet;
        child.closed = false;
        ++child.version;
        push(known.node);
      }
    }
    return;
  }
  known.g = g2;
  known.steps = steps2;
  setPath(child, parent, g2, steps2, p);
  child.closed = false;
  child.permutesDone = child.redistributesDone = false;
  ++child.version;
  push(known.node);
}

bool OptimalSearch::isStale(const Entry &e) const {
  const Node &n = nodes[e.node];
  if (e.version != n.version)
    return true;
  switch (e.tier) {
  case Tier::Expand:
    return n.closed;
  case Tier::Permutes:
    return n.permutesDone;
  case Tier::RedistributeBounds:
    return n.redistributesDone;
  case Tier::Redistribute:
    return false;
  }
  return false;
}

/// Each candidate edge waits behind a cheap bound on its cost (a single
/// exchange is a plan, so the reported bound holds for it); the exact
/// exchange is priced only if that comes to the front.
void OptimalSearch::boundRedistributes(const Entry &e) {
  Node &n = nodes[e.node];
  n.redistributesDone = true;
  unpackLayoutInto(n.state.layout, numAxes, rank, fromLayout);
  RedistributeCandidates &candidates = redistributeTargets[e.node];
  candidates = redistributeCandidateSet(mesh, fromLayout, targetLayout);
  const size_t count = std::min<size_t>(candidates.size(), 256);
  exchangeCosts.lowerBounds(fromLayout, candidates, count, floors);
  llvm::SmallVector<PackedLayout, 2> bases;
  for (const RedistributeCandidates::Family &f : candidates.families)
    bases.push_back(packLayout(f.base));
  for (size_t c = 0; c < count; ++c) {
    // After the redistribute only collectives remain, so the child's
    // collective bound adds to the exchange's.
    RedistributeCandidates::Position at = candidates.position(c);
    PackedLayout packed = bases[at.family];
    if (const auto *refinement = at.refinement)
      packed.slot[refinement->first] =
          dimSlot(refinement->second, candidates.families[at.family]
                                          .base.dimAxes[refinement->second]
                                          .size());
    LowerBound::Latency lat = bound.latencies(packed);
    open.push({n.g + floors[c] + lat.full + lat.classBandwidth,
               uint32_t(n.steps) + 1, seq++, e.node, n.version,
               Tier::Redistribute, uint8_t(c)});
  }
}

void OptimalSearch::priceRedistribute(const Entry &e) {
  const Node &n = nodes[e.node];
  const double g = n.g;
  const uint16_t steps = n.steps;
  unpackLayoutInto(n.state.layout, numAxes, rank, fromLayout);
  const Layout to = redistributeTargets[e.node].layout(e.candidate);
  PackedLayout packed = packLayout(to);
  int64_t after = space.bytesOf(packed);
  if (request.maxPeakBytes && n.bytes + after > *request.maxPeakBytes)
    return;
  ExchangeCostEvaluator::Result ex;
  if (!exchangeCosts.evaluate(fromLayout, to, ex))
    return; // too large to plan point-to-point: no such edge
  Edge edge;
  edge.move.kind = MoveKind::Redistribute;
  edge.next.layout = packed;
  edge.cost = ex.cost;
  edge.bytesAfter = after;
  pending.clear();
  collect(edge);
  relax(e.node, g, steps, pending.back());
}

void OptimalSearch::expandPermutes(const Entry &e) {
  Node &n = nodes[e.node];
  // An entry queued before the abstract bound existed may be early.
  if (abstract && costLess(e.f, permuteF(n))) {
    pushPermutes(e.node);
    return;
  }
  n.permutesDone = true;
  // Copied: `nodes` may grow (and move) while the edges are relaxed.
  const SearchState state = n.state;
  const double g = n.g;
  const uint16_t steps = n.steps;
  const int64_t bytes = n.bytes;
  // (A state whose open slice run cannot end has no permutes at all.)
  if (uniformPermutes && space.runMayEnd(state)) {
    // A member inside a slice run pays for ending it first.
    const double start = g + space.closeCost(state, bytes);
    auto [it, first] = permutedClasses.try_emplace(
        space.permuteClassKey(state.layout), ClassVisit{start, steps, e.node});
    if (!first && it->second.node != e.node) {
      if (!costLess(start, it->second.g) &&
          !(costEqual(start, it->second.g) && steps < it->second.steps))
        return;
      it->second = {start, steps, e.node};
    }
  }
  pending.clear();
  space.forEachPermuteEdge(state, bytes, permuteTwins, [&](const Edge &edge) {
    collect(edge);
    // Permute targets have no slice run, and the search's symmetry
    // relabels only axes the target treats alike, which leaves the bound
    // unchanged: the terms computed here are the child's.
    pending.back().hasLatency = true;
    pending.back().latency = bound.latencies(edge.next.layout);
  });
  for (const Pending &p : pending)
    relax(e.node, g, steps, p);
}

/// Worth building only when the closed form has proved weak: the search
/// has had to raise f well above its bound at the source.
void OptimalSearch::buildAbstractBoundIfWorthIt(const Entry &e) {
  if (!abstractPossible || expansions < options.abstractBoundAfter)
    return;
  const SearchState &from = nodes[0].state;
  if (rootBound < 0)
    rootBound = bound(from.layout, from.run);
  if (!options.abstractBoundAlways && !(e.f > rootBound * kAbstractWeakness))
    return;
  abstract.emplace(mesh, request.globalShape, request.elementBytes, model,
                   from.layout, target, request.maxPeakBytes);
  abstractPossible = false;
  // Worth its lookups only when it sees more than the closed form at the
  // source (where it is exact: the table is filled up to there).
  if (!options.abstractBoundAlways &&
      !costLess(rootBound * kAbstractGain, (*abstract)(from.layout)))
    abstract.reset();
}

/// The full bound enumerates devices, so it is computed only for states
/// that reach the front; a state whose bound grows goes back in line (true).
bool OptimalSearch::raiseBound(const Entry &e) {
  buildAbstractBoundIfWorthIt(e);
  Node &n = nodes[e.node];
  bool raised = false;
  if (!n.hCapFull) {
    n.hCapFull = true;
    n.hCap = std::max(n.hCap, redistributeCap(n.state));
    raised = true;
  }
  if (!n.hFull) {
    n.hFull = true;
    n.h = std::max(n.h, bound(n.state.layout, n.state.run));
    raised = true;
  }
  if (abstract && !n.hAbstract) {
    n.hAbstract = true;
    n.h = std::max(n.h, abstractH(n.state));
    raised = true;
  }
  if (raised && costLess(e.f, n.g + std::min(n.h, n.hCap))) {
    push(e.node);
    return true;
  }
  return false;
}

void OptimalSearch::expand(const Entry &e) {
  if (raiseBound(e))
    return;
  Node &n = nodes[e.node];
  n.closed = true;
  ++expansions;
  if (stats)
    ++stats->expanded;
  // Copied: `nodes` may grow (and move) while the edges are relaxed.
  const SearchState state = n.state;
  const double g = n.g;
  const uint16_t steps = n.steps;
  const int64_t bytes = n.bytes;
  const uint32_t id = e.node;
  if (space.isGoal(state)) {
    // Reaching the target inside a slice run ends the run there.
    const double ending = space.closeCost(state, bytes);
    const double cost = g + ending;
    if (best == kNoNode || costLess(cost, bestCost) ||
        (costEqual(cost, bestCost) && steps < bestSteps)) {
      best = id;
      bestCost = cost;
      bestSteps = steps;
    }
    // A priced run may still get cheaper by growing (a smaller result to
    // copy) and then coming back, so such a goal is expanded too.
    if (!(ending > 0))
      return;
  }
  pending.clear();
  expandingFree = freeSlices && n.sliceOnly;
  if (expandingFree) {
    space.view(state.layout, freeView);
    space.shardCounts(freeView, freeShards);
  }
  space.forEachEdge(state, bytes, /*sliceRuns=*/true, /*permutes=*/false,
                    ordered ? n.order : OrderMark(),
                    [&](const Edge &edge) { collect(edge); });
  expandingFree = false;
  for (const Pending &p : pending)
    relax(id, g, steps, p);
  pushPermutes(id);
  // Redistribute edges come last: after the permutes at equal f, so that
  // a collective plan of equal cost and length is found first and kept.
  // The entry's f is the state's capped bound, below every plan from it;
  // the exchanges are only worked out when it reaches the front.
  if (!expandingClosed && !state.run.open)
    open.push({g + nodes[id].hCap, uint32_t(steps) + 1, seq++, id,
               nodes[id].version, Tier::RedistributeBounds});
}

llvm::Expected<std::vector<Move>> OptimalSearch::run() {
  // The clock is read at every pop: tens of nanoseconds, against a pop's
  // hashing and bounds (and some pops price exchanges over every device).
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(options.maxSeconds));
  bool outOfTime = false;
  while (!open.empty() && !overflow) {
    if (Clock::now() > deadline) {
      outOfTime = true;
      break;
    }
    Entry e = open.top();
    open.pop();
    if (isStale(e))
      continue;
    if (best != kNoNode) {
      if (costLess(bestCost, e.f))
        break; // nothing left can match the best cost
      // Equal cost at best, but not fewer steps. (A goal reached inside a
      // slice run costs more than its f, so entries below the best cost
      // may remain.)
      if (e.stepBound >= bestSteps && !costLess(e.f, bestCost))
        continue;
    }
    expandingClosed =
        !allowRedistribute || nodes[e.node].state.pointToPointClosed;
    switch (e.tier) {
    case Tier::RedistributeBounds:
      boundRedistributes(e);
      break;
    case Tier::Redistribute:
      priceRedistribute(e);
      break;
    case Tier::Permutes:
      expandPermutes(e);
      break;
    case Tier::Expand:
      expand(e);
      break;
    }
  }
  if (outOfTime || overflow)
    return failure(outOfTime);
  if (stats)
    stats->states += nodes.size();
  if (best == kNoNode)
    return failure(/*outOfTime=*/false);
  return movesToBest();
}

llvm::Error OptimalSearch::failure(bool outOfTime) const {
  if (outOfTime)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the optimal search ran out of its time budget (" +
            formatDouble(options.maxSeconds) + " s, " +
            llvm::Twine(nodes.size()) +
            " states); use --strategy greedy for this request");
  if (overflow)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the optimal search gave up after " + llvm::Twine(nodes.size()) +
            " states and " + llvm::Twine(edges) +
            " moves; use --strategy greedy for this request");
  std::string why = request.maxPeakBytes
                        ? "no sequence of moves keeps the peak within " +
                              std::to_string(*request.maxPeakBytes) +
                              " bytes per device"
                        : "no sequence of moves reaches it";
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "target layout " + printLayout(mesh, request.target) +
          " is unreachable from " + printLayout(mesh, request.source) + ": " +
          why);
}

/// Walks back to the source, then turns packed moves into Moves in the
/// request's axes (undoing the canonical relabelings); an extended slice
/// run joins the previous step's all_slice.
std::vector<Move> OptimalSearch::movesToBest() const {
  std::vector<uint32_t> path;
  for (uint32_t id = best; id != 0; id = nodes[id].parent)
    path.push_back(id);
  std::vector<Move> moves;
  Layout cur = request.source;
  cur.canonicalize();
  // toRequest[axis in the current node's frame] = axis of the request.
  Relabeling toRequest = inverse(nodes[0].relabel, numAxes);
  for (auto it = path.rbegin(); it != path.rend(); ++it) {
    const Node &n = nodes[*it];
    Relabeling fromChild = inverse(n.relabel, numAxes);
    PackedLayout result = relabelLayout(
        relabelLayout(n.state.layout, fromChild, numAxes), toRequest, numAxes);
    PackedMove move = n.move;
    for (unsigned i = 0; i < move.numAxes; ++i)
      move.axes[i] = toRequest[move.axes[i]];
    Layout next = unpackLayout(result, numAxes, rank);
    if (move.kind == MoveKind::AllSlice && move.continuesRun && !moves.empty())
      moves.back().axes.push_back(move.axes[0]);
    else
      moves.push_back(move.toMove(mesh, cur, next));
    cur = std::move(next);
    Relabeling composed;
    for (unsigned a = 0; a < kMaxMeshAxes; ++a)
      composed[a] = a < numAxes ? toRequest[fromChild[a]] : a;
    toRequest = composed;
  }
  return moves;
}

} // namespace

llvm::Expected<std::vector<Move>> dist::planner::detail::searchOptimal(
    const PlanRequest &request, const CostModel &model, SearchStats *stats) {
  return searchOptimalWithin(request, model, stats,
                             OptimalSearchOptions::threadDefaults());
}

llvm::Expected<std::vector<Move>> dist::planner::detail::searchOptimalWith(
    const PlanRequest &request, const CostModel &model, SearchStats *stats,
    ExchangeCostEvaluator &exchange) {
  return searchOptimalWithin(request, model, stats,
                             OptimalSearchOptions::threadDefaults(), &exchange);
}

llvm::Expected<std::vector<Move>> dist::planner::detail::searchOptimalWithin(
    const PlanRequest &request, const CostModel &model, SearchStats *stats,
    const OptimalSearchOptions &options, ExchangeCostEvaluator *exchange) {
  OptimalSearch search(request, model, stats, options, exchange);
  return search.run();
}
