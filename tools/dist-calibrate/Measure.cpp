//===- Measure.cpp - dist-calibrate on every rank -------------------------===//
//
// Each sample is the slowest rank's time for one call, started together
// after a barrier; a message size's time is the median over --reps samples
// (two warm-up calls first), the sizes of a sweep interleaved rep by rep. A
// (move, axis) whose timings do not fit a line (CostFit.h: shrinking timings)
// is measured again, up to three times in all, before the calibration fails.
// Buffers come from the backend's memory (distRtAlloc), so the nccl backend
// times device buffers.
//
//===----------------------------------------------------------------------===//

#include "Measure.h"
#include "Sweep.h"

#include "common/CallSpan.h"
#include "common/OutputFile.h"
#include "dist/Planner/CostFit.h"
#include "dist/Planner/Mesh.h"
#include "dist/Runtime/DistRuntime.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>

using namespace dist;
using namespace dist::calibrate;
using planner::MoveKind;

namespace {

/// Below this R^2 a fit is reported as poor (it is still written: the
/// calibration object records the R^2 of every fit).
constexpr double kPoorFit = 0.9;

/// For tests of the retries: DIST_CALIBRATE_SPOIL_ATTEMPTS=N replaces the
/// timings of the first N attempts of every fit with ones that shrink as
/// messages grow (which no line fits), as a burst of load can.
int spoiledAttempts() {
  static const int n = [] {
    const char *text = std::getenv("DIST_CALIBRATE_SPOIL_ATTEMPTS");
    return text ? std::atoi(text) : 0;
  }();
  return n;
}

/// One traffic pattern's line: its parameters, fit and timings.
struct PatternFit {
  planner::AxisCostParams params;
  planner::LineFit quality;
  int attempts = 1;
  /// What was fitted: bytes per device and the median time, per size.
  std::vector<planner::TimingSample> samples;
};

/// A fitted (axis, move) for the file: one pattern, or for the
/// redistribute the even and the uneven exchange (`uneven` set) whose
/// parameters `params` averages.
struct Fit {
  std::string axis;
  MoveKind kind;
  planner::AxisCostParams params;
  PatternFit measured;
  std::optional<PatternFit> uneven;

  /// The worse of the patterns' fit qualities (semantics §8: one R^2 and
  /// worst residual per fitted pair).
  double r2() const {
    return uneven ? std::min(measured.quality.r2, uneven->quality.r2)
                  : measured.quality.r2;
  }
  double worstRelativeResidual() const {
    return uneven ? std::max(measured.quality.worstRelativeResidual,
                             uneven->quality.worstRelativeResidual)
                  : measured.quality.worstRelativeResidual;
  }
};

class Calibration {
public:
  Calibration(const MeasureOptions &options, const planner::Mesh &mesh)
      : options(options), mesh(mesh) {
    rank = distRtWorldRank();
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    span.emplace(comm);
    std::vector<int64_t> sizes;
    for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
      sizes.push_back(mesh.getAxisSize(a));
    std::vector<int64_t> devices(mesh.getDevices().begin(),
                                 mesh.getDevices().end());
    meshId =
        distRtMeshCreate(int64_t(sizes.size()), sizes.data(), devices.data());
    member = distRtMeshContains(meshId) == 1;
    int64_t largest = 0;
    for (int64_t n : options.sizes)
      largest = std::max(largest, n);
    int64_t p = 1;
    for (unsigned a = 0; a < mesh.getNumAxes(); ++a)
      p = std::max(p, mesh.getAxisSize(a));
    // The largest buffer: an all_gather's result, rounded up to whole
    // elements per member.
    capacity = (largest / 4 + p) * 4 * p;
    send = distRtAlloc(capacity);
    recv = distRtAlloc(capacity);
    int64_t elements = capacity / 4;
    distRtFillZero(1, &elements, send, &one, DIST_RT_F32, nullptr);
    distRtFillZero(1, &elements, recv, &one, DIST_RT_F32, nullptr);
  }
  ~Calibration() {
    distRtFree(send);
    distRtFree(recv);
    MPI_Comm_free(&comm);
  }

  bool ok() const { return send && recv && meshId >= 0; }

  /// Every axis of size > 1, every move; false (after printing why on
  /// rank 0) when one cannot be fitted.
  bool measureAxes() {
    for (unsigned a = 0; a < mesh.getNumAxes(); ++a) {
      int64_t p = mesh.getAxisSize(a);
      if (p == 1)
        continue;
      int64_t axis = a;
      int64_t group = distRtGroup(meshId, 1, &axis);
      for (MoveKind kind : kCalibratedMoves)
        if (!measureMove(a, group, kind))
          return false;
    }
    return true;
  }

