//===- PlannerRequestFuzzer.cpp - The planner's request path --------------===//
//
// Input: five lines, as dist-plan takes them - mesh, tensor spec, source
// layout, target layout, options - where the options line picks the strategy,
// the move set, a peak limit and a target mesh (a sixth line then). Whatever
// plans must replay, cost at least its lower bound, and round-trip through
// its JSON.

#include "FuzzSupport.h"
#include "Search/Search.h"

#include "dist/Planner/PlanCache.h"
#include "dist/Planner/Planner.h"

#include <cmath>

using namespace dist::planner;
using namespace dist::fuzz;

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  // The harness runs every input on this thread.
  static detail::ScopedSearchOptions scope([] {
    detail::OptimalSearchOptions options;
    options.maxSeconds = kFuzzSearchSeconds;
    return options;
  }());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::vector<llvm::StringRef> f =
      fields(llvm::StringRef(reinterpret_cast<const char *>(data), size), 6);
  llvm::Expected<Mesh> mesh = Mesh::parse(f[0]);
  if (!ok(mesh) || mesh->getNumDevices() > kMaxFuzzedDevices)
    return 0;
  llvm::Expected<TensorSpec> spec = parseTensorSpec(f[1]);
  if (!ok(spec))
    return 0;
  std::optional<Mesh> targetMesh;
  llvm::StringRef options = f[4];
  if (options.contains('m')) {
    llvm::Expected<Mesh> other = Mesh::parse(f[5]);
    if (!ok(other) || other->getNumDevices() > kMaxFuzzedDevices)
      return 0;
    targetMesh = std::move(*other);
  }
  llvm::Expected<Layout> from = parseLayout(*mesh, f[2]);
  llvm::Expected<Layout> to =
      parseLayout(targetMesh ? *targetMesh : *mesh, f[3]);
  if (!ok(from) || !ok(to))
    return 0;
  PlanRequest request(*mesh, spec->shape, spec->elementBytes, *from, *to);
  request.targetMesh = targetMesh;
  request.strategy =
      options.contains('g') ? Strategy::Greedy : Strategy::Optimal;
  request.moves = options.contains('c') ? MoveSet::Collective : MoveSet::All;
  if (size_t at = options.find('p'); at != llvm::StringRef::npos) {
    int64_t limit = 0;
    if (!options.drop_front(at + 1).consumeInteger(10, limit))
      request.maxPeakBytes = limit;
  }
  std::string key = planCacheKey(request);
  llvm::Expected<Plan> plan = planReshard(request);
  if (!ok(plan))
    return 0;
  fuzzCheck(plan->cost >= 0 && std::isfinite(plan->cost), "cost is finite");
  fuzzCheck(plan->cost >= plan->lowerBound * (1 - 1e-9) - 1e-18,
            "cost >= lower bound");
  fuzzCheck(plan->peakBytes >= 0, "peak bytes >= 0");
  for (const PlanStep &step : plan->steps)
    fuzzCheck(step.bytesBefore >= 0 && step.recvBytes >= 0 && step.cost >= 0,
              "step numbers are >= 0");
  Plan replayed = *plan;
  fuzzCheck(ok(replayPlan(request, replayed)), "a plan replays");
  const Mesh *target = targetMesh ? &*targetMesh : nullptr;
  llvm::Expected<Plan> back =
      planFromJSON(*mesh, planToJSON(*mesh, *plan, target), target);
  fuzzCheck(bool(back), "a plan's JSON reads back");
  fuzzCheck(back->steps.size() == plan->steps.size(), "same steps after JSON");
  return 0;
}
