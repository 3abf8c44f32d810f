//===- CostFit.cpp - Alpha and beta from measured timings -----------------===//

#include "dist/Planner/CostFit.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <vector>

using namespace dist::planner;
using llvm::Expected;

static llvm::Error fail(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

namespace {
/// How much a point counts in a weighted least-squares fit: relative
/// weights (1/t^2) make every point's relative miss count alike; time
/// weights (1/t) count each point's relative miss in proportion to its
/// time (its squared miss over t, as a chi-square statistic does).
enum class Weighting { Relative, Time };

double weightOf(const TimingSample &p, Weighting weighting) {
  return weighting == Weighting::Relative ? 1 / (p.seconds * p.seconds)
                                          : 1 / p.seconds;
}

/// Weighted least squares over `points`; with `throughOrigin` the
/// intercept is fixed at 0.
LineFit solve(const std::vector<TimingSample> &points, Weighting weighting,
              bool throughOrigin) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const TimingSample &p : points) {
    double w = weightOf(p, weighting);
    sw += w;
    sx += w * p.bytes;
    sy += w * p.seconds;
    sxx += w * p.bytes * p.bytes;
    sxy += w * p.bytes * p.seconds;
  }
  LineFit fit;
  fit.throughOrigin = throughOrigin;
  if (throughOrigin) {
    fit.slope = sxx > 0 ? sxy / sxx : 0;
  } else {
    double det = sw * sxx - sx * sx;
    fit.slope = det != 0 ? (sw * sxy - sx * sy) / det : 0;
    fit.intercept = (sy - fit.slope * sx) / sw;
  }
  fit.pointsUsed = points.size();
  return fit;
}

/// The intercept that makes the relative misses of `points` smallest for
/// a given slope, at least 0.
double relativeIntercept(const std::vector<TimingSample> &points,
                         double slope) {
  double sw = 0, swr = 0;
  for (const TimingSample &p : points) {
    double w = weightOf(p, Weighting::Relative);
    sw += w;
    swr += w * (p.seconds - slope * p.bytes);
  }
  return std::max(0.0, swr / sw);
}

/// R^2 (time-weighted, as the slope is fitted) and the worst relative
/// residual of `fit` over `points`.
void scoreFit(LineFit &fit, const std::vector<TimingSample> &points) {
  double sw = 0, sy = 0;
  for (const TimingSample &p : points) {
    double w = weightOf(p, Weighting::Time);
    sw += w;
    sy += w * p.seconds;
  }
  double mean = sy / sw, ssRes = 0, ssTot = 0;
  fit.worstRelativeResidual = 0;
  for (const TimingSample &p : points) {
    double w = weightOf(p, Weighting::Time);
    double predicted = fit.intercept + fit.slope * p.bytes;
    ssRes += w * (p.seconds - predicted) * (p.seconds - predicted);
    ssTot += w * (p.seconds - mean) * (p.seconds - mean);
    fit.worstRelativeResidual =
        std::max(fit.worstRelativeResidual,
                 std::fabs(predicted - p.seconds) / p.seconds);
  }
  fit.r2 = ssTot > 0 ? 1 - ssRes / ssTot : 1;
}

size_t distinctSizes(const std::vector<TimingSample> &points) {
  std::set<double> sizes;
  for (const TimingSample &p : points)
    sizes.insert(p.bytes);
  return sizes.size();
}
} // namespace

