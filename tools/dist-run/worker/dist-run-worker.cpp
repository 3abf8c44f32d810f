//===- dist-run-worker.cpp - one rank of a dist-run job -------------------===//
//
//   dist-mpirun -np N dist-run-worker JOB [--dump DIR] [--input SPEC]
//
// The rank side of dist-run (docs/dist-run.md, "What happens"): reads the
// job file the front wrote (common/JobFile.h), initialises the runtime,
// builds this rank's local padded input shards, loads the compiled program
// (a shared object) with dlopen, calls the entry through its packed
// wrapper, waits for the runtime's stream, zeroes the results' padding and
// writes them. It needs neither MLIR nor LLVM's shared library (LLVM's
// Support library is linked in statically), so a job compiled on one
// machine runs on another that has the runtime: `dist-run --compile-only
// DIR` writes DIR/job.txt, and this program runs it. --dump and --input
// replace the job's.
//
// dist-run starts it; it is not meant to be run by hand on a job of its
// own making. Exit codes: 0 success, 1 any failure (the rank and the
// reason on stderr; the job is aborted), 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "Faults.h"

#include "common/CallSpan.h"
#include "common/Inputs.h"
#include "common/JobFile.h"
#include "common/Npy.h"
#include "common/PackedCall.h"

#include "dist/Runtime/DistRuntime.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <optional>
#include <string>
#include <vector>

using namespace dist::run;

namespace {

enum ExitCode { kSuccess = 0, kFailure = 1, kUsage = 2 };

/// Reports a failure of this rank and ends the whole job: the other ranks may
/// be waiting for this one inside a collective, and must not hang.
[[noreturn]] void failRank(int64_t rank, const llvm::Twine &message) {
  // One write: mpirun forwards each write of a rank's stderr on its own, and
  // MPI_Abort's banner landed between the pieces of a line written in parts.
  std::string line = "dist-run: ";
  if (rank >= 0)
    line += "rank " + std::to_string(rank) + ": ";
  line += message.str() + "\n";
  llvm::errs() << line;
  llvm::errs().flush();
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(kFailure);
}

/// A buffer in the backend's memory (host for mpi, this rank's GPU for
/// nccl), freed with the runtime.
struct DeviceBuffer {
  void *data = nullptr;
  int64_t bytes = 0;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (data)
      distRtFree(data);
  }
};

struct Options {
  std::string job;
  std::optional<std::string> dump, input;
};

std::optional<Options> parseOptions(int argc, char **argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    auto value = [&](llvm::StringRef name) -> std::optional<std::string> {
      if (arg.consume_front(name)) {
        if (arg.consume_front("="))
          return arg.str();
        if (arg.empty() && i + 1 < argc)
          return std::string(argv[++i]);
      }
      return std::nullopt;
    };
    if (auto dump = value("--dump"))
      options.dump = *dump;
    else if (auto input = value("--input"))
      options.input = *input;
    else if (!arg.starts_with("-") && options.job.empty())
      options.job = arg.str();
    else
      return std::nullopt;
  }
  if (options.job.empty())
    return std::nullopt;
  return options;
}

