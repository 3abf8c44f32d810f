//===- PlanCacheTest.cpp - The two-level plan cache -----------------------===//

#include "TestUtil.h"

#include "dist/Planner/PlanCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <atomic>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

using namespace dist::planner;
using namespace dist::planner::test;

namespace {

/// A fresh directory under the system temp dir, removed afterwards.
class TempDir {
public:
  TempDir() {
    llvm::SmallString<128> path;
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("dist-plan-cache", path));
    dir = std::string(path);
  }
  ~TempDir() { llvm::sys::fs::remove_directories(dir); }
  const std::string &path() const { return dir; }

private:
  std::string dir;
};

PlanRequest request(llvm::StringRef from, llvm::StringRef to,
                    std::vector<int64_t> shape = {64, 64}) {
  Mesh m = mesh(R"(<["x"=2, "y"=4]>)");
  Layout src = layout(m, from), dst = layout(m, to);
  return PlanRequest(m, std::move(shape), 4, src, dst);
}

size_t countEntries(const std::string &dir) {
  size_t count = 0;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec))
    if (llvm::sys::path::extension(it->path()) == ".plan")
      ++count;
  return count;
}

struct Warnings {
  std::vector<std::string> messages;
  PlanCache::WarningHandler handler() {
    return [this](llvm::StringRef m) { messages.push_back(m.str()); };
  }
};

/// Writes `contents` where the cache in `dir` keeps the entry for `key` (what
/// another user of a shared directory can do).
void plantEntry(const TempDir &dir, const std::string &key,
                const std::string &contents) {
  std::string path = PlanCache({dir.path()}).entryPath(key);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  ASSERT_FALSE(ec);
  os << contents;
}

TEST(PlanCacheTest, MemoryHitReturnsTheSamePlan) {
  PlanCache cache({});
  PlanRequest req = request(R"([{"x"}, {"y"}])", R"([{"y"}, {"x"}])");
  llvm::Expected<Plan> first = cache.getOrPlan(req);
  ASSERT_TRUE(!!first) << llvm::toString(first.takeError());
  EXPECT_EQ(first->cache, CacheStatus::Miss);
  llvm::Expected<Plan> second = cache.getOrPlan(req);
  ASSERT_TRUE(!!second);
  EXPECT_EQ(second->cache, CacheStatus::Hit);
  EXPECT_THAT(planToJSON(req.mesh, *second),
              testing::HasSubstr("\"cache\": \"hit\""));
  ASSERT_EQ(first->steps.size(), second->steps.size());
  for (size_t i = 0; i < first->steps.size(); ++i)
    EXPECT_TRUE(first->steps[i].move == second->steps[i].move);
  EXPECT_FALSE(cache.isPersistent());
}

TEST(PlanCacheTest, DiskEntriesSurviveANewCacheObject) {
  TempDir dir;
  PlanRequest req = request(R"([{"x"}, {}])", R"([{}, {"x", "y"}])");
  std::string json;
  {
    PlanCache cache({dir.path()});
    ASSERT_TRUE(cache.isPersistent());
    llvm::Expected<Plan> plan = cache.getOrPlan(req);
    ASSERT_TRUE(!!plan);
    EXPECT_EQ(plan->cache, CacheStatus::Miss);
    json = planToJSON(req.mesh, *plan);
  }
  EXPECT_EQ(countEntries(dir.path()), 1u);
  PlanCache again({dir.path()});
  llvm::Expected<Plan> plan = again.getOrPlan(req);
  ASSERT_TRUE(!!plan);
  EXPECT_EQ(plan->cache, CacheStatus::Hit);
  // Identical but for the cache field.
  std::string expected = json;
  expected.replace(expected.find("\"miss\""), 6, "\"hit\"");
  EXPECT_EQ(planToJSON(req.mesh, *plan), expected);
}

TEST(PlanCacheTest, EntryRoundTripsAndDetectsCollisions) {
  PlanRequest req = request(R"([{"x"}, {"y"}])", R"([{}, {}])");
  llvm::Expected<Plan> plan = planReshard(req);
  ASSERT_TRUE(!!plan);
  std::string key = planCacheKey(req);
  std::string entry = serializeCacheEntry(key, req.mesh, *plan);
  llvm::Expected<Plan> back = parseCacheEntry(entry, key, req.mesh);
  ASSERT_TRUE(!!back) << llvm::toString(back.takeError());
  EXPECT_EQ(planToJSON(req.mesh, *back), planToJSON(req.mesh, *plan));
  // Another request whose file name happened to collide.
  EXPECT_EQ(errorOf(parseCacheEntry(entry, key + "x", req.mesh)),
            "it holds another request (hash collision)");
}

