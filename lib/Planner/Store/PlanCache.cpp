//===- PlanCache.cpp - Two-level (memory + disk) plan cache ---------------===//

#include "dist/Planner/PlanCache.h"
#include "Search/Search.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <vector>

using namespace dist::planner;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

static Error entryError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// A message safe to print: bytes that are not printable ASCII (a damaged
/// or planted entry's contents) become \xNN.
static std::string printable(StringRef text) {
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
      continue;
    }
    char buf[8];
    std::snprintf(buf, sizeof(buf), "\\x%02x", c);
    out += buf;
  }
  return out;
}

namespace {
/// What reading an entry file found.
struct EntryFile {
  bool missing = false;
  std::string contents;
};
} // namespace

/// Reads a cache entry. A shared cache directory may hold anything another
/// user planted, so only a regular file is read: the open does not follow
/// a symbolic link and does not block on a FIFO, fstat rejects whatever is
/// not a regular file, and at most PlanCache::kMaxEntryBytes are read.
static Expected<EntryFile> readEntryFile(const std::string &path) {
  EntryFile entry;
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      entry.missing = true;
      return entry;
    }
    if (errno == ELOOP)
      return entryError("it is a symbolic link, not a cache entry");
    return entryError(std::strerror(errno));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return entryError("it is not a regular file");
  }
  if (st.st_size > PlanCache::kMaxEntryBytes) {
    ::close(fd);
    return entryError("it holds " + llvm::Twine(int64_t(st.st_size)) +
                      " bytes, more than an entry ever does (" +
                      llvm::Twine(PlanCache::kMaxEntryBytes) + ")");
  }
  entry.contents.resize(size_t(st.st_size));
  size_t done = 0;
  while (done < entry.contents.size()) {
    ssize_t n = ::read(fd, &entry.contents[done], entry.contents.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    done += size_t(n);
  }
  ::close(fd);
  entry.contents.resize(done);
  return entry;
}

static std::string checksumOf(StringRef key, StringRef json) {
  std::string data = (key + "\n" + json).str();
  return llvm::utohexstr(llvm::xxh3_64bits(data), /*LowerCase=*/true,
                         /*Width=*/16);
}

/// Whether `name` is one the cache gives its entries: 16 lowercase hex
/// digits (the key's hash) and ".plan".
static bool isEntryName(StringRef name) {
  if (!name.consume_back(".plan") || name.size() != 16)
    return false;
  return llvm::all_of(
      name, [](char c) { return llvm::isDigit(c) || (c >= 'a' && c <= 'f'); });
}

/// Whether the file at `path` is a regular file that starts like an entry
/// the cache writes (any format version). Eviction deletes nothing else: a
/// shared directory may hold other people's `*.plan` files.
static bool startsLikeAnEntry(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    return false;
  struct stat st;
  char head[32] = {};
  constexpr StringRef kMagic = "dist-plan-cache-v";
  bool ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
            ::read(fd, head, kMagic.size()) == ssize_t(kMagic.size()) &&
            StringRef(head, kMagic.size()) == kMagic;
  ::close(fd);
  return ok;
}

/// Calls `visit(path, status)` for every file of `dir` named like an entry.
static void
forEachEntry(llvm::StringRef dir,
             llvm::function_ref<void(const std::string &,
                                     const llvm::sys::fs::basic_file_status &)>
                 visit) {
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (!isEntryName(llvm::sys::path::filename(it->path())))
      continue;
    if (llvm::ErrorOr<llvm::sys::fs::basic_file_status> status = it->status())
      visit(it->path(), *status);
  }
}

std::string dist::planner::serializeCacheEntry(StringRef key, const Mesh &mesh,
                                               const Plan &plan,
                                               const Mesh *targetMesh) {
  std::string json = planToJSON(mesh, plan, targetMesh);
  std::string out;
  llvm::raw_string_ostream os(out);
  os << PlanCache::kFormat << "\n"
     << "key " << key.size() << "\n"
     << key << "\n"
     << "plan " << json.size() << "\n"
     << json << "\n"
     << "checksum " << checksumOf(key, json) << "\n";
  return out;
}

/// Reads `<label> <length>\n<length bytes>\n` from the front of `text`.
static Expected<StringRef> consumeSection(StringRef &text, StringRef label) {
  if (!text.consume_front(label) || !text.consume_front(" "))
    return entryError("missing '" + label + "' section");
  size_t length = 0;
  if (text.consumeInteger(10, length) || !text.consume_front("\n"))
    return entryError("bad length of the '" + label + "' section");
  if (text.size() < length + 1)
    return entryError("the '" + label + "' section is truncated");
  StringRef body = text.take_front(length);
  text = text.drop_front(length);
  if (!text.consume_front("\n"))
    return entryError("the '" + label + "' section is not terminated");
  return body;
}

