//===- dist-run.cpp - compile a dist program and run it on N ranks --------===//
//
//   dist-run --np N [--backend mpi|nccl] FILE.mlir [--entry NAME]
//            [--input iota|random:SEED|npy:DIR] [--dump DIR]
//            [--timeout SECONDS]
//            [--strategy optimal|greedy] [--topology FILE] ...
//
// semantics §5. The front process parses FILE, records the entry's signature,
// lowers the module once with the dist-to-LLVM pipeline and writes it as
// bytecode to a private temporary folder; with --input npy:DIR it checks
// every DIR/arg<k>.npy against its argument (so that a bad file is one
// message before anything starts); then it re-executes itself under
// dist-mpirun (mpirun with the flags this machine needs) with the hidden
// --rank-worker flag. Each worker initialises the runtime, builds its local
// padded input shards (reading its blocks of the .npy files for npy:DIR),
// JIT-compiles the lowered module with MLIR's
// ExecutionEngine, calls the entry, and with --dump writes its results as
// .npy files. Compiling once in the front reports program errors once, before
// any rank starts, and spares the ranks the planner's work.
//
// Before lowering, the front compares what the ranks will allocate with the
// machine's memory (Memory.h), and --timeout covers compiling as well as the
// job (a watchdog over the compilation, then the job's remaining time).
//
// Exit codes: 0 success; 1 the program could not be compiled, an npy:DIR
// input file is missing or bad, the job cannot fit in memory, a rank failed
// (the rank and the reason are on stderr) or the time limit passed; 2 bad
// usage.
//
//===----------------------------------------------------------------------===//

#include "Job.h"
#include "Memory.h"
#include "Program.h"
#include "Tensors.h"

#include "dist/Dialect/Dist/Transforms/PassOptionValues.h"
#include "dist/Runtime/DistRuntime.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <thread>

using namespace dist::run;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory runCategory("dist-run options");
cl::OptionCategory planCategory("Reshard planning (as in dist-reshard-pipeline)");

cl::opt<std::string> inputFile(cl::Positional, cl::desc("FILE.mlir"),
                               cl::Required, cl::cat(runCategory));
cl::opt<int> numRanks("np", cl::desc("Number of ranks (one per mesh device)"),
                      cl::Required, cl::value_desc("N"), cl::cat(runCategory));
cl::opt<std::string>
    backendName("backend",
                cl::desc("Runtime backend: mpi (host buffers) or nccl (one "
                         "GPU per rank, by local rank; needs a runtime built "
                         "with NCCL)"),
                cl::init("mpi"), cl::value_desc("mpi|nccl"),
                cl::cat(runCategory));
cl::opt<dist::RuntimeTarget> target(
    "target",
    cl::desc("Code to generate: cpu (host loops) or gpu (the runtime's copy "
             "kernels on a stream). Default: gpu for nccl, cpu for mpi. The "
             "mpi backend runs both, so --target=gpu tests the GPU lowering "
             "on CPUs"),
    dist::runtimeTargetOptionValues(), cl::cat(runCategory));
cl::opt<int64_t> permuteTableDevices(
    "permute-table-devices",
    cl::desc("Largest mesh whose permutes carry a rank-to-rank table; on "
             "larger ones the runtime computes the senders from the layouts "
             "(0: always)"),
    cl::init(4096), cl::value_desc("N"), cl::cat(runCategory));
cl::opt<std::string>
    entryName("entry",
              cl::desc("Function to run (default: the only public function)"),
              cl::value_desc("NAME"), cl::cat(runCategory));
cl::opt<std::string>
    inputText("input",
              cl::desc("Global value of every argument: iota (element = its "
                       "row-major index), random:SEED, or npy:DIR (argument "
                       "k from DIR/arg<k>.npy: the global shape, C order, "
                       "little endian; converted to the element type)"),
              cl::init("iota"), cl::value_desc("iota|random:SEED|npy:DIR"),
              cl::cat(runCategory));
cl::opt<std::string>
    dumpDir("dump",
            cl::desc("Write result k of rank r to DIR/result<k>.rank<r>.npy "
                     "(local padded shape, padding zeroed; bf16 as '<f4')"),
            cl::value_desc("DIR"), cl::cat(runCategory));
cl::opt<int> timeoutSeconds(
    "timeout",
    cl::desc("Stop if compiling and running take longer (0: no limit)"),
    cl::init(0), cl::value_desc("SECONDS"), cl::cat(runCategory));