  /// Local copies, contiguous and strided, on every rank at once, timed
  /// until the last rank is done: a plan's copies run together, sharing the
  /// node's memory bandwidth (and, where ranks outnumber cores, the cores),
  /// and the next collective waits for the slowest. Measured first: the
  /// gather and all_to_all fits take their own-chunk copies out at this
  /// rate (semantics §3b).
  bool measureLocal() {
    localContiguous = fitLocal(/*strided=*/false);
    localStrided = fitLocal(/*strided=*/true);
    return true;
  }

  /// The device's roofline (semantics §3b "device", §6a): its matrix
  /// product rate and its memory bandwidth, on every rank at once. Without
  /// them a calibrated file priced communication on this machine and
  /// compute at nothing, and dist-partition's auto-sharding, seeing no gain
  /// in splitting work, could replicate it (a Llama layer on 2 x 4 ranks
  /// here: 3.5x slower than with the device). Measured after the local
  /// copies: the bandwidth is theirs.
  bool measureDevice() {
    gemm = fitGemm();
    if (rank == 0 && localContiguous && localContiguous->slope > 0)
      llvm::errs() << "dist-calibrate: device memory bandwidth: "
                   << planner::formatDouble(2 / localContiguous->slope)
                   << " B/s (the contiguous copies' bytes read and written)\n";
    return true;
  }

  int rank = 0;
  std::vector<Fit> fits;
  std::optional<planner::LineFit> localContiguous, localStrided;
  /// The matrix products' fit (x: flops, t: seconds) and their orders.
  std::optional<planner::LineFit> gemm;
  std::vector<int64_t> gemmOrders;
  std::vector<double> gemmSeconds;
  /// The transfer link's fit (its axis empty), and the most messages one
  /// rank sent or received in it.
  std::optional<Fit> transfer;
  int64_t transferMessagesPerRank = 0;

private:
  /// Per call of `calls` (one per message size), the median over `reps`
  /// timed calls of the call's span: from the common start until its
  /// slowest rank has finished, as `dist-run --reps` times programs
  /// (CallSpan: on one node, where ranks may share cores, a rank's own
  /// duration would miss the time it waited for a core). The sizes are
  /// interleaved: each rep times every size once, in alternating order, so
  /// that a load spike or a drift of a shared machine spreads over all sizes
  /// instead of bending the fitted line at the sizes it happened to hit. Each
  /// timed call follows an untimed one of the same size, so that it finds the
  /// caches as a program calling the move again and again does (after a
  /// 64 MiB call, a 1 MiB one would otherwise start cold and take twice as
  /// long). `untilAllDone`: across nodes, each call's time runs until every
  /// rank has finished it. A collective needs no such wait (it cannot end
  /// before its peers join it); local copies do, as a program's copies all
  /// run at once (8 ranks on 2 cores: 2.9e-11 s/B for one rank's copy alone,
  /// 1.9e-10 to 3.9e-10 s/B all at once).
  std::vector<double> timeSweep(const std::vector<std::function<void()>> &calls,
                                int reps, bool untilAllDone = false) {
    for (const std::function<void()> &call : calls) {
      call();
      call();
    }
    distRtSynchronize(nullptr);
    std::vector<std::vector<double>> samples(calls.size());
    for (int r = 0; r < reps; ++r) {
      for (size_t k = 0; k < calls.size(); ++k) {
        const size_t i = r % 2 ? calls.size() - 1 - k : k;
        calls[i]();
        distRtSynchronize(nullptr);
        double seconds = span->time(calls[i], untilAllDone);
        if (seconds < 0)
          runtimeFailed();
        samples[i].push_back(seconds);
      }
    }
    std::vector<double> medians;
    for (std::vector<double> &s : samples) {
      std::nth_element(s.begin(), s.begin() + s.size() / 2, s.end());
      medians.push_back(s[s.size() / 2]);
    }
    return medians;
  }

  /// The runtime failed under a timed call: nothing left to time.
  [[noreturn]] void runtimeFailed() {
    // One write, so that MPI_Abort's banner cannot split the line.
    llvm::errs() << "dist-calibrate: rank " + std::to_string(rank) +
                        ": the runtime failed: " + distRtLastErrorMessage() +
                        "\n";
    MPI_Abort(comm, 1);
    std::abort();
  }

  /// The device `step` places further along `axis` (cyclically): a
  /// permute's neighbour (step 1), a transposition's peers.
  int64_t neighbourIndex(int64_t device, unsigned axis, int64_t step) const {
    std::vector<int64_t> c = mesh.coordinateOf(device);
    int64_t p = mesh.getAxisSize(axis);
    c[axis] = (c[axis] + step + p) % p;
    return mesh.linearIndexOf(c);
  }

  /// The local block [a, p b] of `elements` (a multiple of p) whose dim 1
  /// a transposition splits into p chunks of b columns: rows of up to 256
  /// elements (1 KiB), as a plan's tensors have.
  static std::pair<int64_t, int64_t> transposeBlock(int64_t elements,
                                                    int64_t p) {
    int64_t perChunk = elements / p, b = std::min<int64_t>(256, perChunk);
    while (perChunk % b)
      --b;
    return {perChunk / b, b};
  }

