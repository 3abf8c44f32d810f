//===- CostFitTest.cpp - Fitting alpha and beta to timings ----------------===//
//
// The fitter of dist-calibrate (semantics §8) on synthetic timings: known
// parameters are recovered exactly and under noise, local copies come out
// of beta, a wild point is dropped, no latency fits through the origin,
// beta is the large messages' rate and alpha the small messages' latency
// when no line fits every size, and meaningless inputs are errors.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "dist/Planner/CostFit.h"

#include <cmath>
#include <random>

using namespace dist::planner;
using namespace dist::planner::test;
using ::testing::HasSubstr;

namespace {

/// 1 KiB to 64 MiB by powers of 4, as a calibration sweep.
std::vector<double> sweep() {
  std::vector<double> sizes;
  for (double n = 1024; n <= 64.0 * 1024 * 1024; n *= 4)
    sizes.push_back(n);
  return sizes;
}

std::vector<TimingSample> timings(MoveKind kind, int64_t p,
                                  AxisCostParams truth, double noise = 0,
                                  unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(-noise, noise);
  CostFactors f = cantFail(costFactors(kind, p));
  std::vector<TimingSample> out;
  for (double n : sweep())
    out.push_back({n, (f.latency * truth.alpha + f.bandwidth * n * truth.beta) *
                          (1 + jitter(rng))});
  return out;
}

TEST(CostFit, RecoversKnownParametersForEveryKind) {
  const AxisCostParams truth{7e-6, 1.0 / 25e9};
  for (MoveKind kind :
       {MoveKind::AllGather, MoveKind::AllToAll, MoveKind::ReduceScatter,
        MoveKind::AllReduce, MoveKind::Permute, MoveKind::Redistribute}) {
    LineFit quality;
    AxisCostParams fit =
        cantFail(fitAlphaBeta(kind, 4, timings(kind, 4, truth), &quality));
    EXPECT_NEAR(fit.alpha, truth.alpha, 1e-9 * truth.alpha)
        << stringifyMoveKind(kind).str();
    EXPECT_NEAR(fit.beta, truth.beta, 1e-9 * truth.beta);
    EXPECT_NEAR(quality.r2, 1, 1e-12);
    EXPECT_LT(quality.worstRelativeResidual, 1e-9);
    EXPECT_EQ(quality.outliersDropped, 0u);
  }
}

// A gather's timings include copying its own block, an all_to_all's the
// chunk it keeps (semantics §3b): given local.beta the fit takes those out,
// so the planner, which adds them back, prices the measured step.
TEST(CostFit, OwnChunkCopiesComeOutOfBeta) {
  const AxisCostParams truth{7e-6, 1.0 / 25e9};
  const double localBeta = 1.0 / 40e9;
  for (MoveKind kind : {MoveKind::AllGather, MoveKind::AllToAll,
                        MoveKind::ReduceScatter, MoveKind::AllReduce}) {
    CostFactors f = cantFail(costFactors(kind, 4));
    std::vector<TimingSample> samples = timings(kind, 4, truth);
    for (TimingSample &s : samples)
      s.seconds += f.local * s.bytes * localBeta;
    AxisCostParams fit =
        cantFail(fitAlphaBeta(kind, 4, samples, nullptr, localBeta));
    EXPECT_NEAR(fit.alpha, truth.alpha, 1e-9 * truth.alpha)
        << stringifyMoveKind(kind).str();
    EXPECT_NEAR(fit.beta, truth.beta, 1e-9 * truth.beta)
        << stringifyMoveKind(kind).str();
  }
  EXPECT_EQ(cantFail(costFactors(MoveKind::AllGather, 4)).local, 1);
  EXPECT_EQ(cantFail(costFactors(MoveKind::AllToAll, 4)).local, 0.25);
  EXPECT_EQ(cantFail(costFactors(MoveKind::ReduceScatter, 4)).local, 0);
  // A copy rate above the whole step's slope leaves nothing for the links.
  EXPECT_EQ(cantFail(fitAlphaBeta(MoveKind::AllGather, 4,
                                  timings(MoveKind::AllGather, 4, truth),
                                  nullptr, 1e-9))
                .beta,
            0);
}

TEST(CostFit, NoisyTimingsStayClose) {
  const AxisCostParams truth{2e-5, 1.0 / 10e9};
  for (unsigned seed = 1; seed <= 20; ++seed) {
    LineFit quality;
    AxisCostParams fit = cantFail(fitAlphaBeta(
        MoveKind::AllGather, 8,
        timings(MoveKind::AllGather, 8, truth, 0.05, seed), &quality));
    // 5% noise on every point: both parameters within 10%.
    EXPECT_NEAR(fit.alpha, truth.alpha, 0.1 * truth.alpha) << seed;
    EXPECT_NEAR(fit.beta, truth.beta, 0.1 * truth.beta) << seed;
    EXPECT_LE(quality.worstRelativeResidual, 0.11);
  }
}

TEST(CostFit, AWildPointIsDropped) {
  const AxisCostParams truth{1e-5, 1e-10};
  std::vector<TimingSample> samples =
      timings(MoveKind::AllReduce, 2, truth, 0.01);
  samples[3].seconds *= 20; // a page fault, another job, ...
  LineFit quality;
  AxisCostParams fit =
      cantFail(fitAlphaBeta(MoveKind::AllReduce, 2, samples, &quality));
  EXPECT_EQ(quality.outliersDropped, 1u);
  EXPECT_EQ(quality.pointsUsed, samples.size() - 1);
  EXPECT_NEAR(fit.alpha, truth.alpha, 0.05 * truth.alpha);
  EXPECT_NEAR(fit.beta, truth.beta, 0.05 * truth.beta);
}

TEST(CostFit, NoLatencyFitsThroughTheOrigin) {
  // Pure bandwidth, a little below it at the small sizes: the free line's
  // intercept would be negative, which no alpha can mean.
  std::vector<TimingSample> samples;
  for (double n : sweep())
    samples.push_back({n, n * 1e-10 * (n < 10000 ? 0.9 : 1.0)});
  LineFit fit = cantFail(fitLine(samples));
  EXPECT_TRUE(fit.throughOrigin);
  EXPECT_EQ(fit.intercept, 0);
  EXPECT_NEAR(fit.slope, 1e-10, 0.05e-10);
}

TEST(CostFit, CachedSizesDoNotPullBetaDown) {
  // A host's sweep: 5 us of latency, 1e-10 s/B while the buffers stay in
  // the caches (up to 1 MiB), 2e-10 s/B for every byte past that. The large
  // messages carry a plan's time, so beta must be theirs (relative least
  // squares give 1.3e-10 here); alpha stays the small messages' latency.
  const double cached = 1 << 20;
  std::vector<TimingSample> samples;
  for (double n : sweep())
    samples.push_back({n, 5e-6 + std::min(n, cached) * 1e-10 +
                              std::max(0.0, n - cached) * 2e-10});
  LineFit fit = cantFail(fitLine(samples));
  EXPECT_NEAR(fit.slope, 2e-10, 0.1e-10);
  EXPECT_FALSE(fit.throughOrigin);
  EXPECT_GT(fit.intercept, 0);
  EXPECT_LT(fit.intercept, 5e-6);
  // The largest message is priced within 3% of its time (relative least
  // squares: 36% under).
  const TimingSample &largest = samples.back();
  EXPECT_NEAR(fit.intercept + fit.slope * largest.bytes, largest.seconds,
              0.03 * largest.seconds);
}

TEST(CostFit, LatencyIsTheSmallMessages) {
  // A GPU-like sweep: 10 us and 1e-9 s/B for small messages, a faster
  // protocol (5e-10 s/B after 40 us of set-up) from 1 MiB on. A line
  // through the large messages alone would say alpha = 40 us; the small
  // messages, which alpha prices, see about 10.
  std::vector<TimingSample> samples;
  for (double n : sweep())
    samples.push_back(
        {n, n < (1 << 20) ? 10e-6 + n * 1e-9 : 40e-6 + n * 5e-10});
  LineFit fit = cantFail(fitLine(samples));
  EXPECT_NEAR(fit.slope, 5e-10, 0.25e-10);
  EXPECT_GT(fit.intercept, 9e-6);
  EXPECT_LT(fit.intercept, 14e-6);
}

TEST(CostFit, MeaninglessInputsAreErrors) {
  EXPECT_THAT(errorOf(fitLine({{1024, 1e-5}, {4096, 2e-5}})),
              HasSubstr("too few message sizes to fit (2; at least 3"));
  EXPECT_THAT(errorOf(fitLine(
                  {{1024, 1e-5}, {1024, 2e-5}, {1024, 3e-5}, {4096, 1e-5}})),
              HasSubstr("too few message sizes"));
  EXPECT_THAT(errorOf(fitLine({{1, 1e-5}, {2, 0}, {3, 1e-5}})),
              HasSubstr("times must be finite and > 0"));
  EXPECT_THAT(errorOf(fitLine({{1, 1e-5}, {2, NAN}, {3, 1e-5}})),
              HasSubstr("cannot be fitted"));
  std::vector<TimingSample> shrinking;
  for (double n : sweep())
    shrinking.push_back({n, 1e-3 - n * 1e-12});
  EXPECT_THAT(errorOf(fitLine(shrinking)),
              HasSubstr("the timings shrink as messages grow"));
  EXPECT_THAT(errorOf(costFactors(MoveKind::AllGather, 1)),
              HasSubstr("no links to measure"));
  EXPECT_THAT(errorOf(costFactors(MoveKind::AllSlice, 4)),
              HasSubstr("all_slice is local"));
}

} // namespace
