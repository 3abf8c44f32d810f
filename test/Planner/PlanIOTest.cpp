//===- PlanIOTest.cpp - semantics §4 JSON and the table -------------------===//

#include "TestUtil.h"

#include "dist/Planner/Planner.h"

using namespace dist::planner;
using namespace dist::planner::test;
using ::testing::HasSubstr;

namespace {

Plan plan(const Mesh &m, std::vector<int64_t> shape, llvm::StringRef from,
          llvm::StringRef to, MoveSet moves = MoveSet::All) {
  PlanRequest request(m, shape, 4, layout(m, from), layout(m, to));
  request.moves = moves;
  return cantFail(planReshard(request));
}

const double kBeta = 1.0 / 370e9;

TEST(PlanJSON, GatherIsExactlySpecShaped) {
  // 8 x f32 over x=2: each device holds 16 bytes; one all_gather costs
  // (p-1) alpha + (p-1) n beta with p = 2, n = 16.
  Mesh m = mesh("<[\"x\"=2]>");
  Plan p = plan(m, {8}, "[{\"x\"}]", "[{}]");
  std::string c = formatDouble(1 * 1e-5 + 1 * 16.0 * kBeta);
  EXPECT_EQ(
      planToJSON(m, p),
      "{\"strategy\": \"optimal\", \"cost\": " + c +
          ", \"peak_bytes\": 48, \"lower_bound\": " + c +
          ", \"cache\": \"off\", \"steps\": [{\"op\": \"all_gather\", "
          "\"axes\": [\"x\"], \"dim\": 0, \"bytes\": 16, \"recv_bytes\": 16, "
          "\"cost\": " +
          c + ", \"layout\": \"[{}]\"}]}");
}

TEST(PlanJSON, ToDimOnlyForAllToAll) {
  Mesh m = mesh("<[\"x\"=2]>");
  Plan p = plan(m, {4, 4}, "[{\"x\"}, {}]", "[{}, {\"x\"}]");
  std::string c = formatDouble(1e-5 + 0.5 * 32 * kBeta);
  EXPECT_EQ(planToJSON(m, p),
            "{\"strategy\": \"optimal\", \"cost\": " + c +
                ", \"peak_bytes\": 64, \"lower_bound\": " + c +
                ", \"cache\": \"off\", \"steps\": [{\"op\": \"all_to_all\", "
                "\"axes\": [\"x\"], \"dim\": 0, \"to_dim\": 1, \"bytes\": 32, "
                "\"recv_bytes\": 16, \"cost\": " +
                c + ", \"layout\": \"[{}, {\\\"x\\\"}]\"}]}");
}

TEST(PlanJSON, ReductionAndNullDim) {
  // all_reduce (2 alpha + 32 beta) ties with reduce_scatter + all_gather
  // ((alpha + 16 beta) twice); the tie goes to fewer steps.
  Mesh m = mesh("<[\"x\"=2]>");
  Plan p = plan(m, {8}, "[{}], partial = sum {\"x\"}", "[{}]");
  ASSERT_EQ(p.steps.size(), 1u);
  EXPECT_THAT(planToJSON(m, p),
              HasSubstr("{\"op\": \"all_reduce\", \"axes\": [\"x\"], \"dim\": "
                        "null, \"reduction\": \"sum\", \"bytes\": 32, "));
}

TEST(PlanJSON, EmptyPlan) {
  Mesh m = mesh("<[\"x\"=2]>");
  Plan p = plan(m, {8}, "[{\"x\"}]", "[{\"x\"}]");
  EXPECT_EQ(planToJSON(m, p),
            "{\"strategy\": \"optimal\", \"cost\": 0, \"peak_bytes\": 16, "
            "\"lower_bound\": 0, \"cache\": \"off\", \"steps\": []}");
}

TEST(PlanJSON, RoundTripsThroughPlanFromJSON) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=2, \"z\"=2]>");
  Plan p = plan(m, {8, 6, 4}, "[{\"x\"}, {\"y\"}, {}], partial = max {\"z\"}",
                "[{\"y\"}, {}, {\"x\"}]");
  p.cache = CacheStatus::Miss;
  std::string json = planToJSON(m, p);
  Plan back = cantFail(planFromJSON(m, json));
  EXPECT_EQ(planToJSON(m, back), json);
  ASSERT_EQ(back.steps.size(), p.steps.size());
  for (size_t i = 0; i < p.steps.size(); ++i) {
    EXPECT_EQ(back.steps[i].move, p.steps[i].move) << i;
    EXPECT_EQ(back.steps[i].layout, p.steps[i].layout) << i;
  }
  // Replaying recomputes every number, and agrees.
  PlanRequest request(
      m, {8, 6, 4}, 4,
      layout(m, "[{\"x\"}, {\"y\"}, {}], partial = max {\"z\"}"),
      layout(m, "[{\"y\"}, {}, {\"x\"}]"));
  Plan replayed = back;
  ASSERT_EQ(errorOf(replayPlan(request, replayed)), "<success>");
  EXPECT_EQ(planToJSON(m, replayed), json);
}

TEST(PlanJSON, PermuteReadsItsTargetFromTheLayout) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=2]>");
  Plan p = plan(m, {8}, "[{\"x\", \"y\"}]", "[{\"y\", \"x\"}]");
  ASSERT_EQ(p.steps.size(), 1u);
  ASSERT_EQ(p.steps[0].move.kind, MoveKind::Permute);
  std::string json = planToJSON(m, p);
  EXPECT_THAT(json, HasSubstr("\"op\": \"permute\", \"axes\": [\"x\", \"y\"], "
                              "\"dim\": null, \"bytes\": 8"));
  Plan back = cantFail(planFromJSON(m, json));
  EXPECT_EQ(back.steps[0].move, p.steps[0].move);
}