  std::function<void()> callFor(MoveKind kind, unsigned axis, int64_t group,
                                int64_t elements) {
    int64_t p = mesh.getAxisSize(axis);
    if (!member)
      return [] {};
    switch (kind) {
    case MoveKind::AllGather:
      return [=] {
        distRtAllGather(group, send, recv, elements, DIST_RT_F32, nullptr);
      };
    case MoveKind::ReduceScatter:
      return [=] {
        distRtReduceScatter(group, send, recv, elements / p, DIST_RT_F32,
                            DIST_RT_SUM, nullptr);
      };
    case MoveKind::AllReduce:
      return [=] {
        distRtAllReduce(group, send, recv, elements, DIST_RT_F32, DIST_RT_SUM,
                        nullptr);
      };
    case MoveKind::AllToAll: {
      // As compiled plans run it (DistToRuntime's strided all_to_all): the
      // split moves from dim 0 to dim 1 of a row-major [a, p b] block,
      // chunks read and written in place.
      auto [a, b] = transposeBlock(elements, p);
      auto geometry = std::make_shared<std::array<int64_t, 6>>(
          std::array<int64_t, 6>{a, b, p * b, 1, b, 1});
      const int64_t sendChunkStride = b, recvChunkStride = a * b;
      return [=] {
        const int64_t *g = geometry->data();
        distRtAllToAllStrided(group, 2, g, send, g + 2, sendChunkStride, recv,
                              g + 4, recvChunkStride, DIST_RT_F32, nullptr);
      };
    }
    case MoveKind::Permute: {
      int64_t maxRank = 0;
      for (int64_t d = 0; d < mesh.getNumDevices(); ++d)
        maxRank = std::max(maxRank, mesh.rankOfIndex(d));
      auto srcRank = std::make_shared<std::vector<int64_t>>(maxRank + 1, -1);
      auto offsets = std::make_shared<std::vector<int64_t>>(maxRank + 2, 0);
      auto dests = std::make_shared<std::vector<int64_t>>();
      std::vector<int64_t> destOf(maxRank + 1, -1);
      for (int64_t d = 0; d < mesh.getNumDevices(); ++d) {
        (*srcRank)[mesh.rankOfIndex(d)] =
            mesh.rankOfIndex(neighbourIndex(d, axis, -1));
        destOf[mesh.rankOfIndex(d)] =
            mesh.rankOfIndex(neighbourIndex(d, axis, +1));
      }
      for (int64_t r = 0; r <= maxRank; ++r) {
        if (destOf[r] >= 0)
          dests->push_back(destOf[r]);
        (*offsets)[r + 1] = int64_t(dests->size());
      }
      return [=] {
        distRtPermute(meshId, send, recv, elements, DIST_RT_F32,
                      srcRank->data(), offsets->data(), dests->data(), nullptr);
      };
    }
    case MoveKind::Redistribute: {
      // The exchange of the same transposition ([{"x"}, {}] -> [{}, {"x"}]
      // along the axis): each device receives the (a x b) box it lacks
      // from every other member, strided in both buffers; the box it keeps
      // is local work (semantics §3b), not timed here.
      auto [a, b] = transposeBlock(elements, p);
      auto table = std::make_shared<std::vector<int64_t>>();
      for (int64_t d = 0; d < mesh.getNumDevices(); ++d) {
        int64_t i = mesh.coordinateOf(d)[axis];
        for (int64_t k = 1; k < p; ++k) {
          int64_t j = (i + k) % p;
          for (int64_t v : {mesh.rankOfIndex(neighbourIndex(d, axis, k)),
                            mesh.rankOfIndex(d), int64_t(0), i * b, j * a,
                            int64_t(0), a, b})
            table->push_back(v);
        }
      }
      auto shapes = std::make_shared<std::array<int64_t, 4>>(
          std::array<int64_t, 4>{a, p * b, p * a, b});
      int64_t count = int64_t(table->size() / 8);
      return [=] {
        distRtExchange(2, shapes->data(), send, shapes->data() + 2, recv, count,
                       table->data(), DIST_RT_F32, nullptr);
      };
    }
    case MoveKind::AllSlice:
    case MoveKind::ReplicateToPartial:
      break;
    }
    return [] {};
  }

  /// Messages of a whole buffer of `elements`, one per (sender rank,
  /// receiver rank) pair, all at once (one 1-D exchange). Each call owns its
  /// table: the sweep interleaves the sizes' calls.
  std::function<void()>
  wholeBufferExchange(llvm::ArrayRef<std::pair<int64_t, int64_t>> pairs,
                      int64_t elements) {
    auto table = std::make_shared<std::vector<int64_t>>();
    for (auto [from, into] : pairs)
      for (int64_t v : {from, into, int64_t(0), int64_t(0), elements})
        table->push_back(v);
    auto shape = std::make_shared<int64_t>(elements);
    int64_t count = int64_t(pairs.size());
    void *sendBuffer = send, *recvBuffer = recv;
    return [=] {
      distRtExchange(1, shape.get(), sendBuffer, shape.get(), recvBuffer, count,
                     table->data(), DIST_RT_F32, nullptr);
    };
  }

