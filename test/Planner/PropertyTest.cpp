//===- PropertyTest.cpp - Random-case properties of the planner -----------===//
//
// Over thousands of random meshes (1-D to 4-D, sizes 1-4), tensors (rank
// 1-3, uneven extents) and layouts (with partial sum/max):
//  - every optimal and every greedy plan executes, on simulated devices, to
//    exactly the target;
//  - optimal cost <= greedy cost, and lower bound <= optimal cost;
//  - the optimal plan matches an exhaustive search (cost and step count)
//    on small cases, with and without a peak limit;
//  - cost(a -> c) <= cost(a -> b) + cost(b -> c);
//  - the search's A* heuristic never exceeds the cost of a plan from the
//    layout it bounds (it must be admissible for the search to be exact).
//
//===----------------------------------------------------------------------===//

#include "BruteForce.h"
#include "RandomCases.h"
#include "ReferenceExecutor.h"
#include "Search/AdmissibleHeuristic.h"
#include "Search/PatternDatabaseHeuristic.h"
#include "Search/Search.h"
#include "TestUtil.h"

#include "dist/Planner/Planner.h"

#include <cstdlib>
#include <set>

using namespace dist::planner;
using namespace dist::planner::test;

namespace {

int scale() { return propertyScale(); }
uint64_t seedOffset() { return scale() == 1 ? 0 : 1000003; }

std::string describe(const Mesh &mesh, const std::vector<int64_t> &shape,
                     const Layout &from, const Layout &to) {
  std::string s = "mesh " + mesh.str() + " shape ";
  for (size_t d = 0; d < shape.size(); ++d)
    s += (d ? "x" : "") + std::to_string(shape[d]);
  return s + " from " + printLayout(mesh, from) + " to " +
         printLayout(mesh, to);
}

/// "case I: <describe>" plus the peak limit and the cost model's fingerprint
/// when the request has them: enough to replay a failing case.
std::string describeCase(int i, const PlanRequest &request) {
  std::string s = "case " + std::to_string(i) + ": " +
                  describe(request.mesh, request.globalShape, request.source,
                           request.target);
  if (request.maxPeakBytes)
    s += " max_peak " + std::to_string(*request.maxPeakBytes);
  if (request.costModel) {
    s += " cost model ";
    request.costModel->appendFingerprint(s);
  }
  return s;
}

Plan planOrFail(const PlanRequest &request, const std::string &what) {
  llvm::Expected<Plan> plan = planReshard(request);
  if (!plan) {
    ADD_FAILURE() << what << ": " << llvm::toString(plan.takeError());
    return Plan();
  }
  return std::move(*plan);
}

TEST(PlannerProperty, PlansExecuteExactlyAndOptimalBeatsGreedy) {
  Rng rng(20261122 + seedOffset());
  const int kCases = 4000 * scale();
  for (int i = 0; i < kCases; ++i) {
    Mesh mesh = randomMesh(rng, 4, 4, 32);
    unsigned rank = uniform(rng, 1, 3);
    std::vector<int64_t> shape = randomShape(rng, rank, rank == 3 ? 6 : 9);
    Layout from = randomLayout(rng, mesh, rank, true);
    Layout to = randomLayout(rng, mesh, rank, uniform(rng, 0, 2) == 0);
    std::optional<AlphaBetaCostModel> model;
    if (i % 3 == 0)
      model.emplace(cantFail(AlphaBetaCostModel::create(
          mesh, randomTopology(rng, mesh, /*ops=*/i % 2 == 1,
                               /*local=*/i % 9 == 3))));
    PlanRequest request(mesh, shape, 4, from, to);
    if (model)
      request.costModel = &*model;
    std::string what = describeCase(i, request);
    Plan optimal = planOrFail(request, what + " (optimal)");
    request.strategy = Strategy::Greedy;
    Plan greedy = planOrFail(request, what + " (greedy)");
    if (HasFailure())
      return;
    ReferenceExecutor exec(mesh, shape);
    if (llvm::Error e =
            exec.run(from, to, optimal,
                     ReferenceExecutor::PartialInput::RandomSplit, i)) {
      ADD_FAILURE() << what << " (optimal): " << llvm::toString(std::move(e))
                    << "\n"
                    << printPlanTable(mesh, optimal);
      return;
    }
    if (llvm::Error e =
            exec.run(from, to, greedy,
                     ReferenceExecutor::PartialInput::RandomSplit, i)) {
      ADD_FAILURE() << what << " (greedy): " << llvm::toString(std::move(e))
                    << "\n"
                    << printPlanTable(mesh, greedy);
      return;
    }
    ASSERT_LE(optimal.cost, greedy.cost * (1 + 1e-12) + 1e-24)
        << what << "\n"
        << printPlanTable(mesh, optimal) << printPlanTable(mesh, greedy);
    ASSERT_LE(optimal.lowerBound, optimal.cost * (1 + 1e-12) + 1e-24)
        << what << "\n"
        << printPlanTable(mesh, optimal);
  }
}

/// Makes the optimal search use the abstract-distance bound from its first
/// expansion on, whatever it says at the source (normally only hard
/// requests build it), for the duration of a test.
struct ForceAbstractBound {
  static detail::OptimalSearchOptions options() {
    detail::OptimalSearchOptions o;
    o.abstractBoundAfter = 0;
    o.abstractBoundAlways = true;
    return o;
  }
  detail::ScopedSearchOptions scope{options()};
};

// The optimal plan costs what the exhaustive search finds, in as many
// steps; both agree when there is no plan (unless one `mustExist`).
void expectMatchesExhaustiveSearch(const Mesh &mesh, const PlanRequest &request,
                                   const CostModel &model,
                                   const std::string &what,
                                   bool mustExist = false) {
  std::optional<BruteForceResult> expected = bruteForcePlan(request, model);
  llvm::Expected<Plan> plan = planReshard(request);
  if (!expected) {
    bool planned = bool(plan);
    if (!planned)
      llvm::consumeError(plan.takeError());
    ASSERT_FALSE(mustExist) << what << ": brute force found no plan";
    ASSERT_FALSE(planned) << what << ": brute force found no plan";
    return;
  }
  ASSERT_TRUE(bool(plan)) << what << ": " << llvm::toString(plan.takeError());
  std::string bruteText;
  for (const std::string &m : expected->moves)
    bruteText += "  " + m + "\n";
  ASSERT_NEAR(plan->cost, expected->cost, 1e-12 * expected->cost + 1e-24)
      << what << "\n"
      << printPlanTable(mesh, *plan) << "exhaustive:\n"
      << bruteText;
  ASSERT_EQ(plan->steps.size(), expected->steps) << what << "\n"
                                                 << printPlanTable(mesh, *plan);
}

void optimalMatchesExhaustiveSearch(uint64_t seed, int cases) {
  Rng rng(seed + seedOffset());
  const int kCases = cases * scale();
  for (int i = 0; i < kCases; ++i) {
    Mesh mesh = randomMesh(rng, 3, 4, 16);
    unsigned rank =
        mesh.getNumAxes() == 3 ? uniform(rng, 1, 2) : uniform(rng, 1, 3);
    std::vector<int64_t> shape = randomShape(rng, rank, 7);
    Layout from = randomLayout(
        rng, mesh, rank, true,
        {ReductionKind::Sum, ReductionKind::Max, ReductionKind::Avg});
    Layout to = randomLayout(rng, mesh, rank, uniform(rng, 0, 2) == 0,
                             {ReductionKind::Sum, ReductionKind::Max});
    AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(
        mesh, i % 2 ? randomTopology(rng, mesh, /*ops=*/i % 4 == 3,
                                     /*local=*/i % 8 < 4)
                    : Topology()));
    PlanRequest request(mesh, shape, 4, from, to);
    request.costModel = &model;
    if (i % 4 == 3) {
      int64_t bytes = localBytes(mesh, from, shape, 4);
      request.maxPeakBytes = bytes * uniform(rng, 2, 4);
    }
    std::string what = describeCase(i, request);
    expectMatchesExhaustiveSearch(mesh, request, model, what);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

TEST(PlannerProperty, OptimalMatchesExhaustiveSearch) {
  optimalMatchesExhaustiveSearch(7, 1000);
}

// The same with the abstract-distance bound
// (lib/Planner/Search/PatternDatabaseHeuristic.h) used from the start, on other
// cases.
TEST(PlannerProperty, OptimalMatchesExhaustiveSearchWithAbstractBound) {
  ForceAbstractBound force;
  optimalMatchesExhaustiveSearch(17, 600);
}

// Four axes of size 2 (the search's symmetry reduction, permute classes and
// orderings have more to do), fewer cases: the exhaustive search is slower.
void optimalMatchesExhaustiveSearchOnFourAxes(uint64_t seed, int cases) {
  Rng rng(seed + seedOffset());
  Mesh mesh = cantFail(Mesh::create({{"a", 2}, {"b", 2}, {"c", 2}, {"d", 2}}));
  for (int i = 0; i < cases * scale(); ++i) {
    unsigned rank = uniform(rng, 1, 2);
    std::vector<int64_t> shape = randomShape(rng, rank, 8);
    Layout from = randomLayout(rng, mesh, rank, true);
    Layout to = randomLayout(rng, mesh, rank, uniform(rng, 0, 3) == 0);
    AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(
        mesh, i % 3 == 2 ? randomTopology(rng, mesh, /*ops=*/i % 2 == 1,
                                          /*local=*/i % 4 < 2)
                         : Topology()));
    PlanRequest request(mesh, shape, 4, from, to);
    request.costModel = &model;
    std::string what = describeCase(i, request);
    expectMatchesExhaustiveSearch(mesh, request, model, what,
                                  /*mustExist=*/true);
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

TEST(PlannerProperty, OptimalMatchesExhaustiveSearchOnFourAxes) {
  optimalMatchesExhaustiveSearchOnFourAxes(11, 150);
}

TEST(PlannerProperty,
     OptimalMatchesExhaustiveSearchOnFourAxesWithAbstractBound) {
  ForceAbstractBound force;
  optimalMatchesExhaustiveSearchOnFourAxes(23, 150);
}

// The topologies of AxesBecomePartialTogetherInOneStep, as the property
// tests drew them.
const char *const kDearCopiesTopology = R"({"local": {"beta": 1e-6}, "axes": {
  "a": {"alpha": 2e-6, "beta": 4e-8, "ops": {
    "reduce_scatter": {"alpha": 2e-6, "beta": 2.7027027027027025e-12}, "all_reduce": {"alpha": 2e-6, "beta": 1e-11},
    "permute": {"alpha": 5e-5, "beta": 4e-8}}},
  "b": {"alpha": 2e-6, "beta": 2.7027027027027025e-12, "ops": {
    "all_to_all": {"alpha": 1e-5, "beta": 1e-11}, "all_reduce": {"alpha": 2e-6, "beta": 1e-9},
    "permute": {"alpha": 1e-5, "beta": 2.7027027027027025e-12}, "redistribute": {"alpha": 5e-5, "beta": 2.7027027027027025e-12}}},
  "c": {"alpha": 2e-6, "beta": 4e-8, "ops": {
    "reduce_scatter": {"alpha": 1e-5, "beta": 4e-8}, "all_reduce": {"alpha": 2e-6, "beta": 2.7027027027027025e-12},
    "permute": {"alpha": 2e-6, "beta": 1e-11}, "redistribute": {"alpha": 2e-6, "beta": 1e-11}}}}})";
