//===- PlannerTest.cpp - Known hard cases, requests, errors, cache keys ---===//

#include "BruteForce.h"
#include "ReferenceExecutor.h"
#include "Search/Search.h"
#include "TestUtil.h"

#include "dist/Planner/Planner.h"

#include <cmath>

using namespace dist::planner;
using namespace dist::planner::test;
using ::testing::HasSubstr;

namespace {

const double kAlpha = 1e-5, kBeta = 1.0 / 370e9;
constexpr double kMiB = 1024 * 1024;

struct Case {
  Mesh mesh;
  std::vector<int64_t> shape;
  Layout from, to;
  MoveSet moves = MoveSet::All;
  PlanRequest request(Strategy strategy = Strategy::Optimal) const {
    PlanRequest r(mesh, shape, 4, from, to);
    r.strategy = strategy;
    r.moves = moves;
    return r;
  }
};

Case makeCase(llvm::StringRef meshText, std::vector<int64_t> shape,
              llvm::StringRef from, llvm::StringRef to) {
  Mesh m = mesh(meshText);
  return Case{m, shape, layout(m, from), layout(m, to)};
}

std::string ops(const Plan &plan) {
  std::string out;
  for (const PlanStep &s : plan.steps)
    out += (out.empty() ? "" : ", ") + stringifyMoveKind(s.move.kind).str();
  return out;
}

/// Plans, checks the plan on simulated devices, checks greedy is valid and
/// no cheaper, and (for small meshes) agrees with the exhaustive search.
Plan checkHardCase(const Case &c, double expectedCost, bool bruteForce) {
  Plan plan = cantFail(planReshard(c.request()));
  EXPECT_NEAR(plan.cost, expectedCost, 1e-9 * expectedCost)
      << printPlanTable(c.mesh, plan);
  ReferenceExecutor exec(c.mesh, c.shape);
  EXPECT_EQ(errorOf(exec.run(c.from, c.to, plan)), "<success>");
  Plan greedy = cantFail(planReshard(c.request(Strategy::Greedy)));
  EXPECT_EQ(errorOf(exec.run(c.from, c.to, greedy)), "<success>");
  EXPECT_LE(plan.cost, greedy.cost * (1 + 1e-12));
  EXPECT_LE(plan.lowerBound, plan.cost * (1 + 1e-12));
  if (bruteForce) {
    AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(c.mesh));
    std::optional<BruteForceResult> exhaustive =
        bruteForcePlan(c.request(), model);
    EXPECT_TRUE(exhaustive.has_value());
    if (exhaustive) {
      EXPECT_NEAR(exhaustive->cost, plan.cost, 1e-9 * plan.cost);
      EXPECT_EQ(exhaustive->steps, plan.steps.size());
    }
  }
  return plan;
}

// Mesh 2x4, 1024x1024xf32 (4 MiB), [{x}, {y}] -> [{y}, {x}]. The shard
// counts go from (2, 4) to (4, 2), so no single permute does it. Best:
//   all_gather x on dim 0   n = 4 MiB / 8 = 512 KiB:  alpha + 512 KiB beta
//   all_to_all y 1 -> 0     n = 1 MiB:              3 alpha + 3/4 MiB beta
//   all_slice x on dim 1    free
// = 4 alpha + 1.25 MiB beta = 43.54 us. Moving x first by all_to_all
// leaves y not minor-most in dim 1, which costs a permute (alpha + 512 KiB
// beta) on top of two all_to_alls (4 alpha + ...): 53.2 us.
TEST(HardCases, TransposeTwoDimsOn2x4) {
  Case c = makeCase("<[\"x\"=2, \"y\"=4]>", {1024, 1024}, "[{\"x\"}, {\"y\"}]",
                    "[{\"y\"}, {\"x\"}]");
  c.moves = MoveSet::Collective;
  Plan p = checkHardCase(c, 4 * kAlpha + 1.25 * kMiB * kBeta, true);
  EXPECT_EQ(ops(p), "all_gather, all_to_all, all_slice");
}

