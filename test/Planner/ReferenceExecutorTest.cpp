//===- ReferenceExecutorTest.cpp - The simulated devices themselves -------===//

#include "ReferenceExecutor.h"
#include "TestUtil.h"

using namespace dist::planner;
using namespace dist::planner::test;
using ::testing::HasSubstr;

namespace {

TEST(ReferenceExecutor, MaterialisesPaddedBlocks) {
  // 5 elements over x=2: blocks [0,3) and [3,5) + one padding slot.
  Mesh m = mesh("<[\"x\"=2]>");
  ReferenceExecutor exec(m, {5});
  DistributedTensor t = exec.materialise(layout(m, "[{\"x\"}]"), exec.iota());
  EXPECT_EQ(t.buffers[0], (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(t.buffers[1], (std::vector<double>{3, 4, 0}));
  EXPECT_EQ(errorOf(exec.check(t, exec.iota())), "<success>");
}

TEST(ReferenceExecutor, PartialInputsFollowSpecSection5) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=2]>");
  ReferenceExecutor exec(m, {2});
  std::vector<double> global = {5, 7};
  // Coordinate 0 on the partial axis holds the value, the others the
  // identity: 0 for sum, 1 for prod, the value itself for max.
  DistributedTensor sum =
      exec.materialise(layout(m, "[{}], partial = sum {\"y\"}"), global);
  EXPECT_EQ(sum.buffers[m.linearIndexOf({1, 0})], (std::vector<double>{5, 7}));
  EXPECT_EQ(sum.buffers[m.linearIndexOf({1, 1})], (std::vector<double>{0, 0}));
  DistributedTensor prod =
      exec.materialise(layout(m, "[{}], partial = prod {\"y\"}"), global);
  EXPECT_EQ(prod.buffers[m.linearIndexOf({0, 1})], (std::vector<double>{1, 1}));
  DistributedTensor max =
      exec.materialise(layout(m, "[{}], partial = max {\"x\", \"y\"}"), global);
  EXPECT_EQ(max.buffers[3], (std::vector<double>{5, 7}));
  for (const DistributedTensor *t : {&sum, &prod, &max})
    EXPECT_EQ(errorOf(exec.check(*t, global)), "<success>");
}

TEST(ReferenceExecutor, RandomSplitsStillReduceToTheValue) {
  Mesh m = mesh("<[\"x\"=3, \"y\"=2]>");
  ReferenceExecutor exec(m, {4, 3});
  for (const char *kind : {"sum", "max", "min", "avg", "prod"}) {
    Layout l =
        layout(m, std::string("[{}, {\"y\"}], partial = ") + kind + " {\"x\"}");
    DistributedTensor t = exec.materialise(
        l, exec.iota(), ReferenceExecutor::PartialInput::RandomSplit, 3);
    EXPECT_EQ(errorOf(exec.check(t, exec.iota())), "<success>") << kind;
  }
}

TEST(ReferenceExecutor, CollectivesMoveTheRightData) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=3]>");
  ReferenceExecutor exec(m, {7, 6});
  std::vector<double> g = exec.iota();
  DistributedTensor t =
      exec.materialise(layout(m, "[{}, {\"x\"}], partial = sum {\"y\"}"), g,
                       ReferenceExecutor::PartialInput::RandomSplit, 5);
  for (const Move &move :
       {Move::reduceScatter({1}, 0, ReductionKind::Sum),
        Move::allToAll({1}, 0, 1), Move::allGather({0, 1}, 1),
        Move::allSlice({1, 0}, 0)}) {
    llvm::Expected<DistributedTensor> next = exec.apply(t, move);
    ASSERT_TRUE(bool(next)) << llvm::toString(next.takeError());
    t = std::move(*next);
    EXPECT_EQ(errorOf(exec.check(t, g)), "<success>") << printMove(m, move);
  }
  EXPECT_EQ(printLayout(m, t.layout), "[{\"y\", \"x\"}, {}]");
  Layout target = layout(m, "[{\"x\", \"y\"}, {}]");
  llvm::Expected<DistributedTensor> permuted =
      exec.apply(t, Move::permute(m, t.layout, target));
  ASSERT_TRUE(bool(permuted));
  EXPECT_EQ(errorOf(exec.check(*permuted, g)), "<success>");
}

TEST(ReferenceExecutor, RejectsStepsThatDoNotHoldTheirData) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=4]>");
  ReferenceExecutor exec(m, {10});
  DistributedTensor t = exec.materialise(layout(m, "[{\"x\"}]"), exec.iota());
  // Blocks of 5 do not split into blocks of 2.
  EXPECT_THAT(errorOf(exec.apply(t, Move::allSlice({1}, 0))),
              HasSubstr("are not unions of"));
}

TEST(ReferenceExecutor, RunChecksEveryLayoutAndTheResult) {
  Mesh m = mesh("<[\"x\"=2]>");
  ReferenceExecutor exec(m, {4});
  Layout from = layout(m, "[{\"x\"}]"), to = layout(m, "[{}]");
  Plan plan;
  PlanStep step;
  step.move = Move::allGather({0}, 0);
  step.layout = to;
  plan.steps.push_back(step);
  EXPECT_EQ(errorOf(exec.run(from, to, plan)), "<success>");
  plan.steps[0].layout = from;
  EXPECT_THAT(errorOf(exec.run(from, to, plan)),
              HasSubstr("step 1 ends at [{}] but the plan says [{\"x\"}]"));
  EXPECT_THAT(errorOf(exec.run(from, from, Plan())), "<success>");
  EXPECT_THAT(errorOf(exec.run(from, to, Plan())),
              HasSubstr("the plan ends at [{\"x\"}], not at [{}]"));
}

} // namespace