const char *const kJoinerTopology = R"({"local": {"beta": 2e-10}, "axes": {
  "a": {"alpha": 1e-7, "beta": 1e-11, "ops": {
    "all_gather": {"alpha": 5e-5, "beta": 1e-11}, "all_reduce": {"alpha": 2e-6, "beta": 4e-8},
    "permute": {"alpha": 1e-5, "beta": 1e-11}, "redistribute": {"alpha": 1e-5, "beta": 1e-11}}},
  "b": {"alpha": 2e-6, "beta": 2.7027027027027025e-12, "ops": {
    "all_gather": {"alpha": 2e-6, "beta": 1e-9}, "all_to_all": {"alpha": 2e-6, "beta": 1e-11},
    "reduce_scatter": {"alpha": 2e-6, "beta": 4e-8}, "all_reduce": {"alpha": 1e-5, "beta": 2.7027027027027025e-12}}},
  "c": {"alpha": 2e-6, "beta": 1e-9, "ops": {
    "all_gather": {"alpha": 1e-5, "beta": 1e-9}, "all_to_all": {"alpha": 1e-7, "beta": 4e-8},
    "reduce_scatter": {"alpha": 1e-7, "beta": 1e-9}, "permute": {"alpha": 2e-6, "beta": 1e-11}}},
  "d": {"alpha": 5e-5, "beta": 1e-11, "ops": {
    "all_to_all": {"alpha": 1e-5, "beta": 1e-11}, "reduce_scatter": {"alpha": 1e-5, "beta": 4e-8},
    "all_reduce": {"alpha": 2e-6, "beta": 4e-8}, "redistribute": {"alpha": 2e-6, "beta": 1e-11}}}}})";

