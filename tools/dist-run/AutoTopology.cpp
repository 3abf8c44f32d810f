//===- AutoTopology.cpp - `--topology auto`: this machine, calibrated once ===//

#include "AutoTopology.h"
#include "common/FindSibling.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <thread>
#include <unistd.h>

using namespace llvm;

std::string dist::run::topologyCacheDir() {
  if (std::optional<std::string> dir =
          sys::Process::GetEnv("DIST_TOPOLOGY_CACHE"))
    return *dir;
  SmallString<256> path;
  if (std::optional<std::string> xdg = sys::Process::GetEnv("XDG_CACHE_HOME")) {
    path = *xdg;
  } else {
    sys::path::home_directory(path);
    sys::path::append(path, ".cache");
  }
  sys::path::append(path, "dist", "topology");
  return std::string(path);
}

/// What a calibration is valid for, as a file name: the machine (host name
/// and cores), the backend, the ranks and the meshes.
static std::string
cacheKey(const std::vector<std::pair<std::string, dist::planner::Mesh>> &meshes,
         int numRanks, StringRef backend) {
  char host[256] = "host";
  (void)gethostname(host, sizeof(host) - 1);
  std::string key;
  raw_string_ostream os(key);
  os << host << "-" << std::thread::hardware_concurrency() << "cores-"
     << backend << "-np" << numRanks;
  for (const auto &[name, mesh] : meshes)
    os << "-" << mesh.str();
  std::string file;
  for (char c : key)
    file += isAlnum(c) || c == '-' || c == '.' ? c : '_';
  return file + ".json";
}

static Error failure(StringRef option, const Twine &message) {
  return make_error<StringError>(option + ": " + message,
                                 inconvertibleErrorCode());
}

Expected<std::string> dist::run::autoTopology(
    const std::vector<std::pair<std::string, planner::Mesh>> &meshes,
    int numRanks, StringRef backend, StringRef self,
    AutoTopologyCaller caller) {
  auto failure = [&](const Twine &message) {
    return ::failure(caller.option, message);
  };
  if (meshes.empty())
    return failure(caller.holder +
                   " uses no mesh, so there is nothing to calibrate");
  if (meshes.size() > 2)
    return failure(caller.holder + " uses " + Twine(meshes.size()) +
                   " meshes; auto calibrates one, or two (a pipeline's "
                   "stages): write the file with dist-calibrate (semantics "
                   "§8) and pass it instead");
  std::string dir = topologyCacheDir();
  SmallString<256> path(dir);
  sys::path::append(path, cacheKey(meshes, numRanks, backend));
  if (sys::fs::exists(path))
    return std::string(path);
  if (std::error_code ec = sys::fs::create_directories(dir))
    return failure("cannot create the cache folder " + dir + ": " +
                   ec.message());
  std::optional<std::string> calibrate = findSibling(self, "dist-calibrate");
  if (!calibrate)
    return failure("dist-calibrate not found next to " + self + " or on PATH");
  // Written beside the cache entry and renamed into it, so that a run that
  // is stopped, or another that calibrates at the same time, never leaves
  // (or reads) half a file.
  std::string temp = (path + ".tmp" + Twine(::getpid())).str();
  std::vector<std::string> args = {
      *calibrate,    "--np",   std::to_string(numRanks), "--backend",
      backend.str(), "--mesh", meshes[0].second.str()};
  if (meshes.size() == 2) {
    args.push_back("--to-mesh");
    args.push_back(meshes[1].second.str());
  }
  // A short sweep: the sizes plans move most, a few repetitions.
  for (const char *arg : {"--sizes", "64KiB:16MiB", "--reps", "3", "-o"})
    args.push_back(arg);
  args.push_back(temp);
  errs() << caller.tool << ": calibrating this machine for "
         << meshes[0].second.str()
         << (meshes.size() == 2 ? " -> " + meshes[1].second.str() : "")
         << " on " << numRanks << " ranks (once; cached in " << path << ")\n";
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int status = sys::ExecuteAndWait(*calibrate, argRefs, std::nullopt, {}, 0, 0,
                                   &message);
  if (status != 0) {
    sys::fs::remove(temp);
    return failure("dist-calibrate failed (exit code " + Twine(status) + ")" +
                   (message.empty() ? "" : ": " + message));
  }
  if (std::error_code ec = sys::fs::rename(temp, path))
    return failure("cannot write " + path + ": " + ec.message());
  return std::string(path);
}

int dist::run::ranksOf(
    const std::vector<std::pair<std::string, planner::Mesh>> &meshes) {
  int ranks = 0;
  for (const auto &[name, mesh] : meshes)
    for (int64_t i = 0; i < mesh.getNumDevices(); ++i)
      ranks = std::max<int>(ranks, mesh.rankOfIndex(i) + 1);
  return ranks;
}