Expected<Plan> dist::planner::parseCacheEntry(StringRef contents,
                                              StringRef expectedKey,
                                              const Mesh &mesh,
                                              const Mesh *targetMesh) {
  StringRef text = contents;
  StringRef header = text.take_until([](char c) { return c == '\n'; });
  if (header != PlanCache::kFormat)
    return entryError("format '" + header.take_front(40) + "' is not " +
                      PlanCache::kFormat);
  text = text.drop_front(header.size()).drop_front(1);
  Expected<StringRef> key = consumeSection(text, "key");
  if (!key)
    return key.takeError();
  Expected<StringRef> json = consumeSection(text, "plan");
  if (!json)
    return json.takeError();
  if (!text.consume_front("checksum "))
    return entryError("missing checksum");
  StringRef checksum = text.take_until([](char c) { return c == '\n'; });
  if (checksum != checksumOf(*key, *json))
    return entryError("checksum mismatch (the entry is corrupted)");
  if (*key != expectedKey)
    return entryError("it holds another request (hash collision)");
  return planFromJSON(mesh, *json, targetMesh);
}

PlanCache::PlanCache(Options opts, WarningHandler handler)
    : options(std::move(opts)), onWarning(std::move(handler)) {
  if (options.directory.empty())
    return;
  if (std::error_code ec =
          llvm::sys::fs::create_directories(options.directory)) {
    warn("plan cache: cannot create directory '" + options.directory +
         "': " + ec.message() + "; keeping plans in memory only");
    return;
  }
  if (llvm::sys::fs::access(options.directory,
                            llvm::sys::fs::AccessMode::Write)) {
    warn("plan cache: directory '" + options.directory +
         "' is not writable; keeping plans in memory only");
    return;
  }
  persistent = true;
  // One scan up front gives the size estimate later inserts maintain.
  forEachEntry(
      options.directory,
      [&](const std::string &, const llvm::sys::fs::basic_file_status &status) {
        ++diskEntries;
        diskBytes += status.getSize();
      });
}

void PlanCache::warn(const llvm::Twine &message,
                     const WarningHandler &handler) {
  if (handler)
    handler(message.str());
  else if (onWarning)
    onWarning(message.str());
  else
    llvm::errs() << "warning: " << message << "\n";
}

std::string PlanCache::entryPath(StringRef key) const {
  llvm::SmallString<256> path(options.directory);
  llvm::sys::path::append(
      path, llvm::utohexstr(llvm::xxh3_64bits(key), true, 16) + ".plan");
  return std::string(path);
}

std::optional<Plan> PlanCache::lookupMemory(const std::string &key) {
  auto it = memory.find(key);
  if (it == memory.end())
    return std::nullopt;
  recency.splice(recency.begin(), recency, it->second.position);
  return it->second.plan;
}

void PlanCache::storeMemory(const std::string &key, const Plan &plan) {
  auto it = memory.find(key);
  if (it != memory.end()) {
    it->second.plan = plan;
    recency.splice(recency.begin(), recency, it->second.position);
    return;
  }
  recency.push_front(key);
  memory.emplace(key, MemoryEntry{plan, recency.begin()});
  while (memory.size() > std::max<size_t>(options.maxEntries, 1)) {
    memory.erase(recency.back());
    recency.pop_back();
  }
}

std::optional<Plan> PlanCache::lookupDisk(const std::string &key,
                                          const PlanRequest &request,
                                          const WarningHandler &handler) {
  std::string path = entryPath(key);
  Expected<EntryFile> file = readEntryFile(path);
  if (!file) {
    warn("plan cache: cannot read '" + path +
             "': " + printable(llvm::toString(file.takeError())) +
             "; recomputing the plan",
         handler);
    return std::nullopt;
  }
  if (file->missing)
    return std::nullopt;
  Expected<Plan> plan =
      parseCacheEntry(file->contents, key, request.mesh,
                      request.targetMesh ? &*request.targetMesh : nullptr);
  if (!plan) {
    warn("plan cache: ignoring entry '" + path + "': " +
             printable(llvm::toString(plan.takeError())) + "; recomputing it",
         handler);
    return std::nullopt;
  }
  // Never trust stored moves: replay them through the planner, which also
  // recomputes every derived number.
  if (Error e = replayPlan(request, *plan)) {
    warn("plan cache: ignoring entry '" + path + "': its plan does not " +
             "replay (" + printable(llvm::toString(std::move(e))) +
             "); recomputing it",
         handler);
    return std::nullopt;
  }
  // Replay proves the plan valid, not optimal: a forged entry could hold a
  // valid but dearer plan. The greedy plan is cheap to compute and an
  // optimal plan never costs more, so one that does is refused (a spot
  // check, not a proof: docs/compiler.md, "The plan cache").
  if (request.strategy == Strategy::Optimal) {
    PlanRequest greedyRequest = request;
    greedyRequest.strategy = Strategy::Greedy;
    Expected<Plan> greedy = planReshard(greedyRequest);
    if (!greedy) {
      llvm::consumeError(greedy.takeError());
    } else if (detail::costLess(greedy->cost, plan->cost)) {
      warn("plan cache: ignoring entry '" + path + "': its plan costs " +
               formatDouble(plan->cost) + " s, more than the greedy plan (" +
               formatDouble(greedy->cost) +
               " s), so it is not the optimal plan; recomputing it",
           handler);
      return std::nullopt;
    }
  }
  plan->strategy = request.strategy;
  // Touch the entry: modification time is the disk level's recency.
  ::utimes(path.c_str(), nullptr);
  return std::move(*plan);
}