  /// The redistribute's uneven exchange along `axis`: each member with an
  /// odd coordinate receives a whole buffer from the member before it; the
  /// others only send (an odd group's last member sits out). A step's §3
  /// price is its busiest device's, one message of n bytes here.
  std::function<void()> unevenExchangeFor(unsigned axis, int64_t elements) {
    if (!member)
      return [] {};
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (int64_t d = 0; d < mesh.getNumDevices(); ++d)
      if (mesh.coordinateOf(d)[axis] % 2 == 1)
        pairs.emplace_back(mesh.rankOfIndex(neighbourIndex(d, axis, -1)),
                           mesh.rankOfIndex(d));
    return wholeBufferExchange(pairs, elements);
  }

  bool measureMove(unsigned axis, int64_t group, MoveKind kind) {
    const int64_t p = mesh.getAxisSize(axis);
    const std::string name = mesh.getAxis(axis).name;
    const std::string word = planner::stringifyMoveKind(kind).str();
    const std::string label =
        "axis \"" + name + "\" (" + std::to_string(p) + " devices) " + word;
    const std::string subject = word + " on axis \"" + name + "\"";
    auto keepInto = [](std::optional<PatternFit> &into) {
      return
          [&into](planner::AxisCostParams params, planner::LineFit quality,
                  int attempt, llvm::ArrayRef<planner::TimingSample> samples) {
            into = PatternFit{params, quality, attempt, samples.vec()};
          };
    };
    const bool exchange = kind == MoveKind::Redistribute;
    std::optional<PatternFit> measured, uneven;
    if (!measureAndFit(
            exchange ? label + " (even exchange)" : label, subject, p,
            [&](int64_t elements) {
              return callFor(kind, axis, group, elements);
            },
            [&](llvm::ArrayRef<planner::TimingSample> samples,
                planner::LineFit &quality) {
              // The even exchange is timed as a transposition (callFor):
              // p - 1 messages of n / p bytes each, an all_to_all's factors.
              // Its kept box is not copied here, unlike an all_to_all's own
              // chunk, which the slope sheds at local.beta (semantics §3b).
              MoveKind shape = exchange ? MoveKind::AllToAll : kind;
              double localBeta =
                  !exchange && localContiguous ? localContiguous->slope : 0.0;
              return planner::fitAlphaBeta(shape, p, samples, &quality,
                                           localBeta);
            },
            keepInto(measured)))
      return false;
    if (exchange &&
        !measureAndFit(
            label + " (uneven exchange)", subject + " (uneven)", p,
            [&](int64_t elements) { return unevenExchangeFor(axis, elements); },
            [&](llvm::ArrayRef<planner::TimingSample> samples,
                planner::LineFit &quality) {
              // One message of n bytes on the busiest device, a permute's
              // factors.
              return planner::fitAlphaBeta(MoveKind::Permute, p, samples,
                                           &quality);
            },
            keepInto(uneven)))
      return false;
    if (rank != 0)
      return true;
    Fit fit{name, kind, measured->params, *measured, uneven};
    if (uneven) {
      // semantics §8: the redistribute's line lies halfway between its even
      // and its uneven exchange's.
      fit.params = {(measured->params.alpha + uneven->params.alpha) / 2,
                    (measured->params.beta + uneven->params.beta) / 2};
      llvm::errs() << "dist-calibrate: " << label << ": alpha "
                   << planner::formatDouble(fit.params.alpha) << " s, beta "
                   << planner::formatDouble(fit.params.beta)
                   << " s/B (the mean of the two exchanges)\n";
    }
    fits.push_back(std::move(fit));
    return true;
  }

public:
  /// The transfer link to `to` (semantics §3a): every pair of
  /// transferPairs at once, each a message of the sweep's size. The
  /// busiest rank sends or receives k of them, so the step costs
  /// k (alpha + n beta) (semantics §3 redistribute).
  bool measureTransfer(const planner::Mesh &to) {
    std::vector<std::pair<int64_t, int64_t>> pairs = transferPairs(mesh, to);
    std::map<int64_t, int64_t> sent, received;
    int64_t k = 1;
    for (auto [from, into] : pairs) {
      k = std::max(k, ++sent[from]);
      k = std::max(k, ++received[into]);
    }
    return measureAndFit(
        "transfer " + mesh.str() + " -> " + to.str() + " (" +
            std::to_string(pairs.size()) + " messages, at most " +
            std::to_string(k) + " per rank)",
        "the transfer link", 1,
        [&](int64_t elements) { return wholeBufferExchange(pairs, elements); },
        [&](llvm::ArrayRef<planner::TimingSample> samples,
            planner::LineFit &quality)
            -> llvm::Expected<planner::AxisCostParams> {
          llvm::Expected<planner::LineFit> line = planner::fitLine(samples);
          if (!line)
            return line.takeError();
          quality = *line;
          return planner::AxisCostParams{line->intercept / double(k),
                                         line->slope / double(k)};
        },
        [&](planner::AxisCostParams params, planner::LineFit quality,
            int attempt, llvm::ArrayRef<planner::TimingSample> samples) {
          transfer = Fit{"", MoveKind::Redistribute, params,
                         PatternFit{params, quality, attempt, samples.vec()},
                         std::nullopt};
          transferMessagesPerRank = k;
        });
  }

private:
  /// Times `callOf(elements)` over the sweep (whole elements, a multiple of
  /// `multiple`) and fits the timings on rank 0, up to three attempts, each
  /// with twice the timed calls of the one before (a median over more calls
  /// is less likely to be bent again by the load that spoiled the last);
  /// `label` starts the report line, `subject` names it in warnings. False
  /// (after printing why on rank 0) when no attempt fits.
  static constexpr int kAttempts = 3;
  /// The timed calls per size of attempt 1, 2, ...: --reps, doubled at each.
  int repsOfAttempt(int attempt) const { return options.reps << (attempt - 1); }

