//===- CacheEntryFuzzer.cpp - Plan-cache entries and plan JSON ------------===//
//
// Input: first byte even - a whole cache entry file as found on disk;
// odd - plan JSON, framed into an entry with the right key and checksum
// (what a forger who knows the format writes), so that the JSON reader and
// the replay behind the checksum are reached. An entry that is accepted must
// replay, and never cost less than the optimum (the request plans with
// collectives only, over which the search is exact).

#include "FuzzSupport.h"

#include "dist/Planner/PlanCache.h"
#include "dist/Planner/Planner.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/xxhash.h"

using namespace dist::planner;
using namespace dist::fuzz;

namespace {
struct Fixture {
  Mesh mesh = *Mesh::parse(R"(<["x"=2, "y"=4]>)");
  Mesh other = *Mesh::parse(R"(<["tp"=2], devices = [8, 9]>)");
  PlanRequest request{mesh,
                      {64, 48},
                      4,
                      *parseLayout(mesh, R"([{"x"}, {"y"}])"),
                      *parseLayout(mesh, R"([{"y"}, {"x"}])")};
  // Collectives only: the search is exact over every sequence of them, so
  // no valid plan may cost less than its answer.
  PlanRequest collective() {
    request.moves = MoveSet::Collective;
    return request;
  }
  std::string key = planCacheKey(collective());
  double optimum = planReshard(request)->cost;
};
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const Fixture fixture;
  if (size == 0)
    return 0;
  llvm::StringRef text(reinterpret_cast<const char *>(data) + 1, size - 1);
  std::string entry;
  if (data[0] % 2 == 0) {
    entry = text.str();
  } else {
    std::string checksum =
        llvm::utohexstr(llvm::xxh3_64bits((fixture.key + "\n" + text).str()),
                        /*LowerCase=*/true, /*Width=*/16);
    entry = (PlanCache::kFormat + "\nkey " + llvm::Twine(fixture.key.size()) +
             "\n" + fixture.key + "\nplan " + llvm::Twine(text.size()) + "\n" +
             text + "\nchecksum " + checksum + "\n")
                .str();
  }
  const Mesh *target = data[0] % 4 == 3 ? &fixture.other : nullptr;
  llvm::Expected<Plan> plan =
      parseCacheEntry(entry, fixture.key, fixture.mesh, target);
  if (!ok(plan))
    return 0;
  if (!ok(replayPlan(fixture.request, *plan)))
    return 0;
  fuzzCheck(plan->cost >= fixture.optimum * (1 - 1e-9),
            "no valid plan beats the optimal one");
  fuzzCheck(bool(planFromJSON(fixture.mesh,
                              planToJSON(fixture.mesh, *plan, target), target)),
            "an accepted plan's JSON reads back");
  return 0;
}