TEST(PlanCacheTest, DamagedEntriesAreReportedPrecisely) {
  PlanRequest req = request(R"([{"x"}, {"y"}])", R"([{}, {}])");
  llvm::Expected<Plan> plan = planReshard(req);
  ASSERT_TRUE(!!plan);
  std::string key = planCacheKey(req);
  std::string entry = serializeCacheEntry(key, req.mesh, *plan);

  EXPECT_EQ(errorOf(parseCacheEntry("", key, req.mesh)),
            "format '' is not dist-plan-cache-v1");
  EXPECT_EQ(errorOf(parseCacheEntry(entry.substr(0, entry.size() / 2), key,
                                    req.mesh)),
            "the 'plan' section is truncated");
  std::string flipped = entry;
  flipped[flipped.find("all_gather")] = 'A';
  EXPECT_EQ(errorOf(parseCacheEntry(flipped, key, req.mesh)),
            "checksum mismatch (the entry is corrupted)");
  std::string noChecksum = entry.substr(0, entry.find("checksum"));
  EXPECT_EQ(errorOf(parseCacheEntry(noChecksum, key, req.mesh)),
            "missing checksum");
}

TEST(PlanCacheTest, ReplaysStoredPlansInsteadOfTrustingThem) {
  // A well-formed entry (right key, right checksum) whose moves do not lead
  // to the target is rejected by the replay and recomputed.
  TempDir dir;
  PlanRequest req = request(R"([{"x"}, {"y"}])", R"([{}, {}])");
  PlanRequest other = request(R"([{"x"}, {"y"}])", R"([{}, {"y"}])");
  llvm::Expected<Plan> wrong = planReshard(other);
  ASSERT_TRUE(!!wrong);
  Warnings warnings;
  PlanCache cache({dir.path()}, warnings.handler());
  std::string key = planCacheKey(req);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(cache.entryPath(key), ec);
    ASSERT_FALSE(ec);
    os << serializeCacheEntry(key, req.mesh, *wrong);
  }
  llvm::Expected<Plan> plan = cache.getOrPlan(req);
  ASSERT_TRUE(!!plan);
  EXPECT_EQ(plan->cache, CacheStatus::Miss);
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_THAT(warnings.messages[0],
              testing::HasSubstr("its plan does not replay"));
  // Rewritten: the next cache object hits without a warning.
  Warnings later;
  PlanCache again({dir.path()}, later.handler());
  llvm::Expected<Plan> hit = again.getOrPlan(req);
  ASSERT_TRUE(!!hit);
  EXPECT_EQ(hit->cache, CacheStatus::Hit);
  EXPECT_TRUE(later.messages.empty());
}

TEST(PlanCacheTest, BothLevelsEvictTheLeastRecentlyUsed) {
  TempDir dir;
  PlanCache::Options options;
  options.directory = dir.path();
  options.maxEntries = 10;
  PlanCache cache(options);
  std::vector<PlanRequest> requests;
  for (int64_t n = 8; n < 8 + 30; ++n)
    requests.push_back(request(R"([{"x"}, {"y"}])", R"([{}, {}])", {n, 16}));
  for (const PlanRequest &req : requests)
    ASSERT_TRUE(!!cache.getOrPlan(req));
  EXPECT_LE(countEntries(dir.path()), 10u);
  EXPECT_GE(countEntries(dir.path()), 8u);
  // The most recent one is still in memory; the first one is gone from both
  // levels and is planned again.
  llvm::Expected<Plan> recent = cache.getOrPlan(requests.back());
  ASSERT_TRUE(!!recent);
  EXPECT_EQ(recent->cache, CacheStatus::Hit);
  llvm::Expected<Plan> old = cache.getOrPlan(requests.front());
  ASSERT_TRUE(!!old);
  EXPECT_EQ(old->cache, CacheStatus::Miss);
}

TEST(PlanCacheTest, UnusableDirectoryDegradesToMemory) {
  TempDir dir;
  std::string file = dir.path() + "/file";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec);
    os << "x";
  }
  Warnings warnings;
  PlanCache cache({file + "/cache"}, warnings.handler());
  EXPECT_FALSE(cache.isPersistent());
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_THAT(warnings.messages[0],
              testing::HasSubstr("keeping plans in memory only"));
  PlanRequest req = request(R"([{"x"}, {}])", R"([{}, {}])");
  ASSERT_TRUE(!!cache.getOrPlan(req));
  llvm::Expected<Plan> hit = cache.getOrPlan(req);
  ASSERT_TRUE(!!hit);
  EXPECT_EQ(hit->cache, CacheStatus::Hit);
}

