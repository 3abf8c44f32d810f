//===- PipelineScheduleTest.cpp - the pipeline simulator ------------------===//
//
// Against the closed forms for uniform stages ((S + M - 1) stage times;
// 1F1B's step equal to GPipe's with at most S - s activations in flight),
// against lower bounds on random models (no stage computes faster than its
// own work, no microbatch faster than its path through the stages), and
// chooseMicrobatches against trying every M.
//
//===----------------------------------------------------------------------===//

#include "dist/Planner/PipelineSchedule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

using namespace dist::planner::pipeline;
using ::testing::HasSubstr;

namespace {

PipelineModel uniform(int64_t stages, int64_t microbatches, double forward,
                      double backward, double handoff, Schedule schedule) {
  PipelineModel model;
  model.stages.assign(stages, {forward, backward});
  model.handoffs.assign(stages - 1, {handoff, handoff});
  model.microbatches = microbatches;
  model.schedule = schedule;
  model.backward = backward > 0;
  return model;
}

SimulatedStep run(const PipelineModel &model) {
  llvm::Expected<SimulatedStep> step = simulate(model);
  EXPECT_TRUE(bool(step)) << (step ? "" : llvm::toString(step.takeError()));
  return step ? *step : SimulatedStep();
}

TEST(PipelineSchedule, ForwardOnlyTakesStagesPlusMicrobatchesMinusOne) {
  for (Schedule schedule : {Schedule::GPipe, Schedule::OneFOneB})
    for (int64_t s : {1, 2, 4, 7})
      for (int64_t m : {1, 2, 3, 8}) {
        SimulatedStep step = run(uniform(s, m, 1.0, 0, 0, schedule));
        EXPECT_DOUBLE_EQ(step.stepSeconds, double(s + m - 1));
        EXPECT_NEAR(step.bubbleFraction, double(s - 1) / double(s + m - 1),
                    1e-12);
      }
}

TEST(PipelineSchedule, OneFOneBMatchesGPipeWithFewerActivations) {
  for (int64_t s : {2, 4, 5})
    for (int64_t m : {1, 3, 4, 8}) {
      SimulatedStep gpipe = run(uniform(s, m, 1.0, 2.0, 0, Schedule::GPipe));
      SimulatedStep ofob = run(uniform(s, m, 1.0, 2.0, 0, Schedule::OneFOneB));
      // Uniform stages: both take (S + M - 1)(f + b).
      EXPECT_DOUBLE_EQ(gpipe.stepSeconds, 3.0 * double(s + m - 1));
      EXPECT_DOUBLE_EQ(ofob.stepSeconds, gpipe.stepSeconds);
      for (int64_t st = 0; st < s; ++st) {
        EXPECT_EQ(gpipe.peakInFlight[st], m);
        EXPECT_EQ(ofob.peakInFlight[st], std::min(s - st, m)) << st;
      }
    }
}

TEST(PipelineSchedule, HandOffsOverlapUnlessTold) {
  // Forward-only, 4 stages, 8 microbatches of 1 s, hand-offs of 0.25 s:
  // overlapped, they add 3 x 0.25 s to the first microbatch's path;
  // blocking, every stage but the last pays 0.25 s per microbatch.
  PipelineModel model = uniform(4, 8, 1.0, 0, 0.25, Schedule::GPipe);
  EXPECT_DOUBLE_EQ(run(model).stepSeconds, 11.0 + 0.75);
  model.overlapHandoffs = false;
  EXPECT_DOUBLE_EQ(run(model).stepSeconds, 8 * 1.25 + 2 * 1.25 + 1.0);
}

TEST(PipelineSchedule, NeverFasterThanItsBounds) {
  std::mt19937 rng(46);
  std::uniform_real_distribution<double> cost(0.1, 2.0);
  for (int round = 0; round < 300; ++round) {
    int64_t s = 1 + rng() % 6, m = 1 + rng() % 9;
    PipelineModel model;
    model.backward = rng() % 2;
    model.schedule = rng() % 2 ? Schedule::GPipe : Schedule::OneFOneB;
    model.overlapHandoffs = rng() % 2;
    model.microbatches = m;
    for (int64_t i = 0; i < s; ++i)
      model.stages.push_back({cost(rng), model.backward ? cost(rng) : 0});
    for (int64_t i = 0; i + 1 < s; ++i)
      model.handoffs.push_back({cost(rng) / 4, cost(rng) / 4});
    SimulatedStep step = run(model);
    double path = 0;
    for (int64_t i = 0; i < s; ++i) {
      const StageCost &c = model.stages[i];
      double work = double(m) * (c.forward + c.backward);
      EXPECT_GE(step.stepSeconds, work * (1 - 1e-12));
      path += c.forward + c.backward;
      if (i + 1 < s)
        path += model.handoffs[i].forward +
                (model.backward ? model.handoffs[i].backward : 0);
    }
    EXPECT_GE(step.stepSeconds, path * (1 - 1e-12));
    EXPECT_GE(step.bubbleFraction, -1e-12);
    EXPECT_LT(step.bubbleFraction, 1.0);
    // Every task once, none before its input.
    EXPECT_EQ(int64_t(step.timeline.size()), s * m * (model.backward ? 2 : 1));
  }
}

TEST(PipelineSchedule, RefusesBadModels) {
  PipelineModel model = uniform(2, 4, 1.0, 0, 0, Schedule::GPipe);
  model.handoffs.clear();
  EXPECT_THAT(llvm::toString(simulate(model).takeError()),
              HasSubstr("needs one hand-off per pair of adjacent stages (1)"));
  model = uniform(2, 0, 1.0, 0, 0, Schedule::GPipe);
  EXPECT_THAT(llvm::toString(simulate(model).takeError()),
              HasSubstr("needs 1 to 1048576 microbatches, got 0"));
  model = uniform(2, 2, -1.0, 0, 0, Schedule::GPipe);
  EXPECT_THAT(llvm::toString(simulate(model).takeError()),
              HasSubstr("costs must be finite seconds >= 0"));
  EXPECT_EQ(parseSchedule("1f1b"), Schedule::OneFOneB);
  EXPECT_EQ(parseSchedule("zb"), std::nullopt);
}

// A batch split M ways: each stage's compute shrinks with M, each hand-off
// keeps a latency; activations shrink with M but more are in flight.
TEST(PipelineSchedule, ChoosesTheFastestMicrobatchCountThatFits) {
  MicrobatchCosts costs;
  costs.model = [](int64_t m) {
    return uniform(4, m, 8.0 / double(m) + 0.05, 16.0 / double(m) + 0.05,
                   1e-2 + 0.5 / double(m), Schedule::OneFOneB);
  };
  costs.stageBytes = [](int64_t, int64_t m, int64_t inFlight) {
    return 1000.0 + double(inFlight) * 4096.0 / double(m);
  };
  for (std::optional<double> budget :
       {std::optional<double>(), std::optional<double>(2400.0)}) {
    llvm::Expected<MicrobatchChoice> chosen =
        chooseMicrobatches(costs, 32, budget);
    ASSERT_TRUE(bool(chosen)) << llvm::toString(chosen.takeError());
    double best = 1e300;
    int64_t bestM = 0;
    for (int64_t m = 1; m <= 32; ++m) {
      SimulatedStep step = run(costs.model(m));
      double most = 0;
      for (int64_t s = 0; s < 4; ++s)
        most = std::max(most, costs.stageBytes(s, m, step.peakInFlight[s]));
      if (budget && most > *budget)
        continue;
      if (step.stepSeconds < best * (1 - 1e-12)) {
        best = step.stepSeconds;
        bestM = m;
      }
    }
    EXPECT_EQ(chosen->microbatches, bestM);
    EXPECT_DOUBLE_EQ(chosen->step.stepSeconds, best);
    EXPECT_GT(bestM, 1);
  }
  llvm::Expected<MicrobatchChoice> none =
      chooseMicrobatches(costs, 32, /*budget=*/500.0);
  ASSERT_FALSE(bool(none));
  EXPECT_THAT(llvm::toString(none.takeError()),
              HasSubstr("no number of microbatches up to 32 fits 500 bytes "
                        "per device"));
}

} // namespace