// Axes that become partial together take one replicate_to_partial step: a
// joiner with a target-partial axis, and a size-1 axis with either while
// nothing is partial yet (each case once took two zero-cost steps where the
// exhaustive search takes one; found at DIST_PLANNER_PROPERTY_SCALE=10).
TEST(PlannerProperty, AxesBecomePartialTogetherInOneStep) {
  {
    // Dear copies (local above every beta): c joins the reduce_scatter,
    // and the size-1 axis b rides along in the same step.
    Mesh m = mesh("<[\"a\"=2, \"b\"=1, \"c\"=2]>");
    AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(
        m, cantFail(Topology::parseJSON(kDearCopiesTopology))));
    PlanRequest request(m, {6}, 4, layout(m, "[{\"a\", \"b\"}]"),
                        layout(m, "[{\"c\", \"b\"}]"));
    request.maxPeakBytes = 48;
    request.costModel = &model;
    expectMatchesExhaustiveSearch(m, request, model, "size-1 rider",
                                  /*mustExist=*/true);
  }
  {
    // A joiner (c) and the target-partial b, with the abstract bound.
    ForceAbstractBound force;
    Mesh m = mesh("<[\"a\"=2, \"b\"=2, \"c\"=2, \"d\"=2]>");
    AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(
        m, cantFail(Topology::parseJSON(kJoinerTopology))));
    PlanRequest request(m, {2, 3}, 4,
                        layout(m, "[{}, {}], partial = sum {\"a\"}"),
                        layout(m, "[{\"a\", \"c\"}, {}], partial = sum "
                                  "{\"b\"}"));
    request.costModel = &model;
    expectMatchesExhaustiveSearch(m, request, model, "joiner and target axis",
                                  /*mustExist=*/true);
  }
}

