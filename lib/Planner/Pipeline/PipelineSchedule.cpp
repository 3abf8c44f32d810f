//===- PipelineSchedule.cpp - microbatch schedules, simulated -------------===//

#include "dist/Planner/PipelineSchedule.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace dist::planner::pipeline;

llvm::StringRef dist::planner::pipeline::stringifySchedule(Schedule schedule) {
  return schedule == Schedule::GPipe ? "gpipe" : "1f1b";
}

std::optional<Schedule>
dist::planner::pipeline::parseSchedule(llvm::StringRef text) {
  if (text == "gpipe")
    return Schedule::GPipe;
  if (text == "1f1b")
    return Schedule::OneFOneB;
  return std::nullopt;
}

namespace {

constexpr int64_t kMaxStages = 1 << 12;
constexpr int64_t kMaxMicrobatches = 1 << 20;
constexpr int64_t kMaxTasks = int64_t(1) << 24;

llvm::Error bad(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "pipeline model: " + message);
}

bool validCost(double seconds) {
  return std::isfinite(seconds) && seconds >= 0;
}

llvm::Error verifyModel(const PipelineModel &model) {
  const int64_t stages = model.stages.size();
  if (stages < 1 || stages > kMaxStages)
    return bad("needs 1 to " + llvm::Twine(kMaxStages) + " stages, got " +
               llvm::Twine(stages));
  if (int64_t(model.handoffs.size()) != stages - 1)
    return bad("needs one hand-off per pair of adjacent stages (" +
               llvm::Twine(stages - 1) + "), got " +
               llvm::Twine(model.handoffs.size()));
  if (model.microbatches < 1 || model.microbatches > kMaxMicrobatches)
    return bad("needs 1 to " + llvm::Twine(kMaxMicrobatches) +
               " microbatches, got " + llvm::Twine(model.microbatches));
  if (stages * model.microbatches * (model.backward ? 2 : 1) > kMaxTasks)
    return bad("has more than " + llvm::Twine(kMaxTasks) + " tasks");
  for (const std::vector<StageCost> *costs : {&model.stages, &model.handoffs})
    for (const StageCost &c : *costs)
      if (!validCost(c.forward) || !validCost(c.backward))
        return bad("costs must be finite seconds >= 0");
  return llvm::Error::success();
}

/// A stage's tasks in its schedule's order: (microbatch, backward).
std::vector<std::pair<int64_t, bool>> stageOrder(const PipelineModel &model,
                                                 int64_t stage) {
  const int64_t m = model.microbatches, s = model.stages.size();
  std::vector<std::pair<int64_t, bool>> order;
  if (!model.backward || model.schedule == Schedule::GPipe) {
    for (int64_t i = 0; i < m; ++i)
      order.push_back({i, false});
    if (model.backward)
      for (int64_t i = 0; i < m; ++i)
        order.push_back({i, true});
    return order;
  }
  // 1F1B: fill with the forwards the later stages need first, then one
  // forward and one backward in turn, then the remaining backwards.
  const int64_t warmup = std::min(s - stage - 1, m);
  for (int64_t i = 0; i < warmup; ++i)
    order.push_back({i, false});
  for (int64_t i = 0; i < m - warmup; ++i) {
    order.push_back({warmup + i, false});
    order.push_back({i, true});
  }
  for (int64_t i = m - warmup; i < m; ++i)
    order.push_back({i, true});
  return order;
}

} // namespace