TEST(PlanCacheTest, InvalidRequestsAreErrorsNotEntries) {
  TempDir dir;
  PlanCache cache({dir.path()});
  PlanRequest bad = request(R"([{"x"}, {"y"}])", R"([{}, {}])", {64});
  EXPECT_NE(errorOf(cache.getOrPlan(bad)), "<success>");
  EXPECT_EQ(countEntries(dir.path()), 0u);
}

TEST(PlanCacheTest, ConcurrentThreadsAgree) {
  TempDir dir;
  PlanCache cache({dir.path()});
  std::vector<PlanRequest> requests;
  for (int64_t n = 16; n < 24; ++n)
    requests.push_back(
        request(R"([{"x"}, {"y"}])", R"([{"y"}, {"x"}])", {n * 4, 64}));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int round = 0; round < 3; ++round)
        for (const PlanRequest &req : requests) {
          llvm::Expected<Plan> plan = cache.getOrPlan(req);
          if (!plan) {
            llvm::consumeError(plan.takeError());
            failures++;
          }
        }
    });
  for (std::thread &thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(countEntries(dir.path()), requests.size());
  PlanCache fresh({dir.path()});
  for (const PlanRequest &req : requests) {
    llvm::Expected<Plan> plan = fresh.getOrPlan(req);
    ASSERT_TRUE(!!plan);
    EXPECT_EQ(plan->cache, CacheStatus::Hit);
  }
}

} // namespace

namespace {
// A cross-mesh plan goes to disk and comes back (its steps after the
// transfer name the target mesh's axes), and its key tells the two meshes
// and the transfer link apart.
TEST(PlanCacheTest, CrossMeshPlansRoundTripThroughDisk) {
  TempDir dir;
  Mesh s0 = mesh(R"(<["tp"=4], devices = [0, 1, 2, 3]>)");
  Mesh s1 = mesh(R"(<["dp"=2, "tp"=2], devices = [4, 5, 6, 7]>)");
  PlanRequest r(s0, {64, 64}, 4, layout(s0, R"([{"tp"}, {}])"),
                layout(s1, R"([{}, {"tp"}])"));
  r.targetMesh = s1;
  PlanCache::Options options;
  options.directory = dir.path();
  Plan first;
  {
    PlanCache cache(options);
    first = cantFail(cache.getOrPlan(r));
    EXPECT_EQ(first.cache, CacheStatus::Miss);
  }
  PlanCache fresh(options);
  Plan again = cantFail(fresh.getOrPlan(r));
  EXPECT_EQ(again.cache, CacheStatus::Hit);
  ASSERT_EQ(again.steps.size(), first.steps.size());
  for (size_t i = 0; i < first.steps.size(); ++i) {
    EXPECT_EQ(again.steps[i].move, first.steps[i].move);
    EXPECT_EQ(again.steps[i].layout, first.steps[i].layout);
  }
  EXPECT_EQ(again.cost, first.cost);

  PlanRequest slow = r;
  slow.transfer = AxisCostParams{1e-4, 1e-9};
  EXPECT_NE(planCacheKey(slow), planCacheKey(r));
  PlanRequest elsewhere = r;
  elsewhere.targetMesh =
      mesh(R"(<["dp"=2, "tp"=2], devices = [8, 9, 10, 11]>)");
  EXPECT_NE(planCacheKey(elsewhere), planCacheKey(r));
  PlanRequest collective = r;
  collective.moves = MoveSet::Collective;
  EXPECT_NE(planCacheKey(collective), planCacheKey(r));
}
} // namespace

namespace {
// A shared cache directory may hold anything another user
// planted. A symbolic link (to /dev/zero), a FIFO and an oversized file in
// an entry's place are refused with a warning, without blocking or reading
// them whole, and the plan is recomputed; a damaged entry's control bytes
// are escaped in the warning.
TEST(PlanCacheTest, PlantedEntriesAreRefusedWithoutBlocking) {
  TempDir dir;
  PlanRequest req = request(R"([{"x"}, {"y"}])", R"([{}, {}])");
  std::string path;
  {
    PlanCache cache({dir.path()});
    path = cache.entryPath(planCacheKey(req));
  }
  auto expectRecomputed = [&](llvm::StringRef why) {
    Warnings warnings;
    PlanCache cache({dir.path()}, warnings.handler());
    llvm::Expected<Plan> plan = cache.getOrPlan(req);
    ASSERT_TRUE(!!plan);
    EXPECT_EQ(plan->cache, CacheStatus::Miss);
    ASSERT_FALSE(warnings.messages.empty());
    EXPECT_THAT(warnings.messages[0], testing::HasSubstr(why));
  };
  auto replace = [&]() { llvm::sys::fs::remove(path); };

  replace();
  ASSERT_EQ(::symlink("/dev/zero", path.c_str()), 0);
  expectRecomputed("it is a symbolic link, not a cache entry");

  replace();
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  expectRecomputed("it is not a regular file");

  replace();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << std::string(PlanCache::kMaxEntryBytes + 1, 'x');
  }
  expectRecomputed("more than an entry ever does");