cl::opt<uint64_t> memoryLimit(
    "memory-limit",
    cl::desc("Refuse a job whose ranks together need more memory (0, the "
             "default: this machine's memory, or its cgroup's limit)"),
    cl::init(0), cl::value_desc("BYTES"), cl::cat(runCategory));
cl::opt<std::string> saveLowered(
    "save-lowered",
    cl::desc("Also write the lowered module the ranks run (LLVM dialect, "
             "text) to FILE"),
    cl::value_desc("FILE"), cl::cat(runCategory));
cl::opt<unsigned> optLevel("opt-level",
                           cl::desc("LLVM optimisation level of the JIT"),
                           cl::init(2), cl::value_desc("0-3"),
                           cl::cat(runCategory));

cl::opt<dist::planner::Strategy>
    strategy("strategy", cl::desc("How reshards are planned"),
             cl::init(dist::planner::Strategy::Optimal),
             dist::strategyOptionValues(), cl::cat(planCategory));
cl::opt<std::string> topology("topology", cl::desc("Topology JSON file"),
                              cl::value_desc("FILE"), cl::cat(planCategory));
cl::list<std::string> alpha("alpha", cl::desc("Per-axis alpha, AXIS=SECONDS"),
                            cl::CommaSeparated, cl::cat(planCategory));
cl::list<std::string> beta("beta", cl::desc("Per-axis beta, AXIS=S_PER_BYTE"),
                           cl::CommaSeparated, cl::cat(planCategory));
cl::opt<std::string> cacheDir("cache-dir",
                              cl::desc("Persistent plan cache directory"),
                              cl::value_desc("DIR"), cl::cat(planCategory));
cl::opt<int64_t> maxPeakBytes("max-peak-bytes",
                              cl::desc("Per-device peak bytes limit"),
                              cl::init(0), cl::cat(planCategory));

// Between the front process and its workers.
cl::opt<bool> rankWorker("rank-worker", cl::Hidden,
                         cl::desc("Run as one rank of a job dist-run started"),
                         cl::cat(runCategory));
cl::opt<std::string> compiledFile("compiled", cl::Hidden,
                                  cl::desc("The lowered module (bytecode)"),
                                  cl::cat(runCategory));
// Testing aid (docs/dist-run.md): makes one rank misbehave at its first
// runtime call of the relevant kind, to check that failures are reported and
// never hang.
cl::opt<std::string> injectFault(
    "inject-fault", cl::Hidden,
    cl::desc("KIND:RANK with KIND one of count (pass a wrong element count to "
             "the first collective), axis (ask for a group over an axis the "
             "mesh lacks), exit (leave without distRtFinalize), kill "
             "(SIGKILL), hang (stop responding)"),
    cl::cat(runCategory));
// Testing aid: the front stops responding while it compiles, as a pass or
// a plan search that never ends would, to check that --timeout covers it.
cl::opt<bool> injectCompileHang(
    "inject-compile-hang", cl::Hidden,
    cl::desc("Stop responding while compiling (tests --timeout)"),
    cl::cat(runCategory));

constexpr const char *kOverview =
    "dist-run: compile a dist program and run it on N ranks (semantics §5)\n\n"
    "  Every argument's global tensor is iota (element = row-major linear "
    "index,\n"
    "  converted to the element type: nearest value for floats, wrap-around "
    "for\n"
    "  integers), random:SEED (see docs/dist-run.md) or npy:DIR: argument k "
    "is\n"
    "  read from DIR/arg<k>.npy (.npy 1.0-3.0, C order, little endian, "
    "shape =\n"
    "  the global shape; floats round to nearest even, bf16 included, "
    "integers\n"
    "  wrap; float data for an integer argument is an error). Each rank gets "
    "its\n"
    "  local padded shard with zero padding. A partial argument is held by "
    "the\n"
    "  device with coordinate 0 on the partial axes; the others hold the "
    "identity.\n"
    "  --dump writes DIR/result<k>.rank<r>.npy in the local padded shape "
    "with\n"
    "  the padding zeroed; bf16 results are widened exactly to float32 "
    "('<f4'),\n"
    "  f16 is '<f2', i1 is '|b1'.\n\n"
    "  Exit codes: 0 success, 1 compile error, a bad npy:DIR file, a job "
    "that\n"
    "  cannot fit in memory, a rank failed (rank and reason on stderr) or "
    "the\n"
    "  time limit passed, 2 bad usage.\n";

enum ExitCode { kSuccess = 0, kFailure = 1, kUsage = 2 };