// The same with point-to-point allowed: device (x, y) needs the 256 x 512
// block (rows of y, columns of x) = 512 KiB, of which it holds nothing
// exactly where it is needed... except the part both blocks share; it
// receives 512 KiB from two senders: 2 alpha + 512 KiB beta = 21.42 us,
// 2.03x cheaper than the best collective chain.
TEST(HardCases, TransposeTwoDimsOn2x4WithRedistribute) {
  Case c = makeCase("<[\"x\"=2, \"y\"=4]>", {1024, 1024}, "[{\"x\"}, {\"y\"}]",
                    "[{\"y\"}, {\"x\"}]");
  Plan p = checkHardCase(c, 2 * kAlpha + 0.5 * kMiB * kBeta, true);
  EXPECT_EQ(ops(p), "redistribute");
  EXPECT_EQ(p.steps[0].recvBytes, 512 * 1024);
}

// Mesh 2x2x2x2, 8192x8192xf32 (256 MiB), partial max over a ->
// [{a, b}, {c}]. Slicing c, d and b onto dim 1 first is free and cuts the
// reduce_scatter's buffer to 32 MiB (alpha + 16 MiB beta); b must end
// after a on dim 0, so an all_to_all moves it there (alpha + 8 MiB beta)
// and d is gathered (alpha + 16 MiB beta): 143.36 us. The search reaches
// dozens of layouts by free slices before the reduction; from each, moving
// one of the axes the slices added (a gather, an all_to_all) only leads to
// a layout other slices reach for free, and is not generated (see
// "Undoing free slices" in OptimalSearch.cpp). The exhaustive search,
// which generates everything, agrees on cost and length.
TEST(HardCases, FreeSlicesBeforeAReductionAreNotUndone) {
  Case c =
      makeCase("<[\"a\"=2, \"b\"=2, \"c\"=2, \"d\"=2]>", {8192, 8192},
               "[{}, {}], partial = max {\"a\"}", "[{\"a\", \"b\"}, {\"c\"}]");
  c.moves = MoveSet::Collective;
  Plan plan = cantFail(planReshard(c.request()));
  EXPECT_NEAR(plan.cost, 3 * kAlpha + 40 * kMiB * kBeta, 1e-9 * plan.cost);
  EXPECT_EQ(ops(plan), "all_slice, reduce_scatter, all_to_all, all_gather");
  AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(c.mesh));
  std::optional<BruteForceResult> exhaustive =
      bruteForcePlan(c.request(), model);
  ASSERT_TRUE(exhaustive.has_value());
  EXPECT_NEAR(exhaustive->cost, plan.cost, 1e-9 * plan.cost);
  EXPECT_EQ(exhaustive->steps, plan.steps.size());
}

// Mesh 8x2, [{}, {y}] -> [{x, y}, {}]. Slicing x onto dim 0 first is free
// and cuts the buffer to 4 MiB / 16 = 256 KiB; then one all_to_all of y
// (p = 2): alpha + 1/2 * 256 KiB beta = 10.35 us. It equals the lower bound
// (every device must receive half of its final block), so it is optimal.
// Doing the all_to_all first would move 8x more data and need a permute to
// put x before y.
TEST(HardCases, SliceBeforeAllToAllOn8x2) {
  Case c = makeCase("<[\"x\"=8, \"y\"=2]>", {1024, 1024}, "[{}, {\"y\"}]",
                    "[{\"x\", \"y\"}, {}]");
  c.moves = MoveSet::Collective;
  Plan p = checkHardCase(c, kAlpha + 0.5 * 0.25 * kMiB * kBeta, true);
  EXPECT_EQ(ops(p), "all_slice, all_to_all");
  EXPECT_NEAR(p.lowerBound, p.cost, 1e-12);
  // A redistribute does the same in one step at the same cost (one
  // message of the same 128 KiB): equal cost, fewer steps.
  c.moves = MoveSet::All;
  Plan q = checkHardCase(c, kAlpha + 0.5 * 0.25 * kMiB * kBeta, true);
  EXPECT_EQ(ops(q), "redistribute");
}

// Mesh 4x2, 1024x1024xf32 partial sum over {x, y} -> [{}, {x}], n = 4 MiB:
//   reduce_scatter x onto dim 1   3 alpha + 3/4 n beta
//   all_reduce y on n / 4         2 alpha + 2 * 1/2 * n/4 beta
// = 5 alpha + n beta = 61.34 us. Reducing y first costs 2 alpha + n beta
// before the same reduce_scatter; a joint reduce_scatter over both axes
// pays 7 alpha. A 3-step plan (reduce_scatter y onto dim 0, reduce_scatter
// x onto dim 1, all_gather y) also costs 5 alpha + n beta; the tie goes to
// fewer steps.
TEST(HardCases, PartialOverBothAxesOn4x2) {
  Case c = makeCase("<[\"x\"=4, \"y\"=2]>", {1024, 1024},
                    "[{}, {}], partial = sum {\"x\", \"y\"}", "[{}, {\"x\"}]");
  Plan p = checkHardCase(c, 5 * kAlpha + 4 * kMiB * kBeta, true);
  EXPECT_EQ(ops(p), "reduce_scatter, all_reduce");
}