TEST(PlanJSON, ReadErrorsSayWhat) {
  Mesh m = mesh("<[\"x\"=2]>");
  EXPECT_THAT(errorOf(planFromJSON(m, "{")), HasSubstr("plan JSON:"));
  const char *base = R"({"strategy": "optimal", "cost": 0, "peak_bytes": 0,
      "lower_bound": 0, "steps": [%s]})";
  auto with = [&](const char *step) {
    char buf[512];
    snprintf(buf, sizeof(buf), base, step);
    return errorOf(planFromJSON(m, buf));
  };
  EXPECT_EQ(with(""), "<success>");
  EXPECT_THAT(with(R"({"op": "teleport"})"),
              HasSubstr("unknown op \"teleport\""));
  EXPECT_THAT(with(R"({"op": "all_gather", "axes": ["q"], "dim": 0})"),
              HasSubstr("axis \"q\" is not in mesh"));
  EXPECT_THAT(with(R"({"op": "all_gather", "axes": ["x"]})"),
              HasSubstr("step 1 needs an integer \"dim\""));
  EXPECT_THAT(with(R"({"op": "all_reduce", "axes": ["x"], "dim": null,
                       "reduction": "mean"})"),
              HasSubstr("unknown reduction \"mean\""));
  EXPECT_THAT(with(R"({"op": "all_gather", "axes": ["x"], "dim": 0,
                       "bytes": 4, "cost": 0, "layout": "[{\"q\"}]"})"),
              HasSubstr("is not an axis of mesh"));
  EXPECT_THAT(errorOf(planFromJSON(m, R"({"strategy": "best"})")),
              HasSubstr("unknown strategy \"best\""));
}

// Plan JSON comes from cache entries another user may have
// written; 60k levels of nesting must be an error, not a stack overflow.
TEST(PlanJSON, DeeplyNestedPlanIsAnError) {
  Mesh m = mesh("<[\"x\"=2]>");
  std::string deep =
      R"({"steps": )" + std::string(60000, '[') + std::string(60000, ']') + "}";
  EXPECT_EXIT(
      {
        boundThisProcess(20, 1024);
        std::string why = errorOf(planFromJSON(m, deep));
        std::fprintf(stderr, "%s\n", why.c_str());
        std::exit(0);
      },
      testing::ExitedWithCode(0),
      "plan JSON: JSON nested more than 64 levels deep \\(at byte 73\\)");
}

TEST(PlanJSON, RedistributeRoundTrips) {
  // A transpose of shards on 2x4: one point-to-point step.
  Mesh m = mesh("<[\"x\"=2, \"y\"=4]>");
  Plan p = plan(m, {1024, 1024}, "[{\"x\"}, {\"y\"}]", "[{\"y\"}, {\"x\"}]");
  ASSERT_EQ(p.steps.size(), 1u);
  std::string json = planToJSON(m, p);
  EXPECT_THAT(json, HasSubstr("{\"op\": \"redistribute\", \"axes\": [], "
                              "\"dim\": null, \"bytes\": 524288, "
                              "\"recv_bytes\": 524288, "));
  Plan back = cantFail(planFromJSON(m, json));
  ASSERT_EQ(back.steps.size(), 1u);
  EXPECT_EQ(back.steps[0].move, p.steps[0].move);
  EXPECT_EQ(back.steps[0].recvBytes, 524288);
}

TEST(PlanJSON, SegmentsOfASplitRoundTrip) {
  // A partial GEMM output reduce-scattered into a fused layout: the step
  // names the segments it gives the dim, and reading it back (as the plan
  // cache does) restores them.
  Mesh m = mesh("<[\"tp\"=4]>");
  Plan p = plan(m, {96, 8}, "[{}, {}], partial = sum {\"tp\"}",
                "[{\"tp\"} segments [64, 16, 16], {}]");
  ASSERT_EQ(p.steps.size(), 1u);
  std::string json = planToJSON(m, p);
  EXPECT_THAT(json, HasSubstr("\"dim\": 0, \"segments\": [64, 16, 16], "
                              "\"reduction\": \"sum\""));
  Plan back = cantFail(planFromJSON(m, json));
  ASSERT_EQ(back.steps.size(), 1u);
  EXPECT_EQ(back.steps[0].move, p.steps[0].move);
  std::string gather = json;
  gather.replace(gather.find("reduce_scatter"), 14, "all_gather");
  EXPECT_THAT(errorOf(planFromJSON(m, gather)),
              HasSubstr("\"segments\" is an array of integers on an "
                        "all_slice, reduce_scatter or all_to_all"));
}

TEST(PlanTable, ListsStepsAndTotals) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=4]>");
  Plan p = plan(m, {1024, 1024}, "[{\"x\"}, {\"y\"}]", "[{\"y\"}, {\"x\"}]",
                MoveSet::Collective);
  std::string table = printPlanTable(m, p);
  EXPECT_THAT(table, HasSubstr("step  op          axes   dims      bytes    "
                               "recv  cost (us)  layout after\n"));
  EXPECT_THAT(table, HasSubstr("   1  all_gather  {\"x\"}  0        524288  "
                               "524288     11.417  [{}, {\"y\"}]\n"));
  EXPECT_THAT(table, HasSubstr("optimal plan: 3 steps, cost 43.542 us, peak "
                               "2097152 bytes per device, lower bound"));
}

} // namespace