  replace();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    ASSERT_FALSE(ec);
    os << "\x1b[2J\x07garbage";
  }
  expectRecomputed("format '\\x1b[2J\\x07garbage' is not");
}
} // namespace

namespace {
// An entry whose checksum was forged to match a plan nested 60k
// levels deep crashed the JSON parser; it is now a damaged entry like any
// other (a warning, and the plan recomputed).
TEST(PlanCacheTest, DeeplyNestedEntryIsRefused) {
  TempDir dir;
  PlanRequest req = request(R"([{"x"}, {"y"}])", R"([{}, {}])");
  std::string key = planCacheKey(req);
  std::string json = R"({"strategy": "optimal", "steps": )" +
                     std::string(60000, '[') + std::string(60000, ']') + "}";
  std::string checksum = llvm::utohexstr(llvm::xxh3_64bits(key + "\n" + json),
                                         /*LowerCase=*/true, /*Width=*/16);
  plantEntry(dir, key,
             (PlanCache::kFormat + "\nkey " + llvm::Twine(key.size()) + "\n" +
              key + "\nplan " + llvm::Twine(json.size()) + "\n" + json +
              "\nchecksum " + checksum + "\n")
                 .str());
  EXPECT_EXIT(
      {
        boundThisProcess(20, 1024);
        Warnings warnings;
        PlanCache cache({dir.path()}, warnings.handler());
        llvm::Expected<Plan> plan = cache.getOrPlan(req);
        bool recomputed = plan && plan->cache == CacheStatus::Miss;
        if (!plan)
          llvm::consumeError(plan.takeError());
        std::fprintf(stderr, "recomputed=%d %s\n", recomputed,
                     warnings.messages.empty() ? "no warning"
                                               : warnings.messages[0].c_str());
        std::exit(0);
      },
      testing::ExitedWithCode(0),
      "recomputed=1 plan cache: ignoring entry .*: plan JSON: JSON nested "
      "more than 64 levels deep");
}
} // namespace

namespace {
// Eviction deleted every `*.plan` file of the directory. Only
// files named and started like the cache's own entries are evicted; other
// people's `*.plan` files (and links, and entry-named files that are not
// entries) survive.
TEST(PlanCacheTest, EvictionDeletesOnlyTheCachesOwnEntries) {
  TempDir dir;
  auto write = [&](const std::string &name, llvm::StringRef text) {
    std::error_code ec;
    llvm::raw_fd_ostream os(dir.path() + "/" + name, ec);
    ASSERT_FALSE(ec);
    os << text;
  };
  write("notes.plan", "my travel plan\n");
  write("0123456789abcdef.plan", "not an entry, though named like one\n");
  ASSERT_EQ(::symlink("/etc/hostname",
                      (dir.path() + "/fedcba9876543210.plan").c_str()),
            0);
  PlanCache::Options options;
  options.directory = dir.path();
  options.maxEntries = 4;
  PlanCache cache(options);
  for (int64_t n = 8; n < 8 + 20; ++n)
    ASSERT_TRUE(!!cache.getOrPlan(
        request(R"([{"x"}, {"y"}])", R"([{}, {}])", {n, 16})));
  EXPECT_TRUE(llvm::sys::fs::exists(dir.path() + "/notes.plan"));
  EXPECT_TRUE(llvm::sys::fs::exists(dir.path() + "/0123456789abcdef.plan"));
  EXPECT_TRUE(
      llvm::sys::fs::is_symlink_file(dir.path() + "/fedcba9876543210.plan"));
  // The cache's own entries were evicted down to its bound (the three
  // foreign files count against it too: it cannot remove them).
  EXPECT_LE(countEntries(dir.path()), 4u + 3u);
}

// A forged entry holding a valid plan 10x dearer than the optimum
// was served as optimal. Replay cannot tell (the plan is valid); an optimal
// plan never costs more than the greedy one, so such an entry is refused.
TEST(PlanCacheTest, EntryDearerThanGreedyIsRefused) {
  TempDir dir;
  PlanRequest req = request(R"([{"x"}, {"y"}])", R"([{"y"}, {"x"}])");
  // Valid but wasteful: gather everything, then slice it the other way.
  Plan forged;
  for (Move move : {Move::allGather({0}, 0), Move::allGather({1}, 1),
                    Move::allSlice({1}, 0), Move::allSlice({0}, 1)}) {
    PlanStep step;
    step.move = move;
    forged.steps.push_back(step);
  }
  ASSERT_EQ(errorOf(replayPlan(req, forged)), "<success>");
  std::string key = planCacheKey(req);
  plantEntry(dir, key, serializeCacheEntry(key, req.mesh, forged));
  Warnings warnings;
  PlanCache cache({dir.path()}, warnings.handler());
  llvm::Expected<Plan> plan = cache.getOrPlan(req);
  ASSERT_TRUE(!!plan);
  EXPECT_EQ(plan->cache, CacheStatus::Miss);
  EXPECT_LT(plan->cost, forged.cost);
  ASSERT_EQ(warnings.messages.size(), 1u);
  EXPECT_THAT(warnings.messages[0],
              testing::HasSubstr("more than the greedy plan"));
}
} // namespace