// Mesh 2x2, [{x, y}] -> [{y, x}] on 1024xf32 (n = 1 KiB): one permute,
// alpha + n beta; device (0, 1) holds block 1 and needs block 2, so the
// lower bound is the same number.
TEST(HardCases, SwapAxisOrderOn2x2) {
  Case c = makeCase("<[\"x\"=2, \"y\"=2]>", {1024}, "[{\"x\", \"y\"}]",
                    "[{\"y\", \"x\"}]");
  Plan p = checkHardCase(c, kAlpha + 1024 * kBeta, true);
  EXPECT_EQ(ops(p), "permute");
  EXPECT_EQ(p.steps[0].move.axes, (AxisList{0, 1}));
}

// Mesh 2x2x2, three dims rotated: [{x}, {y}, {z}] -> [{y}, {z}, {x}] on
// 64x64x64xf32 (n = 1 MiB / 8 = 128 KiB). One permute over all three axes:
// alpha + n beta = 10.35 us, again equal to the lower bound. The all_to_all
// route needs at least three steps (3 alpha + ...).
TEST(HardCases, RotateThreeDimsOn2x2x2) {
  Case c =
      makeCase("<[\"x\"=2, \"y\"=2, \"z\"=2]>", {64, 64, 64},
               "[{\"x\"}, {\"y\"}, {\"z\"}]", "[{\"y\"}, {\"z\"}, {\"x\"}]");
  Plan p = checkHardCase(c, kAlpha + 128 * 1024 * kBeta, false);
  EXPECT_EQ(ops(p), "permute");
  EXPECT_NEAR(p.lowerBound, p.cost, 1e-12);
}

TEST(Planner, SameRequestSamePlan) {
  Case c = makeCase("<[\"a\"=2, \"b\"=2, \"c\"=2, \"d\"=2]>", {96, 40, 7},
                    "[{\"a\", \"d\"}, {}, {\"b\"}], partial = sum {\"c\"}",
                    "[{}, {\"b\", \"a\"}, {\"d\"}]");
  std::string first = planToJSON(c.mesh, cantFail(planReshard(c.request())));
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(planToJSON(c.mesh, cantFail(planReshard(c.request()))), first);
}

TEST(Planner, EmptyPlanWhenAlreadyThere) {
  Case c = makeCase("<[\"x\"=2]>", {10, 3}, "[{\"x\"}, {}]", "[{\"x\"}, {}]");
  Plan p = cantFail(planReshard(c.request()));
  EXPECT_TRUE(p.steps.empty());
  EXPECT_EQ(p.cost, 0);
  EXPECT_EQ(p.peakBytes, 5 * 3 * 4);
}

TEST(Planner, SizeOneAxesMoveForFree) {
  Case c = makeCase("<[\"u\"=1, \"x\"=2]>", {8}, "[{\"u\", \"x\"}]",
                    "[{\"x\", \"u\"}]");
  Plan p = cantFail(planReshard(c.request()));
  EXPECT_EQ(p.cost, 0);
  EXPECT_EQ(ops(p), "permute"); // a relabelling: no coordinate changes
  EXPECT_TRUE(p.steps[0].move.axes.empty());
}