bool haveNccl() {
#ifdef DIST_RUN_HAVE_NCCL
  return true;
#else
  return false;
#endif
}

//===----------------------------------------------------------------------===//
// Fault injection (workers only)
//===----------------------------------------------------------------------===//

struct Fault {
  enum Kind { None, Count, Axis, Exit, Kill, Hang } kind = None;
  int64_t rank = -1;
  bool fired = false;
  int64_t myRank = -1;

  static llvm::Expected<Fault> parse(llvm::StringRef text) {
    Fault fault;
    if (text.empty())
      return fault;
    auto [kind, rank] = text.split(':');
    fault.kind = llvm::StringSwitch<Kind>(kind)
                     .Case("count", Count)
                     .Case("axis", Axis)
                     .Case("exit", Exit)
                     .Case("kill", Kill)
                     .Case("hang", Hang)
                     .Default(None);
    if (fault.kind == None || rank.getAsInteger(10, fault.rank) ||
        fault.rank < 0)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "--inject-fault expects KIND:RANK with KIND one of count, axis, "
          "exit, kill, hang");
    return fault;
  }

  bool armed(bool forGroup) const {
    return kind != None && !fired && rank == myRank &&
           (kind == Axis) == forGroup;
  }
};

Fault fault;

void announce(const char *what, const char *op) {
  std::fprintf(stderr, "dist-run: rank %lld: injected fault: %s in %s\n",
               static_cast<long long>(fault.myRank), what, op);
  std::fflush(stderr);
}

/// Called at the start of every collective on every rank: on the faulty
/// rank, the first call misbehaves. Returns the count to pass on.
int64_t beforeCollective(const char *op, int64_t count) {
  if (!fault.armed(/*forGroup=*/false))
    return count;
  fault.fired = true;
  switch (fault.kind) {
  case Fault::Count:
    // One element fewer than the other ranks pass: the buffers stay large
    // enough, and the runtime's cross-rank check must catch the mismatch.
    announce("passing one element fewer than the other ranks", op);
    return count > 0 ? count - 1 : count + 1;
  case Fault::Exit:
    announce("leaving without distRtFinalize", op);
    std::exit(0);
  case Fault::Kill:
    announce("SIGKILL", op);
    std::raise(SIGKILL);
    break;
  case Fault::Hang:
    announce("stopping (no further progress)", op);
    for (;;)
      std::this_thread::sleep_for(std::chrono::hours(1));
  default:
    break;
  }
  return count;
}

int32_t faultyAllGather(int64_t group, const void *send, void *recv,
                        int64_t count, int32_t dtype, void *stream) {
  return distRtAllGather(group, send, recv,
                         beforeCollective("all_gather", count), dtype, stream);
}
int32_t faultyAllToAll(int64_t group, const void *send, void *recv,
                       int64_t count, int32_t dtype, void *stream) {
  return distRtAllToAll(group, send, recv,
                        beforeCollective("all_to_all", count), dtype, stream);
}
int32_t faultyReduceScatter(int64_t group, const void *send, void *recv,
                            int64_t count, int32_t dtype, int32_t redop,
                            void *stream) {
  return distRtReduceScatter(group, send, recv,
                             beforeCollective("reduce_scatter", count), dtype,
                             redop, stream);
}
int32_t faultyAllReduce(int64_t group, const void *send, void *recv,
                        int64_t count, int32_t dtype, int32_t redop,
                        void *stream) {
  return distRtAllReduce(group, send, recv,
                         beforeCollective("all_reduce", count), dtype, redop,
                         stream);
}
int32_t faultyPermute(int64_t mesh, const void *send, void *recv,
                      int64_t count, int32_t dtype, const int64_t *srcRank,
                      const int64_t *destOffsets, const int64_t *destList,
                      void *stream) {
  return distRtPermute(mesh, send, recv, beforeCollective("permute", count),
                       dtype, srcRank, destOffsets, destList, stream);
}
int32_t faultyPermuteByLayouts(int64_t mesh, const void *send, void *recv,
                               int64_t count, int32_t dtype, int64_t numDims,
                               const int64_t *dimAxes, int64_t dimAxesSize,
                               void *stream) {
  return distRtPermuteByLayouts(mesh, send, recv,
                                beforeCollective("permute", count), dtype,
                                numDims, dimAxes, dimAxesSize, stream);
}
int32_t faultyExchange(int64_t numDims, const int64_t *sendShape,
                       const void *send, const int64_t *recvShape, void *recv,
                       int64_t numTransfers, const int64_t *table,
                       int32_t dtype, void *stream) {
  // A count fault shrinks this rank's copy of the first non-empty box: the
  // ranks then disagree on the table, which the runtime must report.
  std::vector<int64_t> copy(table, table + numTransfers * (2 + 3 * numDims));
  if (beforeCollective("exchange", 1) != 1) {
    for (int64_t t = 0; t < numTransfers; ++t) {
      int64_t &size = copy[t * (2 + 3 * numDims) + 2 + 2 * numDims];
      if (size > 0) {
        --size;
        break;
      }
    }
  }
  return distRtExchange(numDims, sendShape, send, recvShape, recv,
                        numTransfers, copy.data(), dtype, stream);
}
int64_t faultyGroup(int64_t mesh, int64_t numAxes, const int64_t *axes) {
  if (!fault.armed(/*forGroup=*/true) || numAxes == 0)
    return distRtGroup(mesh, numAxes, axes);
  fault.fired = true;
  announce("asking for a group over an axis past the mesh's last", "group");
  std::vector<int64_t> bad(axes, axes + numAxes);
  bad[0] = distRtMeshNumAxes(mesh);
  return distRtGroup(mesh, numAxes, bad.data());
}