namespace {

std::string costTablePath(const TempDir &dir) {
  llvm::SmallString<128> path(dir.path());
  llvm::sys::path::append(path, PlanCache::kCostTableName);
  return std::string(path);
}

TEST(PlanCacheTest, CostsAreThePlansCostsAndSurviveANewCacheObject) {
  TempDir dir;
  PlanRequest a = request(R"([{"x"}, {}])", R"([{}, {"x", "y"}])");
  PlanRequest b = request(R"([{"x"}, {"y"}])", R"([{"y"}, {"x"}])");
  double costA, costB;
  {
    PlanCache cache({dir.path()});
    costA = cache.getOrPlanCost(a);
    costB = cache.getOrPlanCost(b);
    llvm::Expected<Plan> plan = PlanCache({}).getOrPlan(a);
    ASSERT_TRUE(!!plan);
    EXPECT_EQ(costA, plan->cost);
    // Costs alone write no plan file.
    EXPECT_EQ(countEntries(dir.path()), 0u);
  }
  // Written when the cache went away; one line per request.
  auto table = llvm::MemoryBuffer::getFile(costTablePath(dir));
  ASSERT_TRUE(!!table);
  EXPECT_EQ(llvm::StringRef((*table)->getBuffer()).count('\n'), 2u);
  // Read back bit for bit by a new cache; damaged lines are skipped.
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(costTablePath(dir), ec, llvm::sys::fs::OF_Append);
    ASSERT_FALSE(ec);
    os << "torn line without a cost\n" << "zz 1.0\n";
  }
  PlanCache again({dir.path()});
  EXPECT_EQ(again.getOrPlanCost(a), costA);
  EXPECT_EQ(again.getOrPlanCost(b), costB);
}

TEST(PlanCacheTest, ImpossibleRequestsCostInfinity) {
  PlanCache cache({});
  Mesh m = mesh(R"(<["x"=2]>)");
  // Layouts of rank 1 for a tensor of rank 2: no plan, an infinite cost.
  PlanRequest bad(m, {8}, 4, layout(m, R"([{"x"}])"), layout(m, R"([{}])"));
  bad.globalShape = {8, 8};
  EXPECT_TRUE(std::isinf(cache.getOrPlanCost(bad)));
}

} // namespace

namespace {

TEST(PlanCacheTest, APricedPlanAProgramUsesGetsItsFile) {
  TempDir dir;
  PlanRequest req = request(R"([{"x"}, {}])", R"([{}, {"x", "y"}])");
  {
    PlanCache cache({dir.path()});
    cache.getOrPlanCost(req);
    EXPECT_EQ(countEntries(dir.path()), 0u);
    llvm::Expected<Plan> plan = cache.getOrPlan(req);
    ASSERT_TRUE(!!plan);
    EXPECT_EQ(plan->cache, CacheStatus::Hit); // from memory
    EXPECT_EQ(countEntries(dir.path()), 1u);
  }
  llvm::Expected<Plan> again = PlanCache({dir.path()}).getOrPlan(req);
  ASSERT_TRUE(!!again);
  EXPECT_EQ(again->cache, CacheStatus::Hit);
}

} // namespace