llvm::Expected<SimulatedStep>
dist::planner::pipeline::simulate(const PipelineModel &model) {
  if (llvm::Error error = verifyModel(model))
    return std::move(error);
  const int64_t stages = model.stages.size(), m = model.microbatches;
  const double unknown = -1;
  // End times of every microbatch's forward and backward on every stage.
  std::vector<std::vector<double>> forwardEnd(stages,
                                              std::vector<double>(m, unknown));
  std::vector<std::vector<double>> backwardEnd = forwardEnd;
  std::vector<std::vector<std::pair<int64_t, bool>>> orders;
  for (int64_t s = 0; s < stages; ++s)
    orders.push_back(stageOrder(model, s));
  std::vector<size_t> next(stages, 0);
  std::vector<double> free(stages, 0);
  std::vector<std::vector<Task>> tasks(stages);
  // When the input of a task has arrived, or `unknown` when its producer
  // has not run yet.
  auto ready = [&](int64_t s, int64_t mb, bool backward) -> double {
    if (!backward)
      return s == 0 ? 0
             : forwardEnd[s - 1][mb] < 0
                 ? unknown
                 : forwardEnd[s - 1][mb] + model.handoffs[s - 1].forward;
    if (forwardEnd[s][mb] < 0)
      return unknown;
    if (s + 1 == stages)
      return forwardEnd[s][mb];
    if (backwardEnd[s + 1][mb] < 0)
      return unknown;
    return std::max(forwardEnd[s][mb],
                    backwardEnd[s + 1][mb] + model.handoffs[s].backward);
  };
  size_t remaining = 0;
  for (const auto &order : orders)
    remaining += order.size();
  while (remaining > 0) {
    size_t progress = 0;
    for (int64_t s = 0; s < stages; ++s) {
      while (next[s] < orders[s].size()) {
        auto [mb, backward] = orders[s][next[s]];
        double at = ready(s, mb, backward);
        if (at < 0)
          break;
        const StageCost &cost = model.stages[s];
        double start = std::max(free[s], at);
        double end = start + (backward ? cost.backward : cost.forward);
        (backward ? backwardEnd : forwardEnd)[s][mb] = end;
        tasks[s].push_back({s, mb, backward, start, end});
        free[s] = end;
        // A hand-off that is not overlapped keeps its sender busy.
        if (!model.overlapHandoffs) {
          if (!backward && s + 1 < stages)
            free[s] += model.handoffs[s].forward;
          if (backward && s > 0)
            free[s] += model.handoffs[s - 1].backward;
        }
        ++next[s];
        ++progress;
        --remaining;
      }
    }
    if (progress == 0)
      return bad("the schedule's orders wait on each other (internal error)");
  }
  SimulatedStep step;
  double busy = 0;
  for (int64_t s = 0; s < stages; ++s) {
    int64_t held = 0, peak = model.backward ? 0 : 1;
    for (const Task &t : tasks[s]) {
      busy += t.end - t.start;
      step.stepSeconds = std::max(step.stepSeconds, t.end);
      if (model.backward) {
        held += t.backward ? -1 : 1;
        peak = std::max(peak, held + (t.backward ? 1 : 0));
      }
      step.timeline.push_back(t);
    }
    step.peakInFlight.push_back(peak);
  }
  step.bubbleFraction =
      step.stepSeconds > 0 ? 1 - busy / (double(stages) * step.stepSeconds) : 0;
  return step;
}

llvm::Expected<MicrobatchChoice>
dist::planner::pipeline::chooseMicrobatches(const MicrobatchCosts &costs,
                                            int64_t maxMicrobatches,
                                            std::optional<double> budget) {
  if (maxMicrobatches < 1 || maxMicrobatches > kMaxMicrobatches)
    return bad("microbatches=auto searches 1 to at most " +
               llvm::Twine(kMaxMicrobatches) + " microbatches");
  std::optional<MicrobatchChoice> best;
  double leanest = std::numeric_limits<double>::infinity();
  int64_t leanestAt = 0;
  for (int64_t m = 1; m <= maxMicrobatches; ++m) {
    llvm::Expected<SimulatedStep> step = simulate(costs.model(m));
    if (!step)
      return step.takeError();
    double most = 0;
    for (int64_t s = 0; s < int64_t(step->peakInFlight.size()); ++s)
      most = std::max(most, costs.stageBytes(s, m, step->peakInFlight[s]));
    if (most < leanest) {
      leanest = most;
      leanestAt = m;
    }
    if (budget && most > *budget)
      continue;
    if (!best || step->stepSeconds < best->step.stepSeconds * (1 - 1e-12))
      best = MicrobatchChoice{m, std::move(*step)};
  }
  if (!best)
    return bad("no number of microbatches up to " +
               llvm::Twine(maxMicrobatches) + " fits " +
               llvm::Twine(int64_t(*budget)) + " bytes per device (the " +
               "leanest, " + llvm::Twine(leanestAt) + " microbatches, needs " +
               llvm::Twine(int64_t(std::ceil(leanest))) + ")");
  return *best;
}