void PlanCache::storeDisk(const std::string &key, const PlanRequest &request,
                          const Plan &plan, const WarningHandler &handler) {
  std::string contents =
      serializeCacheEntry(key, request.mesh, plan,
                          request.targetMesh ? &*request.targetMesh : nullptr);
  std::string path = entryPath(key);
  llvm::SmallString<256> model(options.directory);
  llvm::sys::path::append(model, ".tmp-%%%%%%%%%%%%.plan.part");
  int fd = -1;
  llvm::SmallString<256> temporary;
  std::error_code ec = llvm::sys::fs::createUniqueFile(model, fd, temporary);
  if (!ec) {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << contents;
    os.close();
    if (os.has_error()) {
      ec = os.error();
      os.clear_error();
    }
  }
  // Rename is atomic: readers see the old entry or the new one, never a mix.
  if (!ec)
    ec = llvm::sys::fs::rename(temporary, path);
  if (ec) {
    if (!temporary.empty())
      llvm::sys::fs::remove(temporary);
    std::lock_guard<std::mutex> lock(mutex);
    if (persistent)
      warn("plan cache: cannot write to '" + options.directory +
               "': " + ec.message() + "; keeping plans in memory only",
           handler);
    persistent = false;
    return;
  }
  std::lock_guard<std::mutex> lock(mutex);
  ++diskEntries;
  diskBytes += contents.size();
  evictDiskIfNeeded();
}

void PlanCache::evictDiskIfNeeded() {
  if (diskEntries <= options.maxEntries && diskBytes <= options.maxDiskBytes)
    return;
  struct Entry {
    std::string path;
    llvm::sys::TimePoint<> modified;
    uint64_t size;
  };
  std::vector<Entry> entries;
  forEachEntry(options.directory,
               [&](const std::string &path,
                   const llvm::sys::fs::basic_file_status &status) {
                 if (status.type() == llvm::sys::fs::file_type::regular_file &&
                     startsLikeAnEntry(path))
                   entries.push_back({path, status.getLastModificationTime(),
                                      status.getSize()});
               });
  // Oldest last; evict down to 90% of the bounds so that the next inserts
  // do not rescan at once.
  std::sort(entries.begin(), entries.end(), [](const Entry &a, const Entry &b) {
    return a.modified != b.modified ? a.modified > b.modified : a.path < b.path;
  });
  size_t count = entries.size();
  uint64_t bytes = 0;
  for (const Entry &entry : entries)
    bytes += entry.size;
  size_t targetCount = options.maxEntries - options.maxEntries / 10;
  uint64_t targetBytes = options.maxDiskBytes - options.maxDiskBytes / 10;
  while (!entries.empty() && (count > targetCount || bytes > targetBytes)) {
    llvm::sys::fs::remove(entries.back().path);
    --count;
    bytes -= entries.back().size;
    entries.pop_back();
  }
  diskEntries = count;
  diskBytes = bytes;
}

Expected<Plan> PlanCache::getOrPlan(const PlanRequest &request,
                                    const WarningHandler &handler) {
  if (Error e = verifyRequest(request))
    return std::move(e);
  std::string key = planCacheKey(request);
  std::optional<Plan> pricedPlan;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (std::optional<Plan> plan = lookupMemory(key)) {
      plan->cache = CacheStatus::Hit;
      // A plan made only to price a layout pair has no file yet; now that
      // a program uses it, it gets one, so the next compilation finds it.
      if (!(persistent && pricedOnly.erase(key)))
        return std::move(*plan);
      pricedPlan = std::move(plan);
    }
  }
  if (pricedPlan) {
    storeDisk(key, request, *pricedPlan, handler);
    return std::move(*pricedPlan);
  }
  bool usingDisk;
  {
    std::lock_guard<std::mutex> lock(mutex);
    usingDisk = persistent;
  }
  if (usingDisk) {
    if (std::optional<Plan> plan = lookupDisk(key, request, handler)) {
      std::lock_guard<std::mutex> lock(mutex);
      storeMemory(key, *plan);
      plan->cache = CacheStatus::Hit;
      return std::move(*plan);
    }
  }
  Expected<Plan> plan = planReshard(request);
  if (!plan)
    return plan.takeError();
  plan->cache = CacheStatus::Miss;
  if (usingDisk)
    storeDisk(key, request, *plan, handler);
  std::lock_guard<std::mutex> lock(mutex);
  storeMemory(key, *plan);
  return plan;
}

