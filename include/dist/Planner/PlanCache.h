//===- PlanCache.h - Two-level (memory + disk) plan cache -------*- C++ -*-===//
//
// Planning is deterministic, so a plan can be reused whenever its request's
// cache key (planCacheKey: planner version, strategy, cost parameters, mesh,
// shape, element size, layouts, peak limit) is the same. The cache keeps
// plans in memory for the life of the object and, when given a directory, in
// one file per key on disk so later compilations reuse them.
//
// On disk, an entry is written to a temporary file and renamed into place,
// so concurrent writers never leave a torn entry. Every entry repeats its
// full key (a hash collision is detected, not trusted) and a checksum, and a
// loaded plan is replayed through the planner before it is used. Anything
// wrong with an entry - truncated, corrupted, another format version,
// unreadable - is reported as a warning, recomputed and rewritten. A
// directory that cannot be created or written degrades to memory only, with
// a warning. Both levels are bounded and evict the least recently used
// entries (on disk, recency is the file's modification time).
//
//===----------------------------------------------------------------------===//

#ifndef DIST_PLANNER_PLANCACHE_H
#define DIST_PLANNER_PLANCACHE_H

#include "dist/Planner/Plan.h"
#include "dist/Planner/Planner.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace dist::planner {

class PlanCache {
public:
  struct Options {
    /// Directory of the persistent store; empty keeps plans in memory only.
    std::string directory;
    /// Bounds of each level; the least recently used entries go first.
    size_t maxEntries = 8192;
    uint64_t maxDiskBytes = uint64_t(256) << 20;
  };
  using WarningHandler = std::function<void(llvm::StringRef message)>;

  /// `onWarning` receives one message per problem (unusable directory,
  /// damaged entry); by default they go to stderr.
  explicit PlanCache(Options options, WarningHandler onWarning = nullptr);

  /// Returns the cached plan for `request` (plan.cache = Hit) or plans it,
  /// stores it, and returns it (plan.cache = Miss). Thread-safe. Warnings
  /// about this request's entry go to `onWarning` when given (so that a
  /// compiler can locate them), else to the cache's handler.
  llvm::Expected<Plan> getOrPlan(const PlanRequest &request,
                                 const WarningHandler &onWarning = nullptr);

  /// The cost of the plan for `request` alone (what dist-partition prices
  /// pairs of layouts with; infinity when there is no plan). Served from
  /// memory, then from the directory's cost table (kCostTableName: one line
  /// per request, a 128-bit hash of its key and the cost), else planned
  /// (no plan file is written for it) and recorded. A cost read back is not
  /// replayed: a damaged or forged line can make a layout choice worse, never a
  /// program wrong, because every reshard a program keeps is planned (and
  /// a cached plan replayed) by getOrPlan when it is lowered.
  double getOrPlanCost(const PlanRequest &request);
  /// The cost getOrPlanCost would serve without planning (from memory or
  /// the cost table), else nullopt.
  std::optional<double> lookupCost(const PlanRequest &request);
  /// Appends the costs computed since the last call to the cost table (also
  /// done when the cache is destroyed).
  void flushCosts();
  ~PlanCache();
  static constexpr llvm::StringLiteral kCostTableName = "reshard-costs-v1.txt";
  /// A cost table bigger than this is not read (and is started afresh).
  static constexpr uint64_t kMaxCostTableBytes = uint64_t(256) << 20;

  /// The format version written into every entry; entries of other versions
  /// are ignored and rewritten.
  static constexpr llvm::StringLiteral kFormat = "dist-plan-cache-v1";
  /// Entries larger than this are not read (a plan of a few steps is far
  /// smaller; something bigger was not written by a cache). Only regular
  /// files are read: links, FIFOs and devices planted in a shared directory
  /// are refused without blocking, with a warning.
  static constexpr int64_t kMaxEntryBytes = int64_t(1) << 20;

  /// The file an entry for `key` lives in (exposed for tests).
  std::string entryPath(llvm::StringRef key) const;
  bool isPersistent() const { return persistent; }
  llvm::StringRef getDirectory() const { return options.directory; }

private:
  std::optional<Plan> lookupMemory(const std::string &key);
  void storeMemory(const std::string &key, const Plan &plan);
  std::optional<Plan> lookupDisk(const std::string &key,
                                 const PlanRequest &request,
                                 const WarningHandler &handler);
  void storeDisk(const std::string &key, const PlanRequest &request,
                 const Plan &plan, const WarningHandler &handler);
  void evictDiskIfNeeded();
  void warn(const llvm::Twine &message,
            const WarningHandler &handler = nullptr);

  Options options;
  WarningHandler onWarning;
  bool persistent = false;

  std::mutex mutex;               // guards everything below
  std::list<std::string> recency; // most recent first
  struct MemoryEntry {
    Plan plan;
    std::list<std::string>::iterator position;
  };
  std::unordered_map<std::string, MemoryEntry> memory;
  /// Costs by key hash (32 hex digits); lines not yet written.
  std::unordered_map<std::string, double> costs;
  bool costsLoaded = false;
  /// Plans in memory made only for their cost (no file written yet).
  std::unordered_set<std::string> pricedOnly;
  std::string pendingCosts;
  void loadCosts();

  // An estimate of the disk level's size, refreshed by a directory scan
  // when it passes a bound, so that inserts need not scan every time.
  size_t diskEntries = 0;
  uint64_t diskBytes = 0;
};

/// The file contents of a cache entry (exposed for tests).
/// `targetMesh`: that of a cross-mesh request (null otherwise).
std::string serializeCacheEntry(llvm::StringRef key, const Mesh &mesh,
                                const Plan &plan,
                                const Mesh *targetMesh = nullptr);
/// Parses an entry written by serializeCacheEntry and checks its format
/// version, checksum and key. Errors say what is wrong with it.
llvm::Expected<Plan> parseCacheEntry(llvm::StringRef contents,
                                     llvm::StringRef expectedKey,
                                     const Mesh &mesh,
                                     const Mesh *targetMesh = nullptr);

} // namespace dist::planner

#endif // DIST_PLANNER_PLANCACHE_H
