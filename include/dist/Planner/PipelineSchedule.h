//===- PipelineSchedule.h - microbatch schedules, simulated -----*- C++ -*-===//
//
// The cost side of pipelines (semantics §3c; issue 46): stages that each
// compute a part of the program per microbatch and hand their results to
// the next stage through planned reshards. Given each stage's modelled time
// per microbatch (forward, and backward for a training step) and each
// hand-off's, simulate() plays a schedule (GPipe or 1F1B) and returns the
// step time, the bubble fraction and, per stage, the activations in flight;
// chooseMicrobatches() picks the number of microbatches with the smallest
// step time within a memory budget. MLIR-free, like the rest of the
// planner.
//
// The model: a stage runs one task at a time (a microbatch's forward or
// backward), in its schedule's order, as soon as its input has arrived; a
// hand-off starts when the producing task ends and takes its modelled time,
// overlapped with the stages' compute (non-blocking exchanges: the sender
// is free at once) unless `overlapHandoffs` is false (then the sending
// stage is busy until it has sent). A microbatch's backward on a stage
// needs its own forward there and, past the last stage, the next stage's
// backward of it.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_PLANNER_PIPELINESCHEDULE_H
#define DIST_PLANNER_PIPELINESCHEDULE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace dist::planner::pipeline {

enum class Schedule {
  /// Every microbatch's forward, then every backward (GPipe).
  GPipe,
  /// A few forwards to fill the pipe, then one forward and one backward in
  /// turn (PipeDream-Flush's 1F1B): the same step time as GPipe with at
  /// most (stages - stage) activations in flight instead of every
  /// microbatch's.
  OneFOneB,
};
llvm::StringRef stringifySchedule(Schedule schedule); // "gpipe", "1f1b"
std::optional<Schedule> parseSchedule(llvm::StringRef text);

/// Modelled seconds of one microbatch.
struct StageCost {
  double forward = 0;
  double backward = 0; // 0 and no backward: a forward-only program
};

struct PipelineModel {
  /// Per stage, in pipeline order.
  std::vector<StageCost> stages;
  /// Per hand-off from stage s to s + 1 (stages.size() - 1 of them): the
  /// forward's activation and the backward's gradient.
  std::vector<StageCost> handoffs;
  int64_t microbatches = 1;
  Schedule schedule = Schedule::GPipe;
  /// Whether backward tasks exist (a training step).
  bool backward = false;
  bool overlapHandoffs = true;
};

/// One task of the simulated timeline.
struct Task {
  int64_t stage, microbatch;
  bool backward;
  double start, end;
};

struct SimulatedStep {
  double stepSeconds = 0;
  /// 1 - (time the stages compute) / (stages x step time).
  double bubbleFraction = 0;
  /// Per stage: the most microbatches whose forward ran there and whose
  /// backward had not yet (their activations are held); forward-only: 1.
  std::vector<int64_t> peakInFlight;
  /// Every task, by stage and then in the stage's order.
  std::vector<Task> timeline;
};

/// Checks `model` (at least one stage, one hand-off fewer, at least one
/// microbatch, costs finite and >= 0) and plays its schedule.
llvm::Expected<SimulatedStep> simulate(const PipelineModel &model);

/// What M microbatches cost: the model for M (per-microbatch times shrink
/// with the batch; latencies do not) and each stage's bytes held at once
/// with `inFlight` activations of one microbatch each.
struct MicrobatchCosts {
  std::function<PipelineModel(int64_t microbatches)> model;
  std::function<double(int64_t stage, int64_t microbatches, int64_t inFlight)>
      stageBytes;
};
struct MicrobatchChoice {
  int64_t microbatches = 0;
  SimulatedStep step;
};
/// The M in [1, maxMicrobatches] with the smallest simulated step time
/// whose every stage's bytes fit `budget` (none: unlimited); ties go to the
/// fewest microbatches. An error when no M fits, naming the leanest.
llvm::Expected<MicrobatchChoice>
chooseMicrobatches(const MicrobatchCosts &costs, int64_t maxMicrobatches,
                   std::optional<double> budget);

} // namespace dist::planner::pipeline

#endif // DIST_PLANNER_PIPELINESCHEDULE_H