//===----------------------------------------------------------------------===//
// The cost table
//===----------------------------------------------------------------------===//

static std::string costKeyHash(llvm::StringRef key) {
  llvm::XXH128_hash_t hash =
      llvm::xxh3_128bits(llvm::arrayRefFromStringRef(key));
  return llvm::formatv("{0:x-16}{1:x-16}", hash.high64, hash.low64).str();
}

void PlanCache::loadCosts() {
  costsLoaded = true;
  if (!persistent)
    return;
  llvm::SmallString<256> path(options.directory);
  llvm::sys::path::append(path, kCostTableName);
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(path, size))
    return; // none yet
  if (size > kMaxCostTableBytes) {
    warn("plan cache: the cost table '" + path + "' is larger than " +
         llvm::Twine(kMaxCostTableBytes) + " bytes; starting it afresh");
    llvm::sys::fs::remove(path);
    return;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return;
  llvm::SmallVector<llvm::StringRef> lines;
  (*buffer)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef line : lines) {
    // A line torn by a concurrent writer, or damaged, is skipped.
    auto [hash, text] = line.split(' ');
    if (hash.size() != 32 || !llvm::all_of(hash, llvm::isHexDigit))
      continue;
    std::string number = text.str();
    char *end = nullptr;
    double cost = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || std::isnan(cost) || cost < 0)
      continue;
    costs[hash.str()] = cost;
  }
}

std::optional<double> PlanCache::lookupCost(const PlanRequest &request) {
  std::string hash = costKeyHash(planCacheKey(request));
  std::lock_guard<std::mutex> lock(mutex);
  if (!costsLoaded)
    loadCosts();
  auto it = costs.find(hash);
  if (it == costs.end())
    return std::nullopt;
  return it->second;
}

double PlanCache::getOrPlanCost(const PlanRequest &request) {
  std::string hash = costKeyHash(planCacheKey(request));
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!costsLoaded)
      loadCosts();
    auto it = costs.find(hash);
    if (it != costs.end())
      return it->second;
  }
  // Planned directly: a plan made only for its cost is not worth a file,
  // but it is kept in memory, where lowering the same reshard finds it.
  Expected<Plan> plan = [&]() -> Expected<Plan> {
    if (Error e = verifyRequest(request))
      return std::move(e);
    std::string key = planCacheKey(request);
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (std::optional<Plan> cached = lookupMemory(key))
        return std::move(*cached);
    }
    Expected<Plan> planned = planReshard(request);
    if (planned) {
      std::lock_guard<std::mutex> lock(mutex);
      storeMemory(key, *planned);
      pricedOnly.insert(key);
    }
    return planned;
  }();
  double cost = std::numeric_limits<double>::infinity();
  if (plan)
    cost = plan->cost;
  else
    llvm::consumeError(plan.takeError());
  std::lock_guard<std::mutex> lock(mutex);
  costs[hash] = cost;
  if (persistent) {
    // Hexadecimal floating point: read back bit for bit.
    char text[64];
    std::snprintf(text, sizeof(text), "%a", cost);
    pendingCosts += hash + " " + text + "\n";
  }
  return cost;
}

void PlanCache::flushCosts() {
  std::string lines;
  {
    std::lock_guard<std::mutex> lock(mutex);
    lines.swap(pendingCosts);
  }
  if (lines.empty() || !persistent)
    return;
  llvm::SmallString<256> path(options.directory);
  llvm::sys::path::append(path, kCostTableName);
  // One append of whole lines: concurrent writers interleave lines, and a
  // torn one is skipped when read.
  int fd =
      ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    warn("plan cache: cannot write the cost table '" + path +
         "': " + std::strerror(errno));
    return;
  }
  const char *data = lines.data();
  size_t left = lines.size();
  while (left > 0) {
    ssize_t written = ::write(fd, data, left);
    if (written <= 0) {
      if (written < 0 && errno == EINTR)
        continue;
      break;
    }
    data += written;
    left -= written;
  }
  ::close(fd);
}

PlanCache::~PlanCache() { flushCosts(); }