// Eight axes, six of size 1, with partial values over three of
// them: the optimal search ran for over two minutes. The size-1 axes are
// now planned away (lib/Planner/Search/UnitAxes.cpp); the plan replays on the
// request's own mesh, costs what the same request costs without those axes,
// and takes well under the time the child is given.
TEST(Planner, SizeOneAxesArePlannedAway) {
  const char *meshText =
      R"(<["a0"=1, "a1"=1, "a2"=1, "a3"=1, "a4"=1, "a5"=2, "a6"=1, "a7"=2]>)";
  struct Pair {
    const char *from, *to, *fromReduced, *toReduced;
  } pairs[] = {
      {R"([{"a0", "a5"}, {"a7"}], partial = prod {"a1", "a2", "a3"})",
       R"([{"a7", "a4"}, {"a5", "a6"}])", R"([{"a5"}, {"a7"}])",
       R"([{"a7"}, {"a5"}])"},
      {R"([{}, {}], partial = prod {"a0", "a1", "a2"})",
       R"([{"a5"}, {"a7"}], partial = prod {"a3"})", R"([{}, {}])",
       R"([{"a5"}, {"a7"}])"},
      {R"([{"a5", "a0"}, {"a1"}], partial = sum {"a2", "a7"})",
       R"([{"a2", "a7"}, {"a5"}], partial = sum {"a6", "a0"})",
       R"([{"a5"}, {}], partial = sum {"a7"})", R"([{"a7"}, {"a5"}])"},
  };
  for (const Pair &pair : pairs) {
    Case c = makeCase(meshText, {64, 64}, pair.from, pair.to);
    Case reduced = makeCase(R"(<["a5"=2, "a7"=2]>)", {64, 64}, pair.fromReduced,
                            pair.toReduced);
    EXPECT_EXIT(
        {
          boundThisProcess(30, 2048);
          Plan p = cantFail(planReshard(c.request()));
          Plan q = cantFail(planReshard(reduced.request()));
          std::fprintf(stderr, "%s\n",
                       std::fabs(p.cost - q.cost) <= 1e-15 ? "same cost"
                                                           : "costs differ");
          std::exit(0);
        },
        testing::ExitedWithCode(0), "same cost")
        << pair.from << " -> " << pair.to;
    // (planReshard replays every plan on the request's mesh.)
  }
}

// A search that runs past its time budget ends in a clear error that
// suggests the greedy strategy (the budget is 30 s; 0 here).
TEST(Planner, OptimalSearchHasATimeBudget) {
  Case c = makeCase(R"(<["x"=2, "y"=4, "z"=2]>)", {64, 64},
                    R"([{"x", "y"}, {"z"}])", R"([{"z"}, {"y", "x"}])");
  detail::OptimalSearchOptions none;
  none.maxSeconds = 0;
  std::string why;
  {
    detail::ScopedSearchOptions scope(none);
    why = errorOf(planReshard(c.request()));
  }
  EXPECT_THAT(why, HasSubstr("the optimal search ran out of its time budget "
                             "(0 s, "));
  EXPECT_THAT(why, HasSubstr("use --strategy greedy for this request"));
  PlanRequest greedy = c.request();
  greedy.strategy = Strategy::Greedy;
  detail::ScopedSearchOptions scope(none);
  EXPECT_EQ(errorOf(planReshard(greedy)), "<success>");
}

TEST(Planner, UnevenExtentsAvoidStepsWhoseBlocksDoNotNest) {
  // 10 rows over x=2 are blocks of 5; slicing y=4 under x would need blocks
  // of 2 inside blocks of 5. The plan must take another route, and the
  // simulated devices confirm every step has its data.
  Case c = makeCase("<[\"x\"=2, \"y\"=4]>", {10, 6}, "[{\"x\"}, {}]",
                    "[{\"x\", \"y\"}, {}]");
  Plan p = cantFail(planReshard(c.request()));
  for (const PlanStep &s : p.steps)
    EXPECT_FALSE(s.move.kind == MoveKind::AllSlice && s.move.dim == 0 &&
                 s.move.axes == AxisList{1})
        << printPlanTable(c.mesh, p);
  ReferenceExecutor exec(c.mesh, c.shape);
  EXPECT_EQ(errorOf(exec.run(c.from, c.to, p)), "<success>");
}

TEST(Planner, PeakLimitChangesThePlanOrRefuses) {
  // Unconstrained, the cheapest way from [{}, {x}] to [{x}, {}] on 8 x
  // 1 MiB rows is one all_to_all. Peak bytes per device: before + after.
  Case c =
      makeCase("<[\"x\"=4]>", {1024, 1024}, "[{}, {\"x\"}]", "[{\"x\"}, {}]");
  Plan free = cantFail(planReshard(c.request()));
  EXPECT_EQ(ops(free), "all_to_all");
  EXPECT_EQ(free.peakBytes, 2 * 1024 * 1024);
  PlanRequest tight = c.request();
  tight.maxPeakBytes = free.peakBytes;
  EXPECT_EQ(cantFail(planReshard(tight)).peakBytes, free.peakBytes);
  tight.maxPeakBytes = free.peakBytes - 1;
  EXPECT_THAT(errorOf(planReshard(tight)),
              HasSubstr("no sequence of moves keeps the peak within"));
  tight.maxPeakBytes = 100;
  EXPECT_THAT(errorOf(planReshard(tight)),
              HasSubstr("the source alone holds 1048576 bytes per device"));
}