  bool measureAndFit(
      const std::string &label, const std::string &subject, int64_t multiple,
      const std::function<std::function<void()>(int64_t)> &callOf,
      const std::function<llvm::Expected<planner::AxisCostParams>(
          llvm::ArrayRef<planner::TimingSample>, planner::LineFit &)> &fit,
      const std::function<void(planner::AxisCostParams, planner::LineFit, int,
                               llvm::ArrayRef<planner::TimingSample>)> &keep) {
    for (int attempt = 1; attempt <= kAttempts; ++attempt) {
      const int reps = repsOfAttempt(attempt);
      std::vector<int64_t> elementsOf;
      std::vector<std::function<void()>> calls;
      for (int64_t bytes : options.sizes) {
        elementsOf.push_back(std::max<int64_t>(
            multiple, (bytes / 4 + multiple - 1) / multiple * multiple));
        calls.push_back(callOf(elementsOf.back()));
      }
      std::vector<double> seconds = timeSweep(calls, reps);
      if (attempt <= spoiledAttempts())
        for (size_t i = 0; i < seconds.size(); ++i)
          seconds[i] = 1e-3 / double(i + 1);
      std::vector<planner::TimingSample> samples;
      for (size_t i = 0; i < calls.size(); ++i)
        samples.push_back({double(elementsOf[i] * 4), seconds[i]});
      int fitted = 0;
      if (rank == 0) {
        planner::LineFit quality;
        llvm::Expected<planner::AxisCostParams> params = fit(samples, quality);
        if (params) {
          keep(*params, quality, attempt, samples);
          fitted = 1;
          llvm::errs() << "dist-calibrate: " << label << ": alpha "
                       << planner::formatDouble(params->alpha) << " s, beta "
                       << planner::formatDouble(params->beta) << " s/B (R^2 "
                       << llvm::format("%.4f", quality.r2)
                       << ", worst residual "
                       << llvm::format("%.1f%%",
                                       100 * quality.worstRelativeResidual)
                       << ")\n";
          if (quality.r2 < kPoorFit)
            llvm::errs() << "dist-calibrate: warning: the line explains "
                            "little of the timings of "
                         << subject << " (R^2 below "
                         << llvm::format("%.1f", kPoorFit)
                         << "): the machine is noisy; more --reps, larger "
                            "--sizes or a quieter machine give a better fit\n";
        } else {
          llvm::errs() << "dist-calibrate: " << label << ", attempt " << attempt
                       << " of " << kAttempts << " (" << reps
                       << " timed calls per size): "
                       << llvm::toString(params.takeError()) << "\n";
        }
      }
      MPI_Bcast(&fitted, 1, MPI_INT, 0, comm);
      if (fitted)
        return true;
    }
    if (rank == 0)
      llvm::errs() << "dist-calibrate: error: the timings of " << subject
                   << " fit no line after " << kAttempts << " attempts (up to "
                   << repsOfAttempt(kAttempts)
                   << " timed calls per size); the machine is too noisy for "
                      "this sweep (try more --reps or larger --sizes)\n";
    return false;
  }