// Every suffix of a plan is a plan from the layout it starts at, so the
// heuristic (and the per-class bounds the search uses for permutes) must not
// exceed its cost. Checked at every layout along optimal plans; meshes of
// size-2 axes and odd extents exercise the nesting terms.
TEST(PlannerProperty, SearchHeuristicIsAdmissible) {
  using detail::LowerBound;
  using detail::packLayout;
  Rng rng(31 + seedOffset());
  Mesh sizeTwo =
      cantFail(Mesh::create({{"a", 2}, {"b", 2}, {"c", 2}, {"d", 2}}));
  for (int i = 0; i < 1000 * scale(); ++i) {
    Mesh mesh = i % 3 == 0 ? sizeTwo : randomMesh(rng, 4, 4, 32);
    unsigned rank = uniform(rng, 1, 3);
    std::vector<int64_t> shape = randomShape(rng, rank, i % 2 ? 9 : 40);
    Layout from = randomLayout(rng, mesh, rank, true);
    Layout to = randomLayout(rng, mesh, rank, uniform(rng, 0, 2) == 0);
    AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(
        mesh, i % 4 == 1 || i % 8 == 3
                  ? randomTopology(rng, mesh, /*ops=*/i % 8 == 3,
                                   /*local=*/i % 16 >= 8)
                  : Topology()));
    PlanRequest request(mesh, shape, 4, from, to);
    request.costModel = &model;
    // The collective bounds, against collective plans (with redistribute
    // the search caps them, see OptimalSearch.cpp).
    request.moves = MoveSet::Collective;
    std::string what = describeCase(i, request);
    Plan plan = planOrFail(request, what);
    if (HasFailure())
      return;
    LowerBound bound(mesh, shape, 4, model, packLayout(to));
    // The abstract distances, filled up to the source (and so exact there)
    // or, built from the target itself, only as far as that.
    std::optional<detail::AbstractBound> abstract[2];
    if (detail::AbstractBound::applicable(mesh, rank, model)) {
      abstract[0].emplace(mesh, shape, 4, model, packLayout(from),
                          packLayout(to), std::nullopt);
      abstract[1].emplace(mesh, shape, 4, model, packLayout(to), packLayout(to),
                          std::nullopt);
    }
    double rest = plan.cost;
    Layout cur = from;
    cur.canonicalize();
    for (size_t k = 0;; ++k) {
      detail::PackedLayout packed = packLayout(cur);
      LowerBound::Latency lat = bound.latencies(packed);
      double limit = std::max(rest, 0.0) + 1e-9 * plan.cost + 1e-24;
      ASSERT_LE(bound(packed), limit)
          << what << " at " << printLayout(mesh, cur) << "\n"
          << printPlanTable(mesh, plan);
      ASSERT_LE(lat.full, limit) << what << " at " << printLayout(mesh, cur);
      ASSERT_LE(lat.classOnly + lat.classBandwidth, limit)
          << what << " at " << printLayout(mesh, cur);
      for (const std::optional<detail::AbstractBound> &a : abstract) {
        if (!a)
          continue;
        ASSERT_LE((*a)(packed), limit)
            << what << " at " << printLayout(mesh, cur) << "\n"
            << printPlanTable(mesh, plan);
        ASSERT_LE(a->permuteFloor(packed), limit)
            << what << " at " << printLayout(mesh, cur);
      }
      if (k == plan.steps.size())
        break;
      rest -= plan.steps[k].cost;
      cur = plan.steps[k].layout;
    }
  }
}

