//===- CostFit.h - alpha and beta from timings (§8) -------------*- C++ -*-===//
//
// dist-calibrate times each move at a sweep of message sizes and fits the
// parameters of semantics §3/§3b to them. A move of `kind` over a group of
// p devices costs latency(kind, p) * alpha + bandwidth(kind, p) * n * beta,
// so a straight line t = intercept + slope * n through the timings gives
// alpha = intercept / latency and beta = slope / bandwidth.
//
// The sizes span five orders of magnitude, and on a host no straight line
// fits them all: a sweep's middle sizes stay in the caches and run faster
// per byte than its largest, which stream from memory (8 ranks on 2 cores
// here: the largest all_gathers take 1.5-2x the per-byte time of the 1 MiB
// ones). So each parameter is fitted where it decides a plan's cost. The
// slope comes from least squares weighted by 1/t, each point's squared
// relative miss counted in proportion to its time: the large messages,
// where a plan's time goes, decide beta. (Relative least squares, weights
// 1/t^2, let the many cache-resident sizes pull beta down by a quarter,
// and the planner under-priced every large step; semantics §8.) The
// intercept then comes from relative least squares at that slope, so the
// latency is what the small messages see and not the remainder of a line
// through the large ones. One pass of outlier rejection, judged against the
// relative fit, first drops points far off the line; a negative intercept
// is fixed at 0 (no latency seen); a negative slope is an error (the
// timings do not grow with size).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PLANNER_COSTFIT_H
#define DIST_PLANNER_COSTFIT_H

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Move.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

namespace dist::planner {

/// One measurement: `bytes` per device before the step (the n of §3) and
/// the step's time in seconds (the slowest rank's).
struct TimingSample {
  double bytes = 0;
  double seconds = 0;
};

/// A fitted line and how well it explains the points it kept.
struct LineFit {
  double intercept = 0, slope = 0;
  /// Coefficient of determination, time-weighted as the slope is fitted,
  /// 1 = perfect.
  double r2 = 0;
  /// The largest |fit - t| / t over the points kept.
  double worstRelativeResidual = 0;
  size_t pointsUsed = 0, outliersDropped = 0;
  /// The intercept came out negative and was fixed at 0.
  bool throughOrigin = false;
};

/// Fits t = intercept + slope * n. Errors: fewer than 3 distinct sizes, a
/// non-finite or non-positive time or a negative size, a negative slope.
llvm::Expected<LineFit> fitLine(llvm::ArrayRef<TimingSample> samples);

/// semantics §3: the step over p devices costs latency * alpha + bandwidth *
/// n * beta. For a permute and a redistribute, one message of n bytes.
/// `local`: the bytes the step copies within the device per byte of n
/// (semantics §3b: a gather's own block, an all_to_all's kept chunk), which
/// the timings include and local.beta prices apart.
struct CostFactors {
  double latency = 0, bandwidth = 0, local = 0;
};
/// Errors for local moves (no link parameters) and p < 2.
llvm::Expected<CostFactors> costFactors(MoveKind kind, int64_t p);

/// alpha and beta of `kind` on a group of p devices from its timings. With
/// `localBeta` (local.beta, semantics §3b) the step's local copy is taken
/// out of the fitted slope first, so that beta prices what crosses the
/// links and the planner, adding the copy back, prices the whole step; a
/// slope the copy alone exceeds gives beta 0.
llvm::Expected<AxisCostParams>
fitAlphaBeta(MoveKind kind, int64_t p, llvm::ArrayRef<TimingSample> samples,
             LineFit *quality = nullptr, double localBeta = 0);

} // namespace dist::planner

#endif // DIST_PLANNER_COSTFIT_H