Expected<LineFit> dist::planner::fitLine(llvm::ArrayRef<TimingSample> samples) {
  std::vector<TimingSample> points(samples.begin(), samples.end());
  for (const TimingSample &p : points)
    if (!std::isfinite(p.seconds) || p.seconds <= 0 ||
        !std::isfinite(p.bytes) || p.bytes < 0)
      return fail("a timing of " + formatDouble(p.seconds) + " s at " +
                  formatDouble(p.bytes) +
                  " bytes cannot be fitted (times must be finite and > 0, "
                  "sizes finite and >= 0)");
  if (distinctSizes(points) < 3)
    return fail("too few message sizes to fit (" +
                llvm::Twine(distinctSizes(points)) +
                "; at least 3 are needed)");
  // Outliers are judged against the relative fit, under which a point's
  // miss means the same at every size.
  LineFit fit = solve(points, Weighting::Relative, false);
  // One pass of outlier rejection: points whose relative residual is far
  // above the typical one (at most a fifth of them, and only while 3 sizes
  // remain) are dropped.
  std::vector<double> residuals;
  for (const TimingSample &p : points)
    residuals.push_back(
        std::fabs(fit.intercept + fit.slope * p.bytes - p.seconds) / p.seconds);
  std::vector<double> sorted = residuals;
  std::sort(sorted.begin(), sorted.end());
  double typical = sorted[sorted.size() / 2];
  double cut = std::max(0.25, 5 * typical);
  std::vector<size_t> order(points.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return residuals[a] > residuals[b]; });
  std::vector<bool> drop(points.size(), false);
  size_t dropped = 0, maxDrop = points.size() / 5;
  for (size_t i : order) {
    if (dropped >= maxDrop || residuals[i] <= cut)
      break;
    drop[i] = true;
    ++dropped;
  }
  if (dropped) {
    std::vector<TimingSample> kept;
    for (size_t i = 0; i < points.size(); ++i)
      if (!drop[i])
        kept.push_back(points[i]);
    if (distinctSizes(kept) >= 3)
      points = std::move(kept);
    else
      dropped = 0;
  }
  // The slope from the time-weighted fit, the intercept from the relative
  // one (see the header: each where it decides a plan's cost).
  fit = solve(points, Weighting::Time, false);
  if (fit.intercept < 0)
    fit = solve(points, Weighting::Time, true);
  fit.intercept = relativeIntercept(points, fit.slope);
  fit.throughOrigin = fit.intercept == 0;
  scoreFit(fit, points);
  fit.outliersDropped = dropped;
  if (fit.slope < 0)
    return fail("the timings shrink as messages grow (fitted slope " +
                formatDouble(fit.slope) +
                " s/byte): the measurement is too noisy to fit");
  return fit;
}

Expected<CostFactors> dist::planner::costFactors(MoveKind kind, int64_t p) {
  if (p < 2)
    return fail("a group of " + llvm::Twine(p) +
                " device has no links to measure");
  const double q = double(p);
  switch (kind) {
  case MoveKind::AllGather:
    return CostFactors{q - 1, q - 1, 1};
  case MoveKind::AllToAll:
    return CostFactors{q - 1, (q - 1) / q, 1 / q};
  case MoveKind::ReduceScatter:
    return CostFactors{q - 1, (q - 1) / q};
  case MoveKind::AllReduce:
    return CostFactors{2 * (q - 1), 2 * (q - 1) / q};
  case MoveKind::Permute:
  case MoveKind::Redistribute:
    return CostFactors{1, 1};
  case MoveKind::AllSlice:
  case MoveKind::ReplicateToPartial:
    break;
  }
  return fail(stringifyMoveKind(kind) + " is local: it has no link "
                                        "parameters to fit");
}

Expected<AxisCostParams>
dist::planner::fitAlphaBeta(MoveKind kind, int64_t p,
                            llvm::ArrayRef<TimingSample> samples,
                            LineFit *quality, double localBeta) {
  Expected<CostFactors> factors = costFactors(kind, p);
  if (!factors)
    return factors.takeError();
  Expected<LineFit> fit = fitLine(samples);
  if (!fit)
    return fit.takeError();
  if (quality)
    *quality = *fit;
  double linkSlope = std::max(0.0, fit->slope - factors->local * localBeta);
  return AxisCostParams{fit->intercept / factors->latency,
                        linkSlope / factors->bandwidth};
}