TEST(Planner, InvalidRequestsAreErrors) {
  Mesh m = mesh("<[\"x\"=2]>");
  Layout one = layout(m, "[{\"x\"}]");
  EXPECT_THAT(errorOf(planReshard(PlanRequest(m, {4, 4}, 4, one, one))),
              HasSubstr("source layout: layout has 1 dims but the tensor has "
                        "rank 2"));
  Layout bad;
  bad.dimAxes = {{3}};
  EXPECT_THAT(errorOf(planReshard(PlanRequest(m, {4}, 4, one, bad))),
              HasSubstr("target layout: layout refers to mesh axis #3"));
  EXPECT_THAT(errorOf(planReshard(PlanRequest(m, {4}, 0, one, one))),
              HasSubstr("element size"));
  EXPECT_THAT(errorOf(planReshard(PlanRequest(m, {-4}, 4, one, one))),
              HasSubstr("negative"));
  std::vector<int64_t> huge(40, 1);
  EXPECT_THAT(errorOf(planReshard(PlanRequest(
                  m, huge, 4, Layout::replicated(40), Layout::replicated(40)))),
              HasSubstr("rank 40 are not supported"));
  Mesh other = mesh("<[\"y\"=2]>");
  AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(other));
  PlanRequest r(m, {4}, 4, one, one);
  r.costModel = &model;
  EXPECT_THAT(errorOf(planReshard(r)), HasSubstr("the cost model is for mesh"));
  PlanRequest neg(m, {4}, 4, one, one);
  neg.maxPeakBytes = -1;
  EXPECT_THAT(errorOf(planReshard(neg)), HasSubstr("max_peak_bytes must be"));
}

TEST(Planner, ReplayRejectsWrongPlans) {
  Case c = makeCase("<[\"x\"=2, \"y\"=2]>", {8, 8}, "[{\"x\"}, {}]",
                    "[{}, {\"x\"}]");
  Plan p = cantFail(planReshard(c.request()));
  Plan wrong = p;
  wrong.steps[0].move = Move::allGather({1}, 0);
  EXPECT_THAT(errorOf(replayPlan(c.request(), wrong)),
              HasSubstr("step 1: all_gather: axis \"y\" does not split dim 0"));
  Plan shortPlan;
  EXPECT_THAT(errorOf(replayPlan(c.request(), shortPlan)),
              HasSubstr("the plan ends at [{\"x\"}, {}], not at the target"));
}

TEST(Planner, ReportedLowerBoundFollowsTheIssueDefinition) {
  // The most bytes of its target block one device lacks, times the smallest
  // beta, plus the smallest alpha. Gather over x=4 of 16 f32: each device
  // holds 4 of the 16 elements it wants, lacks 48 bytes.
  Mesh m = mesh("<[\"x\"=4]>");
  PlanRequest gather(m, {16}, 4, layout(m, "[{\"x\"}]"), layout(m, "[{}]"));
  EXPECT_NEAR(cantFail(planLowerBound(gather)), kAlpha + 48 * kBeta, 1e-15);
  // Partial values still to be reduced are not held: all 64 bytes, and the
  // reduction over x=4 pays at least its latency bound, 3 alpha.
  PlanRequest reduce(m, {16}, 4, layout(m, "[{}], partial = sum {\"x\"}"),
                     layout(m, "[{}]"));
  EXPECT_NEAR(cantFail(planLowerBound(reduce)), 3 * kAlpha + 64 * kBeta, 1e-15);
  // Nothing to move, nothing to bound; partial values that stay partial
  // are held.
  PlanRequest stay(m, {16}, 4, layout(m, "[{}], partial = sum {\"x\"}"),
                   layout(m, "[{}], partial = sum {\"x\"}"));
  EXPECT_EQ(cantFail(planLowerBound(stay)), 0.0);
  // Uneven: 5 elements reduce-scattered over 2 devices. Measured on the
  // ideal tensor (2.5 elements each), the bound stays below the semantics §3
  // cost of the padded buffer: alpha + 1/2 * 20 bytes * beta.
  Mesh two = mesh("<[\"b\"=2]>");
  PlanRequest uneven(two, {5}, 4, layout(two, "[{}], partial = sum {\"b\"}"),
                     layout(two, "[{\"b\"}]"));
  EXPECT_NEAR(cantFail(planLowerBound(uneven)), kAlpha + 10 * kBeta, 1e-15);
  EXPECT_NEAR(cantFail(planReshard(uneven)).cost, kAlpha + 10 * kBeta, 1e-15);
  EXPECT_NEAR(cantFail(planReshard(reduce)).cost, 6 * kAlpha + 1.5 * 64 * kBeta,
              1e-15);
}