/// `layout` with every size-1 axis taken out and put back at random: in a
/// dim (anywhere in its order), partial (when `layout` may be), or nowhere.
Layout moveSizeOneAxes(Rng &rng, const Mesh &mesh, Layout layout) {
  auto unit = [&](unsigned a) { return mesh.getAxisSize(a) == 1; };
  for (AxisList &axes : layout.dimAxes)
    llvm::erase_if(axes, unit);
  bool partialOk = layout.hasPartial();
  llvm::erase_if(layout.partialAxes, unit);
  for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
    if (!unit(a))
      continue;
    int64_t choice = uniform(rng, -2, int64_t(layout.getRank()) - 1);
    if (choice == -1 && partialOk) {
      layout.partialAxes.push_back(a);
    } else if (choice >= 0) {
      AxisList &axes = layout.dimAxes[choice];
      axes.insert(axes.begin() + uniform(rng, 0, axes.size()), a);
    }
  }
  layout.canonicalize();
  return layout;
}

// On meshes with size-1 axes the planner emitted permutes over no
// axes that the dialect rejected. The dialect's rule is the planner's
// (moveMayNameNoAxes): every step of every plan, optimal, greedy or
// collective-only, names at least one axis unless it may name none, and a
// step that names none costs nothing. Layout changes that move no data
// (only size-1 axes change place) cost nothing, and every plan executes.
TEST(PlannerProperty, PlansOnMeshesWithSizeOneAxesVerify) {
  Rng rng(22 + seedOffset());
  const int kCases = 1500 * scale();
  int relabels = 0;
  for (int i = 0; i < kCases; ++i) {
    Mesh mesh = randomMesh(rng, 4, 3, 27);
    bool hasUnit = false;
    for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
      hasUnit |= mesh.getAxisSize(a) == 1;
    if (!hasUnit)
      continue;
    unsigned rank = uniform(rng, 1, 3);
    std::vector<int64_t> shape = randomShape(rng, rank, rank == 3 ? 6 : 9);
    Layout from = randomLayout(rng, mesh, rank, true);
    bool freeChange = i % 2 == 0;
    Layout to = freeChange
                    ? moveSizeOneAxes(rng, mesh, from)
                    : randomLayout(rng, mesh, rank, uniform(rng, 0, 2) == 0);
    if (to == from)
      continue;
    for (int variant = 0; variant < 3; ++variant) {
      PlanRequest request(mesh, shape, 4, from, to);
      if (variant == 1)
        request.strategy = Strategy::Greedy;
      if (variant == 2)
        request.moves = MoveSet::Collective;
      std::string what =
          describeCase(i, request) + " variant " + std::to_string(variant);
      llvm::Expected<Plan> plan = planReshard(request);
      if (!plan) {
        // Only layouts that differ in the order of their partial axes have
        // no plan (the dialect says so); anything else must plan.
        std::string why = llvm::toString(plan.takeError());
        ASSERT_FALSE(freeChange) << what << ": " << why;
        continue;
      }
      for (const PlanStep &step : plan->steps) {
        if (!step.move.axes.empty())
          continue;
        ASSERT_TRUE(step.move.kind == MoveKind::Redistribute ||
                    moveMayNameNoAxes(step.move.kind))
            << what << "\n"
            << printPlanTable(mesh, *plan);
        if (step.move.kind == MoveKind::Permute) {
          ++relabels;
          ASSERT_EQ(step.cost, 0) << what << "\n"
                                  << printPlanTable(mesh, *plan);
        }
      }
      if (freeChange) {
        ASSERT_EQ(plan->cost, 0) << what << "\n" << printPlanTable(mesh, *plan);
      }
      ReferenceExecutor exec(mesh, shape);
      if (llvm::Error e =
              exec.run(from, to, *plan,
                       ReferenceExecutor::PartialInput::RandomSplit, i)) {
        ADD_FAILURE() << what << ": " << llvm::toString(std::move(e)) << "\n"
                      << printPlanTable(mesh, *plan);
        return;
      }
    }
  }
  // The cases include relabellings that no collective can do.
  EXPECT_GT(relabels, 0);
}