int run(const Options &options) {
  llvm::Expected<JobFile> job = readJobFile(options.job);
  if (!job)
    failRank(-1, llvm::toString(job.takeError()));
  if (options.dump) {
    job->dump = *options.dump;
    if (std::error_code ec = llvm::sys::fs::create_directories(job->dump))
      failRank(-1, "cannot create --dump folder '" + job->dump +
                       "': " + ec.message());
  }
  if (options.input)
    job->input = *options.input;

  // GPU code on the MPI backend: device buffers where a GPU is visible
  // (transfers staged through the host), host buffers elsewhere (the GPU
  // lowering's data movement runs on CPUs too). A setting of the user's
  // stands.
  if (job->target == "gpu" && job->backend == "mpi")
    ::setenv("DIST_RT_MPI_MEMORY", "auto", /*overwrite=*/0);
  // The runtime reports its own failures (rank, op, reason) and aborts the
  // job; the checks here cover what happens around it.
  if (distRtInitWithBackend(job->backend.c_str()) != DIST_RT_OK)
    failRank(-1, "cannot initialise the runtime: " +
                     llvm::Twine(distRtLastErrorMessage()));
  const int64_t rank = distRtWorldRank();
  if (distRtWorldSize() != job->numRanks)
    failRank(rank, "the job has " + llvm::Twine(distRtWorldSize()) +
                       " ranks, expected " + llvm::Twine(job->numRanks));
  llvm::Expected<FaultSpec> parsedFault = FaultSpec::parse(job->fault);
  if (!parsedFault)
    failRank(rank, llvm::toString(parsedFault.takeError()));
  static_cast<FaultSpec &>(fault) = *parsedFault;
  fault.myRank = rank;
  if (fault.kind == Fault::Count)
    distRtSetValidation(1); // the check under test; same on every rank
  llvm::Expected<InputSpec> input = InputSpec::parse(job->input);
  if (!input)
    failRank(rank, "bad input '" + job->input +
                       "': " + llvm::toString(input.takeError()));

  std::vector<DeviceBuffer> arguments(job->arguments.size());
  std::vector<DeviceBuffer> results(job->results.size());
  auto allocate = [&](DeviceBuffer &buffer, const TensorJob &tensor,
                      const std::vector<uint8_t> &host) {
    buffer.bytes = static_cast<int64_t>(host.size());
    if (buffer.bytes == 0)
      return;
    buffer.data = distRtAlloc(buffer.bytes);
    if (!buffer.data)
      failRank(rank, "cannot allocate " + llvm::Twine(buffer.bytes) +
                         " bytes for " + tensor.typeText);
    distRtMemcpy(buffer.data, host.data(), buffer.bytes,
                 DIST_RT_COPY_HOST_TO_DEVICE, nullptr);
  };
  auto localBytes = [&](const TensorJob &tensor) {
    return tensor.ranks[rank].localElements() * elementBytes(tensor.element);
  };
  for (auto [k, buffer, tensor] : llvm::enumerate(arguments, job->arguments)) {
    std::vector<uint8_t> host(localBytes(tensor));
    const ShardPlacement &placement = tensor.ranks[rank];
    if (input->kind == InputSpec::Npy) {
      // The front checked the file; it is checked again in case it changed.
      llvm::Expected<NpyInput> npy =
          NpyInput::open(input->npyPath(k), k, tensor.globalShape,
                         tensor.element, tensor.typeText);
      if (!npy)
        failRank(rank, llvm::toString(npy.takeError()));
      materializeShard(
          placement, tensor.globalShape, tensor.element,
          [&](int64_t index, void *dst) { npy->storeElement(index, dst); },
          host.data());
    } else {
      const ElementKind element = tensor.element;
      materializeShard(
          placement, tensor.globalShape, element,
          [&](int64_t index, void *dst) {
            storeGlobalElement(*input, element, index, dst);
          },
          host.data());
    }
    allocate(buffer, tensor, host);
  }
  for (auto [buffer, tensor] : llvm::zip_equal(results, job->results))
    allocate(buffer, tensor, std::vector<uint8_t>(localBytes(tensor), 0));

  // After the runtime is up: loading the program may load GPU code, on the
  // device the runtime picked for this rank.
  void *library = dlopen(job->library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library)
    failRank(rank,
             "cannot load the compiled program: " + llvm::Twine(dlerror()));
  using Packed = void (*)(void **);
  auto function = reinterpret_cast<Packed>(dlsym(library, job->symbol.c_str()));
  if (!function)
    failRank(rank, "the compiled program has no '" + job->symbol + "' (@" +
                       job->entry + "'s packed wrapper)");

  PackedCall call;
  for (auto [buffer, tensor] : llvm::zip_equal(arguments, job->arguments))
    call.addMemRef(buffer.data, tensor.ranks[rank].localShape);
  for (auto [buffer, tensor] : llvm::zip_equal(results, job->results))
    call.addMemRef(buffer.data, tensor.ranks[rank].localShape);

  auto start = std::chrono::steady_clock::now();
  function(call.arguments().data());
  if (distRtSynchronize(nullptr) != DIST_RT_OK)
    failRank(rank, distRtLastErrorMessage());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (fault.kind != Fault::None && fault.rank == rank && !fault.fired)
    failRank(rank, "--inject-fault=" + job->fault +
                       " never fired: the program made no runtime call it "
                       "applies to on this rank");

  for (auto [k, buffer, tensor] : llvm::enumerate(results, job->results)) {
    const ShardPlacement &placement = tensor.ranks[rank];
    // A rank outside the result's mesh holds no part of it (semantics §5).
    if (!placement.holds)
      continue;
    std::vector<uint8_t> host(localBytes(tensor));
    if (buffer.bytes)
      distRtMemcpy(host.data(), buffer.data, buffer.bytes,
                   DIST_RT_COPY_DEVICE_TO_HOST, nullptr);
    // The program promises zero padding; the dump guarantees it either way,
    // so that checkers can compare whole buffers.
    zeroPadding(placement, tensor.element, host.data());
    if (job->dump.empty())
      continue;
    llvm::SmallString<256> path(job->dump);
    llvm::sys::path::append(path, "result" + llvm::Twine(k) + ".rank" +
                                      llvm::Twine(rank) + ".npy");
    if (llvm::Error error =
            writeNpy(path, placement.localShape, tensor.element, host.data()))
      failRank(rank, llvm::toString(std::move(error)));
  }

  // semantics §5 --reps: the first call was the warm-up (communicators,
  // caches); each timed call starts together on every rank and lasts until
  // its slowest rank has finished (CallSpan). The results written are the
  // first call's.
  std::vector<double> perCall;
  if (job->reps > 0) {
    CallSpan span(MPI_COMM_WORLD);
    for (int64_t rep = 0; rep < job->reps; ++rep) {
      double seconds = span.time([&] { function(call.arguments().data()); });
      if (seconds < 0)
        failRank(rank, distRtLastErrorMessage());
      perCall.push_back(seconds);
    }
  }

  double slowest = 0;
  MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    llvm::outs() << "dist-run: @" << job->entry << " ran on " << job->numRanks
                 << " ranks (" << job->backend << ", " << input->str()
                 << " inputs): " << llvm::format("%.3f", slowest * 1e3)
                 << " ms on the slowest rank";
    bool everyRank = llvm::all_of(job->results, [&](const TensorJob &tensor) {
      return llvm::all_of(tensor.ranks,
                          [](const ShardPlacement &p) { return p.holds; });
    });
    if (!job->dump.empty() && everyRank)
      llvm::outs() << "; " << job->results.size() << " result(s) x "
                   << job->numRanks << " ranks written to " << job->dump;
    else if (!job->dump.empty())
      llvm::outs() << "; " << job->results.size()
                   << " result(s), each from the ranks of its mesh, written to "
                   << job->dump;
    llvm::outs() << "\n";
    if (!perCall.empty()) {
      std::sort(perCall.begin(), perCall.end());
      size_t half = perCall.size() / 2;
      double median = perCall.size() % 2
                          ? perCall[half]
                          : (perCall[half - 1] + perCall[half]) / 2;
      llvm::outs() << "dist-run: per call: median "
                   << llvm::format("%.3f", median * 1e3) << " ms, min "
                   << llvm::format("%.3f", perCall.front() * 1e3) << " ms over "
                   << perCall.size() << " calls (slowest rank); modelled "
                   << llvm::format("%.3f", job->modelledSeconds * 1e3)
                   << " ms\n";
    }
    llvm::outs().flush();
  }
  arguments.clear();
  results.clear();
  // Before the runtime goes: unloading may unload GPU code.
  dlclose(library);
  if (distRtFinalize() != DIST_RT_OK)
    failRank(rank, distRtLastErrorMessage());
  return kSuccess;
}

} // namespace

int main(int argc, char **argv) {
  // A crash (in the runtime, or the program) names where it happened.
  llvm::sys::PrintStackTraceOnErrorSignal(argv[0]);
  std::optional<Options> options = parseOptions(argc, argv);
  if (!options) {
    llvm::errs() << "usage: dist-run-worker JOB [--dump DIR] [--input "
                    "iota|random:SEED|npy:DIR]\n";
    return kUsage;
  }
  return run(*options);
}
