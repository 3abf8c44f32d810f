//===- dist-calibrate.cpp - Fit the cost model to this machine ------------===//
//
//   dist-calibrate --np N --mesh '<["x"=2, "y"=4]>' [--to-mesh MESH]
//                  [--backend mpi|nccl] [--sizes 1KiB:64MiB] [--reps R]
//                  [--timeout S] -o FILE
//
// semantics §8: times every move of §3 on each axis of the mesh (all the
// axis's groups at once, as a plan runs them) over a sweep of message sizes,
// plus local copies (and with --to-mesh the transfer link to a second mesh,
// §3a), fits alpha and beta per (axis, move) and writes a
// topology file (§3b) that dist-plan, the passes, dist-run and Python read.
//
// The front checks the command line, then starts N ranks of this same
// program under dist-mpirun (--rank, hidden); rank 0 fits and writes FILE.
// Exit codes: 0 written, 1 the measurement or the fit failed, 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "Measure.h"
#include "Sweep.h"

#include "Job.h"
#include "common/FindSibling.h"
#include "common/MachineMemory.h"
#include "dist/Planner/Mesh.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace dist;
namespace cl = llvm::cl;

namespace {

constexpr int kSuccess = 0, kFailure = 1, kUsage = 2;

cl::OptionCategory category("dist-calibrate options");
cl::opt<int> numRanks("np", cl::desc("Number of ranks of the job"), cl::init(0),
                      cl::cat(category));
cl::opt<std::string> meshText("mesh",
                              cl::desc("Mesh to measure, e.g. "
                                       "'<[\"x\"=2, \"y\"=4]>'"),
                              cl::cat(category));
cl::opt<std::string> toMesh("to-mesh",
                            cl::desc("A second mesh (e.g. the next pipeline "
                                     "stage's): measure the transfer link "
                                     "between the two too"),
                            cl::cat(category));
cl::opt<std::string> backend("backend", cl::desc("mpi (default) or nccl"),
                             cl::init("mpi"), cl::cat(category));
cl::opt<std::string> sizes("sizes",
                           cl::desc("Message sizes per device, LO:HI "
                                    "(LO, 4 LO, 16 LO, ... up to HI)"),
                           cl::init("1KiB:64MiB"), cl::cat(category));
cl::opt<int> reps("reps", cl::desc("Timed calls per size (median)"),
                  cl::init(5), cl::cat(category));
cl::opt<int> timeoutSeconds("timeout",
                            cl::desc("Seconds before the job is ended (0: "
                                     "no limit)"),
                            cl::init(3600), cl::cat(category));
cl::opt<std::string> output("o", cl::desc("Topology file to write"),
                            cl::value_desc("FILE"), cl::cat(category));
cl::opt<bool> rankMode("rank", cl::desc("(internal) run as one rank"),
                       cl::Hidden, cl::cat(category));

int usageError(const llvm::Twine &message) {
  llvm::errs() << "dist-calibrate: error: " << message << "\n";
  return kUsage;
}

int failure(const llvm::Twine &message) {
  llvm::errs() << "dist-calibrate: error: " << message << "\n";
  return kFailure;
}

bool haveNccl() {
#ifdef DIST_CALIBRATE_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

int runFront(const char *argv0, calibrate::MeasureOptions &options) {
  if (numRanks < 1)
    return usageError("--np must be at least 1 (got " + llvm::Twine(numRanks) +
                      ")");
  if (output.empty())
    return usageError("-o FILE is required (the topology file to write)");
  llvm::SmallString<256> parent(llvm::sys::path::parent_path(output));
  if (parent.empty())
    parent = ".";
  if (!llvm::sys::fs::is_directory(parent))
    return usageError("-o " + output + ": folder '" + parent +
                      "' does not exist");
  llvm::Expected<planner::Mesh> mesh = planner::Mesh::parse(meshText);
  if (!mesh)
    return usageError("--mesh: " + llvm::toString(mesh.takeError()));
  auto fitsTheJob = [&](const planner::Mesh &m) {
    int64_t maxRank = 0;
    for (int64_t d = 0; d < m.getNumDevices(); ++d)
      maxRank = std::max(maxRank, m.rankOfIndex(d));
    if (m.getNumDevices() <= numRanks && maxRank < numRanks)
      return true;
    usageError("the mesh " + m.str() + " needs ranks 0.." +
               llvm::Twine(maxRank) + " but the job has " +
               llvm::Twine(numRanks) + " (--np)");
    return false;
  };
  if (!fitsTheJob(*mesh))
    return kUsage;
  if (!toMesh.empty()) {
    llvm::Expected<planner::Mesh> to = planner::Mesh::parse(toMesh);
    if (!to)
      return usageError("--to-mesh: " + llvm::toString(to.takeError()));
    if (!fitsTheJob(*to))
      return kUsage;
    if (calibrate::transferPairs(*mesh, *to).empty())
      return usageError("the meshes " + mesh->str() + " and " + to->str() +
                        " put every device of the transfer on the same "
                        "rank: no link between them to measure (give the "
                        "second mesh other ranks with devices = [...])");
  }
  bool measurable = false;
  for (unsigned a = 0; a < mesh->getNumAxes(); ++a)
    measurable |= mesh->getAxisSize(a) > 1;
  if (!measurable)
    return usageError("the mesh " + mesh->str() +
                      " has no axis of size > 1: no link to measure");
  if (int(reps) < 1 || int(reps) > 1000)
    return usageError("--reps must be in 1..1000 (got " + llvm::Twine(reps) +
                      ")");
  if (backend != "mpi" && backend != "nccl")
    return usageError("unknown backend '" + backend + "' (available: mpi" +
                      (haveNccl() ? ", nccl" : "") + ")");
  if (backend == "nccl" && !haveNccl())
    return usageError("the nccl backend was not built (no CUDA/NCCL found "
                      "at configure time)");
  if (timeoutSeconds < 0)
    return usageError("--timeout must be >= 0");
  // Every rank holds two buffers of p messages of the largest size (an
  // all_gather's result), p the largest axis; all ranks run on this
  // machine, so a sweep that cannot fit is refused before it starts.
  int64_t largestAxis = 1;
  for (unsigned a = 0; a < mesh->getNumAxes(); ++a)
    largestAxis = std::max(largestAxis, mesh->getAxisSize(a));
  const uint64_t needed = 2 * uint64_t(options.sizes.back() + 4 * largestAxis) *
                          uint64_t(largestAxis) * uint64_t(numRanks);
  if (needed > run::machineMemory())
    return usageError(
        "--sizes " + sizes + " needs " + llvm::Twine(needed >> 20) +
        " MiB on " + llvm::Twine(numRanks) + " ranks (two buffers of " +
        llvm::Twine(largestAxis) + " x the largest size each), more than the " +
        llvm::Twine(run::machineMemory() >> 20) +
        " MiB this machine has; lower HI");

  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&usageError));
  std::optional<std::string> mpirun = run::findSibling(self, "dist-mpirun");
  if (!mpirun)
    return failure("dist-mpirun not found next to " + self + " or on PATH");
  std::vector<std::string> args = {*mpirun,
                                   "-np",
                                   std::to_string(numRanks),
                                   self,
                                   "--rank",
                                   "--mesh",
                                   meshText,
                                   "--backend",
                                   backend,
                                   "--sizes",
                                   sizes,
                                   "--reps",
                                   std::to_string(reps),
                                   "-o",
                                   output};
  if (!toMesh.empty()) {
    args.push_back("--to-mesh");
    args.push_back(toMesh);
  }
  llvm::errs() << "dist-calibrate: " << numRanks << " ranks, mesh "
               << mesh->str()
               << (toMesh.empty() ? std::string()
                                  : ", transfer to " + std::string(toMesh))
               << ", " << options.sizes.size() << " sizes from " << sizes
               << ", " << reps << " timed calls each\n";
  run::catchStopSignals();
  std::optional<run::Deadline> deadline;
  if (timeoutSeconds > 0)
    deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  run::JobResult job = run::runJob(args, deadline);
  switch (job.kind) {
  case run::JobResult::NotStarted:
    return failure("cannot start '" + *mpirun + "': " + job.error);
  case run::JobResult::Stopped:
    llvm::errs() << "dist-calibrate: stopped by " << run::signalName(job.signal)
                 << ": the job was ended\n";
    run::dieBy(job.signal);
  case run::JobResult::TimedOut:
    return failure("the calibration did not finish within " +
                   llvm::Twine(timeoutSeconds) +
                   " s (--timeout) and was ended; a smaller --sizes or "
                   "--reps takes less");
  case run::JobResult::Killed:
    return failure("mpiexec was killed by " + run::signalName(job.signal));
  case run::JobResult::Exited:
    break;
  }
  return job.code == 0 ? kSuccess : kFailure;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(category);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "dist-calibrate: fits the planner's cost parameters to this "
          "machine (semantics §8)\n",
          &llvm::errs()))
    return kUsage;
  calibrate::MeasureOptions options;
  options.meshText = meshText;
  options.toMeshText = toMesh;
  options.backend = backend;
  options.sizesText = sizes;
  options.reps = reps;
  options.output = output;
  llvm::Expected<std::vector<int64_t>> sweep = calibrate::parseSweep(sizes);
  if (!sweep)
    return usageError(llvm::toString(sweep.takeError()));
  options.sizes = std::move(*sweep);
  if (rankMode)
    return calibrate::runRank(options);
  return runFront(argv[0], options);
}