  std::optional<planner::LineFit> fitLocal(bool strided) {
    std::vector<int64_t> elementsOf;
    std::vector<std::function<void()>> calls;
    for (int64_t bytes : options.sizes) {
      // A contiguous copy of the buffer, or the strided copy of every
      // other 16-element run of it (a slice of the last dim).
      const int64_t elements = std::max<int64_t>(32, bytes / 4 / 32 * 32);
      elementsOf.push_back(elements);
      calls.push_back([this, elements, strided] {
        int64_t sizes2[2] = {elements / 32, 16};
        int64_t srcStrides[2] = {32, 1}, dstStrides[2] = {16, 1};
        if (strided)
          distRtCopyStrided(2, sizes2, send, srcStrides, recv, dstStrides,
                            DIST_RT_F32, nullptr);
        else
          distRtCopyStrided(1, &elements, send, &one, recv, &one, DIST_RT_F32,
                            nullptr);
      });
    }
    std::vector<double> seconds =
        timeSweep(calls, options.reps, /*untilAllDone=*/true);
    std::vector<planner::TimingSample> samples;
    for (size_t i = 0; i < calls.size(); ++i)
      samples.push_back(
          {double(strided ? elementsOf[i] * 2 : elementsOf[i] * 4),
           seconds[i]});
    if (rank != 0)
      return std::nullopt;
    llvm::Expected<planner::LineFit> fit = planner::fitLine(samples);
    if (!fit) {
      llvm::errs() << "dist-calibrate: local copies ("
                   << (strided ? "strided" : "contiguous")
                   << ") not recorded: " << llvm::toString(fit.takeError())
                   << "\n";
      return std::nullopt;
    }
    llvm::errs() << "dist-calibrate: local copies ("
                 << (strided ? "strided" : "contiguous")
                 << "): " << planner::formatDouble(fit->slope) << " s/B\n";
    return *fit;
  }

  /// Square f32 products C += A B of order n through distRtGemm (what a
  /// compiled program's contractions call: BLAS on the host, cuBLAS on a
  /// GPU), on every rank at once until the last is done, as a plan's
  /// compute runs. The orders double from 16 while A and B fit the send
  /// buffer and C the receive one, up to the first whose call takes 0.1 s
  /// (the largest products reach the peak rate; a slower device stops
  /// sooner). The span agrees on every rank, so every rank picks the same
  /// orders. A line through (2 n^3 flops, seconds), weighted to the large
  /// products as every fit here (CostFit.h), gives the rate as 1 / slope.
  std::optional<planner::LineFit> fitGemm() {
    auto product = [this](int64_t n) {
      return [this, n] {
        distRtGemm(0, 0, n, n, n, send, n, 0,
                   static_cast<float *>(send) + n * n, n, 0, recv, n, 0, 1,
                   DIST_RT_F32, DIST_RT_F32, nullptr);
      };
    };
    std::vector<std::function<void()>> calls;
    for (int64_t n = 16; 2 * n * n * 4 <= capacity; n *= 2) {
      gemmOrders.push_back(n);
      calls.push_back(product(n));
      calls.back()();
      double seconds = span->time(calls.back());
      if (seconds < 0)
        runtimeFailed();
      if (seconds >= 0.1)
        break;
    }
    if (calls.size() < 3) {
      if (rank == 0)
        llvm::errs() << "dist-calibrate: device compute not recorded: the "
                        "buffers of --sizes hold matrix products of order "
                     << (gemmOrders.empty()
                             ? std::string("below 16")
                             : std::to_string(gemmOrders.back()) + " at most")
                     << ", too few orders to fit (raise HI)\n";
      gemmOrders.clear();
      return std::nullopt;
    }
    gemmSeconds = timeSweep(calls, options.reps, /*untilAllDone=*/true);
    if (rank != 0)
      return std::nullopt;
    std::vector<planner::TimingSample> samples;
    for (size_t i = 0; i < calls.size(); ++i)
      samples.push_back({2.0 * double(gemmOrders[i]) * double(gemmOrders[i]) *
                             double(gemmOrders[i]),
                         gemmSeconds[i]});
    llvm::Expected<planner::LineFit> fit = planner::fitLine(samples);
    if (fit && fit->slope <= 0)
      fit = llvm::createStringError("the products' times do not grow with "
                                    "their flops");
    if (!fit) {
      llvm::errs() << "dist-calibrate: device compute not recorded: "
                   << llvm::toString(fit.takeError()) << "\n";
      return std::nullopt;
    }
    llvm::errs() << "dist-calibrate: device compute (f32 matrix products of "
                    "order "
                 << gemmOrders.front() << " to " << gemmOrders.back()
                 << "): " << planner::formatDouble(1 / fit->slope)
                 << " flop/s (R^2 " << llvm::format("%.4f", fit->r2) << ")\n";
    return *fit;
  }

  const MeasureOptions &options;
  const planner::Mesh &mesh;
  MPI_Comm comm;
  /// Times each call as dist-run --reps times programs.
  std::optional<run::CallSpan> span;
  int64_t meshId = -1;
  bool member = false;
  int64_t capacity = 0;
  void *send = nullptr, *recv = nullptr;
  int64_t one = 1;
};

std::string quoted(llvm::StringRef text) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << llvm::json::Value(text.str());
  return out;
}