llvm::orc::SymbolMap faultSymbols(llvm::orc::MangleAndInterner interner) {
  llvm::orc::SymbolMap map;
  auto add = [&](llvm::StringRef name, auto *fn) {
    map[interner(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                           llvm::JITSymbolFlags::Exported};
  };
  add("distRtAllGather", &faultyAllGather);
  add("distRtAllToAll", &faultyAllToAll);
  add("distRtReduceScatter", &faultyReduceScatter);
  add("distRtAllReduce", &faultyAllReduce);
  add("distRtPermute", &faultyPermute);
  add("distRtPermuteByLayouts", &faultyPermuteByLayouts);
  add("distRtExchange", &faultyExchange);
  add("distRtGroup", &faultyGroup);
  return map;
}

//===----------------------------------------------------------------------===//
// Worker
//===----------------------------------------------------------------------===//

/// Reports a failure of this rank and ends the whole job: the other ranks may
/// be waiting for this one inside a collective, and must not hang.
[[noreturn]] void failRank(int64_t rank, const llvm::Twine &message) {
  llvm::errs() << "dist-run: ";
  if (rank >= 0)
    llvm::errs() << "rank " << rank << ": ";
  llvm::errs() << message << "\n";
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

int runWorker() {
  // The runtime reports its own failures (rank, op, reason) and aborts the
  // job; the checks here cover what happens around it.
  if (distRtInitWithBackend(backendName.c_str()) != DIST_RT_OK)
    failRank(-1, "cannot initialise the runtime: " +
                     llvm::Twine(distRtLastErrorMessage()));
  const int64_t rank = distRtWorldRank();
  if (distRtWorldSize() != numRanks)
    failRank(rank, "the job has " + llvm::Twine(distRtWorldSize()) +
                       " ranks, expected " + llvm::Twine(numRanks));
  llvm::Expected<Fault> parsedFault = Fault::parse(injectFault);
  if (!parsedFault)
    failRank(rank, llvm::toString(parsedFault.takeError()));
  fault = *parsedFault;
  fault.myRank = rank;
  if (fault.kind == Fault::Count)
    distRtSetValidation(1); // the check under test; same on every rank
  llvm::Expected<InputSpec> input = InputSpec::parse(inputText);
  if (!input)
    failRank(rank, llvm::toString(input.takeError()));

  mlir::DialectRegistry registry;
  registerDistRunDialects(registry);
  mlir::MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  // The signature comes from the global-view program (the lowered one has
  // lost the layouts); the code from the front's lowered module.
  mlir::OwningOpRef<mlir::ModuleOp> program =
      parseProgram(inputFile, context);
  if (!program)
    failRank(rank, "cannot parse '" + inputFile + "'");
  llvm::Expected<EntrySignature> signature =
      readEntrySignature(*program, entryName);
  if (!signature)
    failRank(rank, llvm::toString(signature.takeError()));

  std::vector<DeviceBuffer> arguments(signature->arguments.size());
  std::vector<DeviceBuffer> results(signature->results.size());
  auto allocate = [&](DeviceBuffer &buffer, const TensorSignature &sig,
                      const std::vector<uint8_t> &host) {
    buffer.bytes = sig.localBytes();
    if (buffer.bytes == 0)
      return;
    buffer.data = distRtAlloc(buffer.bytes);
    if (!buffer.data)
      failRank(rank, "cannot allocate " + llvm::Twine(buffer.bytes) +
                         " bytes for " + sig.typeText);
    distRtMemcpy(buffer.data, host.data(), buffer.bytes,
                 DIST_RT_COPY_HOST_TO_DEVICE, nullptr);
  };
  for (auto [k, buffer, sig] :
       llvm::enumerate(arguments, signature->arguments)) {
    std::vector<uint8_t> host(sig.localBytes());
    if (input->kind == InputSpec::Npy) {
      // The front checked the file; it is checked again in case it changed.
      llvm::Expected<NpyInput> npy = NpyInput::open(input->npyPath(k), k, sig);
      if (!npy)
        failRank(rank, llvm::toString(npy.takeError()));
      materializeArgument(
          sig, [&](int64_t index, void *dst) { npy->storeElement(index, dst); },
          rank, host.data());
    } else {
      materializeArgument(sig, *input, rank, host.data());
    }
    allocate(buffer, sig, host);
  }
  for (auto [buffer, sig] : llvm::zip_equal(results, signature->results))
    allocate(buffer, sig, std::vector<uint8_t>(sig.localBytes(), 0));

  mlir::OwningOpRef<mlir::ModuleOp> lowered =
      parseProgram(compiledFile, context);
  if (!lowered)
    failRank(rank, "cannot read the lowered program '" + compiledFile + "'");
  // Only a fault-injecting run interposes on the runtime; otherwise the
  // compiled code calls libdist_runtime directly.
  llvm::function_ref<llvm::orc::SymbolMap(llvm::orc::MangleAndInterner)>
      interposed = nullptr;
  if (fault.kind != Fault::None)
    interposed = faultSymbols;
  auto engine = createExecutionEngine(*lowered, optLevel, interposed);
  if (!engine)
    failRank(rank, "JIT compilation failed: " +
                       llvm::toString(engine.takeError()));
  auto function = (*engine)->lookupPacked(signature->name);
  if (!function)
    failRank(rank, "cannot find the compiled @" + signature->name + ": " +
                       llvm::toString(function.takeError()));

  PackedCall call;
  for (auto [buffer, sig] : llvm::zip_equal(arguments, signature->arguments))
    call.addMemRef(buffer.data, sig.localShape());
  for (auto [buffer, sig] : llvm::zip_equal(results, signature->results))
    call.addMemRef(buffer.data, sig.localShape());

  auto start = std::chrono::steady_clock::now();
  (*function)(call.arguments().data());
  if (distRtSynchronize(nullptr) != DIST_RT_OK)
    failRank(rank, distRtLastErrorMessage());
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (fault.kind != Fault::None && fault.rank == rank && !fault.fired)
    failRank(rank, "--inject-fault=" + injectFault +
                       " never fired: the program made no runtime call it "
                       "applies to on this rank");

  for (auto [k, buffer, sig] :
       llvm::enumerate(results, signature->results)) {
    // A rank outside the result's mesh holds no part of it (semantics §5).
    if (sig.mesh.coordinateOfRank(rank).empty())
      continue;
    std::vector<uint8_t> host(sig.localBytes());
    if (buffer.bytes)
      distRtMemcpy(host.data(), buffer.data, buffer.bytes,
                   DIST_RT_COPY_DEVICE_TO_HOST, nullptr);
    // The program promises zero padding; the dump guarantees it either way,
    // so that checkers can compare whole buffers.
    zeroPadding(sig, rank, host.data());
    if (dumpDir.empty())
      continue;
    llvm::SmallString<256> path(dumpDir);
    llvm::sys::path::append(path, "result" + llvm::Twine(k) + ".rank" +
                                      llvm::Twine(rank) + ".npy");
    if (llvm::Error error = writeNpy(path, sig, host.data()))
      failRank(rank, llvm::toString(std::move(error)));
  }

  double slowest = 0;
  MPI_Reduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    llvm::outs() << "dist-run: @" << signature->name << " ran on " << numRanks
                 << " ranks (" << backendName << ", " << input->str()
                 << " inputs): "
                 << llvm::format("%.3f", slowest * 1e3)
                 << " ms on the slowest rank";
    bool everyRank = llvm::all_of(signature->results, [&](const auto &sig) {
      return sig.mesh.getNumDevices() == numRanks;
    });
    if (!dumpDir.empty() && everyRank)
      llvm::outs() << "; " << signature->results.size() << " result(s) x "
                   << numRanks << " ranks written to " << dumpDir;
    else if (!dumpDir.empty())
      llvm::outs() << "; " << signature->results.size()
                   << " result(s), each from the ranks of its mesh, written to "
                   << dumpDir;
    llvm::outs() << "\n";
    llvm::outs().flush();
  }
  arguments.clear();
  results.clear();
  engine->reset();
  if (distRtFinalize() != DIST_RT_OK)
    failRank(rank, distRtLastErrorMessage());
  return kSuccess;
}

//===----------------------------------------------------------------------===//
// Front process
//===----------------------------------------------------------------------===//

int usageError(const llvm::Twine &message) {
  llvm::errs() << "dist-run: " << message << "\n";
  return kUsage;
}

int failure(const llvm::Twine &message) {
  llvm::errs() << "dist-run: " << message << "\n";
  return kFailure;
}

/// dist-mpirun next to this executable (build or install tree: they are
/// always side by side), else on PATH. No build path is compiled in, so an
/// installed tree can be moved.
std::optional<std::string> findMpirun(llvm::StringRef self) {
  llvm::SmallString<256> sibling(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(sibling, "dist-mpirun");
  if (llvm::sys::fs::can_execute(sibling))
    return std::string(sibling);
  if (llvm::ErrorOr<std::string> onPath =
          llvm::sys::findProgramByName("dist-mpirun"))
    return *onPath;
  return std::nullopt;
}

/// Removes the front's temporary folder however the front returns (and
/// before it ends by a stop signal: see dieBy).
struct TempDir {
  llvm::SmallString<128> path;
  void remove() {
    // std::filesystem, not llvm::sys::fs, which leaves FIFOs and sockets
    // (Open MPI's session folder holds both) and so the folder.
    std::error_code ec;
    if (!path.empty())
      std::filesystem::remove_all(std::string(path), ec);
    path.clear();
  }
  ~TempDir() { remove(); }
};

/// Ends the front after SIGINT, SIGTERM or SIGHUP, naming the signal, with
/// the temporary folder removed, killed by the same signal.
[[noreturn]] void stopBy(int signal, TempDir &temp, bool jobRan) {
  llvm::errs() << "dist-run: stopped by " << signalName(signal)
               << (jobRan ? ": the job (mpiexec and its ranks) was ended"
                          : ": no job was started")
               << " and the temporary folder removed\n";
  temp.remove();
  dieBy(signal);
}

int runFront(const char *argv0) {
  // --timeout counts from here: compiling may take long too.
  std::optional<Deadline> deadline;
  if (timeoutSeconds > 0)
    deadline = std::chrono::steady_clock::now() +
               std::chrono::seconds(timeoutSeconds);
  // Usage first: nothing is compiled or started for a bad command line.
  if (numRanks < 1)
    return usageError("--np must be at least 1 (got " +
                      llvm::Twine(numRanks) + ")");
  if (backendName != "mpi" && backendName != "nccl")
    return usageError("unknown backend '" + backendName + "' (available: mpi" +
                      (haveNccl() ? ", nccl" : "") + ")");
  // NCCL buffers live on the GPU, which host loops cannot touch.
  if (backendName == "nccl" && target.getNumOccurrences() &&
      target == dist::RuntimeTarget::Cpu)
    return usageError("--target=cpu cannot run on the nccl backend (its "
                      "buffers are device memory); use --target=gpu");
  if (backendName == "nccl" && !haveNccl())
    return usageError("the nccl backend is not available: this dist runtime "
                      "was built without NCCL (it needs CUDA and NCCL 2.18+ "
                      "at configure time); use --backend mpi");
  llvm::Expected<InputSpec> input = InputSpec::parse(inputText);
  if (!input)
    return usageError("bad --input '" + inputText +
                      "': " + llvm::toString(input.takeError()));
  if (optLevel > 3)
    return usageError("--opt-level must be 0, 1, 2 or 3");
  if (timeoutSeconds < 0)
    return usageError("--timeout must be >= 0");
  if (llvm::Expected<Fault> parsed = Fault::parse(injectFault); !parsed)
    return usageError(llvm::toString(parsed.takeError()));
  else if (parsed->kind != Fault::None && parsed->rank >= numRanks)
    return usageError("--inject-fault names rank " +
                      llvm::Twine(parsed->rank) + ", but the job has ranks 0.." +
                      llvm::Twine(numRanks - 1));
  if (!llvm::sys::fs::exists(inputFile))
    return failure("no such file '" + inputFile + "'");

  // Nothing to clean up until the job starts: past the deadline the
  // watchdog just ends the process.
  const std::string compileTimeout =
      ("dist-run: compiling '" + inputFile + "' did not finish within " +
       llvm::Twine(timeoutSeconds) + " s (--timeout) and was stopped\n")
          .str();
  std::optional<Watchdog> watchdog;
  if (deadline)
    watchdog.emplace(*deadline, compileTimeout, kFailure);

  mlir::DialectRegistry registry;
  registerDistRunDialects(registry);
  mlir::MLIRContext context(registry);
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module = parseProgram(inputFile, context);
  if (!module)
    return failure("cannot parse '" + inputFile + "'");
  llvm::Expected<EntrySignature> signature =
      readEntrySignature(*module, entryName);
  if (!signature)
    return failure(llvm::toString(signature.takeError()));
  // semantics §5: N must exceed every rank any mesh names (meshes may cover
  // only some of the ranks: pipeline stages).
  for (const auto &[name, mesh] : signature->meshes())
    if (mesh.getMaxRank() >= numRanks)
      return usageError("--np " + llvm::Twine(numRanks) + " is too small: mesh @" +
                        name + " names rank " + llvm::Twine(mesh.getMaxRank()) +
                        " (run with --np " + llvm::Twine(mesh.getMaxRank() + 1) +
                        " or more)");
  // npy:DIR: every file is checked (header, dtype, shape, size) before
  // anything is compiled or started; the workers read the data.
  std::string workerInput = inputText;
  if (input->kind == InputSpec::Npy) {
    llvm::SmallString<256> dir(input->dir);
    llvm::sys::fs::make_absolute(dir);
    input->dir = std::string(dir);
    workerInput = input->str();
    for (auto [k, sig] : llvm::enumerate(signature->arguments))
      if (llvm::Expected<NpyInput> npy =
              NpyInput::open(input->npyPath(k), k, sig);
          !npy)
        return failure("bad --input: " + llvm::toString(npy.takeError()));
  }

  dist::DistToLLVMPipelineOptions options;
  // The backend decides where buffers live, hence by default which code to
  // generate; the runtime's copy kernels also exist on host memory, so the
  // GPU lowering can run on the mpi backend.
  options.target = target.getNumOccurrences() ? target.getValue()
                   : backendName == "nccl"    ? dist::RuntimeTarget::Gpu
                                              : dist::RuntimeTarget::Cpu;
  options.permuteTableDevices = permuteTableDevices;
  options.strategy = strategy;
  options.topology = topology;
  options.alpha = alpha;
  options.beta = beta;
  options.cacheDir = cacheDir;
  options.maxPeakBytes = maxPeakBytes;

  // Memory: the arguments and results first (what the signature says), the
  // intermediates once every tensor has its layout; either way before any
  // rank starts.
  const uint64_t limit = memoryLimit ? uint64_t(memoryLimit) : machineMemory();
  const char *limitSource = memoryLimit ? "that --memory-limit allows"
                                        : "of memory this machine has";
  // A dist.auto entry's free tensors stand as replicated until planned: an
  // upper bound, not what the ranks will hold, so only the check after
  // planning applies to it.
  mlir::Operation *entry = module->lookupSymbol(signature->name);
  bool autoSharded = entry && entry->hasAttr("dist.auto");
  if (!autoSharded)
    if (llvm::Error error = checkJobMemory(rankMemory(*signature, nullptr),
                                           numRanks, limit, limitSource))
      return failure(llvm::toString(std::move(error)));
  if (injectCompileHang)
    while (true)
      std::this_thread::sleep_for(std::chrono::hours(1));
  auto compileFailed = [&] {
    return failure("compiling @" + signature->name + " of '" + inputFile +
                   "' failed (target " +
                       dist::stringifyRuntimeTarget(options.target) + ")");
  };
  if (mlir::failed(planProgram(*module, options)))
    return compileFailed();
  // Semantics §6a: a dist.auto entry has its free layouts only now; the
  // signature (and the program the ranks read it from) is the planned one.
  std::string plannedProgram;
  if (autoSharded) {
    llvm::Expected<EntrySignature> planned =
        readEntrySignature(*module, signature->name);
    if (!planned)
      return failure(llvm::toString(planned.takeError()));
    signature = std::move(planned);
    llvm::raw_string_ostream os(plannedProgram);
    module->print(os);
  }
  if (llvm::Error error = checkJobMemory(rankMemory(*signature, *module),
                                         numRanks, limit, limitSource))
    return failure(llvm::toString(std::move(error)));
  if (mlir::failed(lowerPlannedToLLVM(*module, options)))
    return compileFailed();
  if (llvm::Error error = checkLoweredEntry(*module, *signature))
    return failure(llvm::toString(std::move(error)));

  if (!saveLowered.empty()) {
    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> out =
        mlir::openOutputFile(saveLowered, &error);
    if (!out)
      return failure("cannot write '" + saveLowered + "': " + error);
    module->print(out->os());
    out->keep();
  }
  // The compilation is over: the job gets what is left of the time.
  watchdog.reset();
  if (deadline && std::chrono::steady_clock::now() >= *deadline) {
    llvm::errs() << compileTimeout;
    return kFailure;
  }

  // From here on a stop signal ends the job and removes the folder.
  catchStopSignals();
  TempDir temp;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("dist-run", temp.path))
    return failure("cannot create a temporary folder: " + ec.message());
  llvm::SmallString<256> compiled(temp.path);
  llvm::sys::path::append(compiled, "program.mlirbc");
  if (llvm::Error error = writeBytecode(*module, compiled))
    return failure(llvm::toString(std::move(error)));

  llvm::SmallString<256> dump(dumpDir);
  if (!dump.empty()) {
    llvm::sys::fs::make_absolute(dump);
    if (std::error_code ec = llvm::sys::fs::create_directories(dump))
      return failure("cannot create --dump folder '" + dump +
                     "': " + ec.message());
  }
  llvm::SmallString<256> file(inputFile);
  llvm::sys::fs::make_absolute(file);
  if (!plannedProgram.empty()) {
    file = temp.path;
    llvm::sys::path::append(file, "planned.mlir");
    std::error_code ec;
    llvm::raw_fd_ostream out(file, ec);
    if (ec)
      return failure("cannot write '" + file + "': " + ec.message());
    out << plannedProgram;
  }

  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&runFront));
  std::optional<std::string> mpirun = findMpirun(self);
  if (!mpirun)
    return failure("dist-mpirun not found next to " + self + " or on PATH");
  // The front enforces --timeout itself (runJob), so that the launcher is
  // mpiexec itself (dist-mpirun execs it) and its fate is known exactly.
  std::vector<std::string> args = {*mpirun};
  llvm::append_range(args,
                     std::vector<std::string>{
                         "-np", std::to_string(numRanks), self, "--rank-worker",
                         "--compiled=" + std::string(compiled),
                         std::string(file), "--np=" + std::to_string(numRanks),
                         "--entry=" + signature->name,
                         "--backend=" + backendName, "--input=" + workerInput,
                         "--opt-level=" + std::to_string(optLevel)});
  if (!dump.empty())
    args.push_back("--dump=" + std::string(dump));
  if (!injectFault.empty())
    args.push_back("--inject-fault=" + injectFault);
  if (int signal = stopSignalReceived())
    stopBy(signal, temp, /*jobRan=*/false);
  // Open MPI's session folder goes inside ours, so that it is removed with
  // ours even when mpiexec is killed before it can remove it.
  ::setenv("OMPI_MCA_orte_tmpdir_base", temp.path.c_str(), /*overwrite=*/0);
  JobResult job = runJob(args, deadline);
  switch (job.kind) {
  case JobResult::NotStarted:
    return failure("cannot start '" + *mpirun + "': " + job.error);
  case JobResult::Stopped:
    stopBy(job.signal, temp, /*jobRan=*/true);
  case JobResult::TimedOut:
    return failure("the job did not finish within " +
                   llvm::Twine(timeoutSeconds) + " s and was killed");
  case JobResult::Killed:
    // Not a rank's failure: nothing above names one.
    return failure("the job failed: mpiexec itself was killed by " +
                   signalName(job.signal) +
                   " (the launcher, not a failing rank; the ranks it left "
                   "were ended)");
  case JobResult::Exited:
    break;
  }
  if (job.code == 0)
    return kSuccess;
  return failure("the job failed (mpirun exit status " +
                 llvm::Twine(job.code) +
                 "); the messages above name the failing rank");
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  // libMLIR registers hundreds of LLVM options; --help shows only ours.
  cl::HideUnrelatedOptions({&runCategory, &planCategory});
  if (!cl::ParseCommandLineOptions(argc, argv, kOverview, &llvm::errs()))
    return kUsage;
  if (rankWorker)
    return runWorker();
  return runFront(argv[0]);
}