// The optimal search generates the permutes out of a state without the
// targets its symmetry makes twins (SearchSpace::forEachPermuteEdge's
// lowerTwins): of each set of targets that swaps of twin axes turn into one
// another, exactly the first in enumeration order is kept, the one the
// search kept before (a later twin reaches the same state at the same
// price, which changes nothing). The set of the current layout is left out
// of the comparison: its members lead back to the state itself. Checked
// against the full enumeration with random classes of equal-size axes.
TEST(PlannerProperty, PermuteTwinsKeepTheFirstOfEachSet) {
  using namespace dist::planner::detail;
  Rng rng(41 + seedOffset());
  int pruned = 0;
  for (int i = 0; i < 400 * scale(); ++i) {
    Mesh mesh = randomMesh(rng, 5, 3, 96);
    unsigned numAxes = mesh.getNumAxes();
    unsigned rank = uniform(rng, 1, 3);
    std::vector<int64_t> shape = randomShape(rng, rank, 12);
    Layout from = randomLayout(rng, mesh, rank, true);
    Layout to = randomLayout(rng, mesh, rank, true);
    AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(mesh, {}));
    SearchSpace space(mesh, shape, 4, model, std::nullopt, packLayout(to));
    // Random classes: each axis joins the class of an earlier axis of its
    // size, or starts its own.
    std::vector<std::vector<unsigned>> classes;
    uint8_t lowerTwins[kMaxMeshAxes] = {};
    for (unsigned a = 0; a < numAxes; ++a) {
      std::vector<size_t> fits;
      for (size_t c = 0; c < classes.size(); ++c)
        if (mesh.getAxisSize(classes[c][0]) == mesh.getAxisSize(a))
          fits.push_back(c);
      int64_t pick = uniform(rng, -1, int64_t(fits.size()) - 1);
      if (pick < 0) {
        classes.push_back({a});
        continue;
      }
      std::vector<unsigned> &cls = classes[fits[pick]];
      for (unsigned b : cls)
        lowerTwins[a] |= uint8_t(1u << b);
      cls.push_back(a);
    }
    // The set a target belongs to: the class members' slots, sorted.
    auto setOf = [&](const PackedLayout &layout) {
      PackedLayout key = layout;
      for (const std::vector<unsigned> &cls : classes) {
        std::vector<uint8_t> slots;
        for (unsigned a : cls)
          slots.push_back(layout.slot[a]);
        std::sort(slots.begin(), slots.end());
        for (size_t k = 0; k < cls.size(); ++k)
          key.slot[cls[k]] = slots[k];
      }
      return key.slotBits();
    };
    SearchState state;
    state.layout = packLayout(from);
    int64_t bytes = space.bytesOf(state.layout);
    std::vector<uint64_t> firsts, kept;
    const uint64_t own = setOf(state.layout);
    std::set<uint64_t> seen = {own};
    space.forEachPermuteEdge(state, bytes, nullptr, [&](const Edge &edge) {
      if (seen.insert(setOf(edge.next.layout)).second)
        firsts.push_back(edge.next.layout.slotBits());
      else
        ++pruned;
    });
    space.forEachPermuteEdge(state, bytes, lowerTwins, [&](const Edge &edge) {
      if (setOf(edge.next.layout) != own)
        kept.push_back(edge.next.layout.slotBits());
    });
    EXPECT_EQ(kept, firsts)
        << "case " << i << ": " << describe(mesh, shape, from, to);
    if (::testing::Test::HasFailure())
      return;
  }
  // The cases include sets of more than one target.
  EXPECT_GT(pruned, 0);
}