// The bytes that must cross a slow axis are priced at its beta. On
// node=2 x gpu=2 with a slow node axis, moving the row split over node to a
// column split: the two devices of node 0 lack rows 512-1023 of columns
// 0-511 (1 MiB), which must cross node; shared by the two, 0.5 MiB each at
// the node's beta. The smallest-beta bound would say 1 MiB at the gpu's.
TEST(Planner, ReportedLowerBoundPricesBytesCrossingEachAxis) {
  Mesh m = mesh("<[\"node\"=2, \"gpu\"=2]>");
  Topology topology;
  topology.axes["node"] = {kAlpha, 1e-9};
  topology.axes["gpu"] = {kAlpha, 1e-12};
  AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(m, topology));
  PlanRequest r(m, {1024, 1024}, 4, layout(m, "[{\"node\"}, {}]"),
                layout(m, "[{}, {\"node\"}]"));
  r.costModel = &model;
  double bound = cantFail(planLowerBound(r));
  EXPECT_NEAR(bound, kAlpha + 0.5 * kMiB * 1e-9, 1e-12);
  Plan plan = cantFail(planReshard(r));
  EXPECT_LE(bound, plan.cost);
  EXPECT_EQ(plan.lowerBound, bound);
}

TEST(Planner, CacheKeyCoversEverythingThePlanDependsOn) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=2]>");
  PlanRequest base(m, {8, 8}, 4, layout(m, "[{\"x\"}, {}]"),
                   layout(m, "[{}, {\"x\"}]"));
  std::string key = planCacheKey(base);
  EXPECT_THAT(key,
              HasSubstr("dist-planner v" + std::to_string(kPlannerVersion)));
  EXPECT_EQ(planCacheKey(base), key);
  std::vector<PlanRequest> variants(5, base);
  variants[0].strategy = Strategy::Greedy;
  variants[1].globalShape = {8, 16};
  variants[2].elementBytes = 2;
  variants[3].target = layout(m, "[{}, {\"y\"}]");
  variants[4].maxPeakBytes = 1000;
  for (const PlanRequest &v : variants)
    EXPECT_NE(planCacheKey(v), key);
  Topology t;
  t.axes["y"] = {2e-5, kBeta};
  AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(m, t));
  PlanRequest withModel = base;
  withModel.costModel = &model;
  EXPECT_NE(planCacheKey(withModel), key);
  Mesh devices = mesh("<[\"x\"=2, \"y\"=2], devices = [3, 2, 1, 0]>");
  PlanRequest other(devices, {8, 8}, 4, base.source, base.target);
  EXPECT_NE(planCacheKey(other), key);
  // The default model and an explicit default-parameter model are the same.
  AlphaBetaCostModel defaults = cantFail(AlphaBetaCostModel::create(m));
  PlanRequest explicitDefaults = base;
  explicitDefaults.costModel = &defaults;
  EXPECT_EQ(planCacheKey(explicitDefaults), key);
}

TEST(Planner, TensorSpecs) {
  TensorSpec s = cantFail(parseTensorSpec("1024x1024xf32"));
  EXPECT_EQ(s.shape, (std::vector<int64_t>{1024, 1024}));
  EXPECT_EQ(s.elementBytes, 4);
  EXPECT_EQ(cantFail(parseTensorSpec("3xbf16")).elementBytes, 2);
  EXPECT_EQ(cantFail(parseTensorSpec("7x1xi1")).elementBytes, 1);
  EXPECT_TRUE(cantFail(parseTensorSpec("f64")).shape.empty());
  EXPECT_THAT(errorOf(parseTensorSpec("4x4xf128")),
              HasSubstr("unknown element type 'f128'"));
  EXPECT_THAT(errorOf(parseTensorSpec("4x0xf32")),
              HasSubstr("dim 1 ('0') is not a positive integer"));
  EXPECT_THAT(errorOf(parseTensorSpec("4x?xf32")), HasSubstr("dynamic"));
  EXPECT_THAT(errorOf(parseTensorSpec("4xx4xf32")), HasSubstr("dim 1"));
}

} // namespace