std::string number(double value) { return planner::formatDouble(value); }

/// ", "points": P, "outliers": O, "attempts": A" of one line's fit.
void writeFitCounts(llvm::raw_ostream &os, const PatternFit &p) {
  os << ", \"points\": " << p.quality.pointsUsed
     << ", \"outliers\": " << p.quality.outliersDropped
     << ", \"attempts\": " << p.attempts;
}

/// The fit's counts and the median time of every size.
void writePattern(llvm::raw_ostream &os, const PatternFit &p) {
  writeFitCounts(os, p);
  os << ", \"seconds\": [";
  for (size_t k = 0; k < p.samples.size(); ++k)
    os << (k ? ", " : "") << number(p.samples[k].seconds);
  os << "]";
}

/// The topology file (semantics §3b): per axis all_gather's parameters as
/// the axis's own and every other move's in "ops", and the provenance.
void writeTopology(llvm::raw_ostream &os, const MeasureOptions &options,
                   const Calibration &calibration, int64_t worldSize) {
  const std::vector<Fit> &fits = calibration.fits;
  const std::optional<planner::LineFit> &contiguous =
      calibration.localContiguous;
  const std::optional<planner::LineFit> &strided = calibration.localStrided;
  const std::optional<Fit> &transfer = calibration.transfer;
  os << "{\"axes\": {";
  std::vector<std::string> axes;
  for (const Fit &f : fits)
    if (std::find(axes.begin(), axes.end(), f.axis) == axes.end())
      axes.push_back(f.axis);
  for (size_t i = 0; i < axes.size(); ++i) {
    const Fit *base = nullptr;
    for (const Fit &f : fits)
      if (f.axis == axes[i] && f.kind == MoveKind::AllGather)
        base = &f;
    os << (i ? ",\n          " : "\n          ") << quoted(axes[i])
       << ": {\"alpha\": " << number(base->params.alpha)
       << ", \"beta\": " << number(base->params.beta) << ", \"ops\": {";
    bool first = true;
    for (const Fit &f : fits) {
      if (f.axis != axes[i] || f.kind == MoveKind::AllGather)
        continue;
      os << (first ? "" : ", ") << "\"" << planner::stringifyMoveKind(f.kind)
         << "\": {\"alpha\": " << number(f.params.alpha)
         << ", \"beta\": " << number(f.params.beta) << "}";
      first = false;
    }
    os << "}}";
  }
  os << "}";
  // semantics §3b: the planner prices local copies at the contiguous rate
  // (the runtime's copies move whole rows of the inner dims; the strided
  // probe's 64-byte runs are its worst case, kept as provenance).
  if (contiguous)
    os << ",\n \"local\": {\"beta\": " << number(contiguous->slope) << "}";
  // semantics §3b "device" (the roofline of §6a): the products' rate, and
  // the contiguous copies' bytes read and written per second.
  const std::optional<planner::LineFit> &gemm = calibration.gemm;
  const bool bandwidth = contiguous && contiguous->slope > 0;
  if (gemm || bandwidth) {
    os << ",\n \"device\": {";
    if (gemm)
      os << "\"flops\": " << number(1 / gemm->slope);
    if (bandwidth)
      os << (gemm ? ", " : "")
         << "\"mem_bw\": " << number(2 / contiguous->slope);
    os << "}";
  }
  // semantics §3a: the link between the two meshes.
  if (transfer)
    os << ",\n \"transfer\": {\"alpha\": " << number(transfer->params.alpha)
       << ", \"beta\": " << number(transfer->params.beta) << "}";
  os << ",\n \"calibration\": {\"tool\": \"dist-calibrate\", \"backend\": "
     << quoted(options.backend) << ", \"ranks\": " << worldSize
     << ", \"mesh\": " << quoted(options.meshText)
     << ", \"sizes\": " << quoted(options.sizesText) << ", \"bytes\": [";
  for (size_t i = 0; i < options.sizes.size(); ++i)
    os << (i ? ", " : "") << options.sizes[i];
  os << "], \"reps\": " << options.reps << ",\n  \"fits\": [";
  for (size_t i = 0; i < fits.size(); ++i) {
    const Fit &f = fits[i];
    os << (i ? ",\n           " : "\n           ")
       << "{\"axis\": " << quoted(f.axis) << ", \"op\": \""
       << planner::stringifyMoveKind(f.kind) << "\", \"r2\": " << number(f.r2())
       << ", \"worst_relative_residual\": "
       << number(f.worstRelativeResidual());
    if (f.uneven) {
      // The two exchanges whose parameters the redistribute's average.
      auto exchange = [&](const char *pattern, const PatternFit &p) {
        os << "{\"pattern\": \"" << pattern
           << "\", \"alpha\": " << number(p.params.alpha)
           << ", \"beta\": " << number(p.params.beta);
        writePattern(os, p);
        os << "}";
      };
      os << ", \"exchanges\": [";
      exchange("even", f.measured);
      os << ", ";
      exchange("uneven", *f.uneven);
      os << "]";
    } else {
      writePattern(os, f.measured);
    }
    os << "}";
  }
  os << "]";
  auto local = [&](const char *key, const std::optional<planner::LineFit> &f) {
    if (f)
      os << ", \"" << key << "\": {\"seconds_per_byte\": " << number(f->slope)
         << ", \"r2\": " << number(f->r2) << "}";
  };
  os << ",\n  \"local_copy\": {\"note\": \"local.beta is the contiguous "
        "rate; the all_gather and all_to_all betas exclude the own chunk "
        "they copy at it\"";
  local("contiguous", contiguous);
  local("strided", strided);
  os << "}";
  if (gemm) {
    os << ",\n  \"device_compute\": {\"note\": \"device.flops is the rate of "
          "f32 matrix products through distRtGemm on every rank at once; "
          "device.mem_bw is 2 / local.beta\", \"orders\": [";
    for (size_t k = 0; k < calibration.gemmOrders.size(); ++k)
      os << (k ? ", " : "") << calibration.gemmOrders[k];
    os << "], \"seconds\": [";
    for (size_t k = 0; k < calibration.gemmSeconds.size(); ++k)
      os << (k ? ", " : "") << number(calibration.gemmSeconds[k]);
    os << "], \"r2\": " << number(gemm->r2) << ", \"worst_relative_residual\": "
       << number(gemm->worstRelativeResidual) << "}";
  }
  if (transfer) {
    os << ",\n  \"transfer\": {\"to_mesh\": " << quoted(options.toMeshText)
       << ", \"messages_per_rank\": " << calibration.transferMessagesPerRank
       << ", \"r2\": " << number(transfer->r2())
       << ", \"worst_relative_residual\": "
       << number(transfer->worstRelativeResidual());
    writeFitCounts(os, transfer->measured);
    os << "}";
  }
  os << "}}\n";
}

} // namespace