TEST(PlannerProperty, TriangleInequality) {
  Rng rng(99 + seedOffset());
  for (int i = 0; i < 300 * scale(); ++i) {
    Mesh mesh = randomMesh(rng, 4, 4, 32);
    unsigned rank = uniform(rng, 1, 3);
    std::vector<int64_t> shape = randomShape(rng, rank, 8);
    Layout a = randomLayout(rng, mesh, rank, true);
    Layout b = randomLayout(rng, mesh, rank, true);
    Layout c = randomLayout(rng, mesh, rank, true);
    // Over collectives, which the search is exact over. (With redistribute
    // the family is "reductions, one exchange, collectives", which a chain
    // through b can leave: a -> b may end in collectives that b -> c's
    // exchange follows.)
    auto cost = [&](const Layout &x, const Layout &y) {
      PlanRequest request(mesh, shape, 2, x, y);
      request.moves = MoveSet::Collective;
      return planOrFail(request, describe(mesh, shape, x, y)).cost;
    };
    double ac = cost(a, c), ab = cost(a, b), bc = cost(b, c);
    ASSERT_LE(ac, (ab + bc) * (1 + 1e-12) + 1e-24)
        << describe(mesh, shape, a, c) << " via " << printLayout(mesh, b);
  }
}

} // namespace