std::vector<std::pair<int64_t, int64_t>>
dist::calibrate::transferPairs(const planner::Mesh &from,
                               const planner::Mesh &to) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (int64_t j = 0; j < to.getNumDevices(); ++j) {
    int64_t sender = from.rankOfIndex(j % from.getNumDevices());
    int64_t receiver = to.rankOfIndex(j);
    if (sender != receiver)
      pairs.emplace_back(sender, receiver);
  }
  return pairs;
}

int dist::calibrate::runRank(const MeasureOptions &options) {
  llvm::Expected<planner::Mesh> mesh = planner::Mesh::parse(options.meshText);
  if (!mesh) {
    llvm::errs() << "dist-calibrate: error: --mesh: "
                 << llvm::toString(mesh.takeError()) << "\n";
    return 2;
  }
  std::optional<planner::Mesh> toMesh;
  if (!options.toMeshText.empty()) {
    llvm::Expected<planner::Mesh> parsed =
        planner::Mesh::parse(options.toMeshText);
    if (!parsed) {
      llvm::errs() << "dist-calibrate: error: --to-mesh: "
                   << llvm::toString(parsed.takeError()) << "\n";
      return 2;
    }
    toMesh = std::move(*parsed);
  }
  if (distRtInitWithBackend(options.backend.c_str()) != DIST_RT_OK) {
    std::fprintf(stderr, "dist-calibrate: error: cannot start the %s backend\n",
                 options.backend.c_str());
    return 1;
  }
  // Time the transfers, not the cross-rank signature checks.
  distRtSetValidation(0);
  int code = 0;
  {
    Calibration calibration(options, *mesh);
    // Every rank must agree to go on: one that could not allocate would
    // leave the others waiting in the first collective.
    int ok = calibration.ok() ? 1 : 0, allOk = 0;
    MPI_Allreduce(&ok, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!allOk) {
      if (!ok)
        std::fprintf(stderr,
                     "dist-calibrate: error: rank %lld cannot "
                     "allocate the sweep's buffers\n",
                     (long long)distRtWorldRank());
      code = 1;
    } else if (!calibration.measureLocal() || !calibration.measureDevice() ||
               !calibration.measureAxes() ||
               (toMesh && !calibration.measureTransfer(*toMesh))) {
      code = 1;
    } else if (calibration.rank == 0) {
      if (llvm::Error error = run::writeOutputFile(
              options.output, [&](llvm::raw_pwrite_stream &os) {
                writeTopology(os, options, calibration, distRtWorldSize());
                return llvm::Error::success();
              })) {
        llvm::errs() << "dist-calibrate: error: "
                     << llvm::toString(std::move(error)) << "\n";
        code = 1;
      } else {
        llvm::errs() << "dist-calibrate: wrote " << options.output << "\n";
      }
    }
    MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  distRtFinalize();
  return code;
}
