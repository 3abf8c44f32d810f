//===- dist-run.cpp - compile a dist program and run it on N ranks --------===//
//
//   dist-run --np N [--backend mpi|nccl] FILE.mlir [--entry NAME]
//            [--input iota|random:SEED|npy:DIR] [--dump DIR]
//            [--timeout SECONDS]
//            [--strategy optimal|greedy] [--topology FILE] ...
//
// semantics §5. The front process parses FILE, records the entry's signature,
// with --input npy:DIR checks every DIR/arg<k>.npy against its argument (so
// that a bad file is one message before anything starts), lowers the module
// with the dist-to-LLVM pipeline and compiles it once, for this machine's
// CPU, into a shared object (SharedObject.h), and writes a job file beside
// it (common/JobFile.h: every rank's placement of every argument and
// result) in a private temporary folder. Then it runs dist-run-worker on
// every rank under dist-mpirun (mpirun with the flags this machine needs):
// each worker initialises the runtime, builds its local padded input shards,
// loads the shared object, calls the entry, and with --dump writes its
// results as .npy files. Compiling once in the front reports program errors
// once, before any rank starts, and spares the ranks the compiler's work;
// the workers need no MLIR. --compile-only DIR stops after writing the job.
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

#include "AutoTopology.h"
#include "Job.h"
#include "Memory.h"
#include "Program.h"
#include "SharedObject.h"
#include "Tensors.h"
#include "common/FaultSpec.h"
#include "common/FindSibling.h"
#include "common/JobFile.h"
#include "common/Npy.h"
#include "common/OutputFile.h"

#include "dist/Codegen/Defaults.h"
#include "dist/Dialect/Dist/Transforms/PassOptionValues.h"
#include "dist/Runtime/DistRuntime.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

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
cl::OptionCategory
    planCategory("Reshard planning (as in dist-reshard-pipeline)");

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
cl::opt<dist::ContractionLowering> contractions(
    "contractions",
    cl::desc("Local matrix products: through the runtime's GEMM (BLAS on "
             "the host, cuBLAS on a GPU; the default) or as loops"),
    cl::init(dist::ContractionLowering::Runtime),
    dist::contractionLoweringOptionValues(), cl::cat(runCategory));
cl::opt<dist::ComputeLowering> compute(
    "compute",
    cl::desc("target=cpu: the local compute other than products as fused, "
             "tiled and vectorized loop nests (the default) or as the loops "
             "linalg lowers each op to"),
    cl::init(dist::ComputeLowering::Fused), dist::computeLoweringOptionValues(),
    cl::cat(runCategory));
cl::opt<int64_t> vectorBytes(
    "vector-bytes",
    cl::desc("--compute fused: the vector width in bytes (default 64, "
             "AVX-512; LLVM splits wider vectors for narrower ISAs)"),
    cl::init(dist::codegen::kDefaultVectorBytes), cl::value_desc("B"),
    cl::cat(runCategory));
cl::opt<int64_t> microbatches(
    "microbatches",
    cl::desc("Run a function whose compute spans several meshes as a "
             "pipeline of M microbatches of its dist.batch_dim arguments "
             "(semantics §3c; default 1: as written)"),
    cl::init(1), cl::value_desc("M"), cl::cat(runCategory));
cl::opt<int64_t> rowTileElements(
    "row-tile-elements",
    cl::desc("--compute fused: about how many elements a block of rows that "
             "a softmax or a norm computes together holds (default 512)"),
    cl::init(dist::codegen::kDefaultRowTileElements), cl::value_desc("N"),
    cl::cat(runCategory));
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
cl::opt<int> reps(
    "reps",
    cl::desc("After the first call, call the entry N more times and print "
             "the median and minimum per-call time of the slowest rank, with "
             "the program's modelled cost (semantics §5)"),
    cl::init(0), cl::value_desc("N"), cl::cat(runCategory));
cl::opt<std::string> gpuChip(
    "gpu-chip",
    cl::desc("target=gpu: the GPU architecture the kernels are compiled for "
             "(default sm_80; sm_90 for H100/H200)"),
    cl::init("sm_80"), cl::value_desc("sm_NN"), cl::cat(runCategory));
cl::opt<std::string> compileOnly(
    "compile-only",
    cl::desc("Compile the program for the job into DIR (job.txt, "
             "program.so) and run nothing: dist-mpirun -np N dist-run-worker "
             "DIR/job.txt runs it, also on another machine"),
    cl::value_desc("DIR"), cl::cat(runCategory));
cl::opt<std::string> targetCpu(
    "cpu",
    cl::desc("CPU to generate code for (an LLVM CPU name, e.g. x86-64-v3; "
             "default: this machine's)"),
    cl::value_desc("NAME"), cl::cat(runCategory));
cl::opt<unsigned> optLevel("opt-level",
                           cl::desc("LLVM optimisation level of the program"),
                           cl::init(2), cl::value_desc("0-3"),
                           cl::cat(runCategory));

// How reshards are planned and priced: the rows every planning pipeline
// declares (PlanningOptions.def).
#define DIST_PLANNING_OPTION(Member, Flag, Type, Default, Values, Passes,      \
                             Description)                                      \
  cl::opt<Type> Member(Flag, cl::desc(Description), cl::init(Default), Values, \
                       cl::cat(planCategory));
#define DIST_PLANNING_LIST_OPTION(Member, Flag, Description)                   \
  cl::list<std::string> Member(Flag, cl::desc(Description),                    \
                               cl::CommaSeparated, cl::cat(planCategory));
#include "dist/Dialect/Dist/Transforms/PlanningOptions.def"

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

/// The command line's errors that need no file read: the exit code of the
/// first one found (reported), or none.
std::optional<int> checkCommandLine() {
  if (numRanks < 1)
    return usageError("--np must be at least 1 (got " + llvm::Twine(numRanks) +
                      ")");
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
  if (optLevel > 3)
    return usageError("--opt-level must be 0, 1, 2 or 3");
  if (vectorBytes < 1 || vectorBytes > 1024)
    return usageError("--vector-bytes must be 1 to 1024 (got " +
                      llvm::Twine(vectorBytes) + ")");
  if (microbatches < 1)
    return usageError("--microbatches must be at least 1 (got " +
                      llvm::Twine(microbatches) + ")");
  if (rowTileElements < 1)
    return usageError("--row-tile-elements must be at least 1 (got " +
                      llvm::Twine(rowTileElements) + ")");
  if (timeoutSeconds < 0)
    return usageError("--timeout must be >= 0");
  if (reps < 0)
    return usageError("--reps must be >= 0 (got " + llvm::Twine(reps) + ")");
  if (!targetCpu.empty() && !isKnownCpu(targetCpu))
    return usageError("--cpu '" + targetCpu + "' is not a CPU LLVM knows for " +
                      llvm::sys::getProcessTriple() +
                      " (e.g. x86-64, x86-64-v3, znver4, sapphirerapids)");
  if (!llvm::Regex("^sm_[0-9]+[af]?$").match(gpuChip))
    return usageError("--gpu-chip '" + gpuChip +
                      "' is not a CUDA architecture name (sm_80, sm_90, "
                      "sm_90a, ...)");
  if (llvm::Expected<FaultSpec> parsed = FaultSpec::parse(injectFault); !parsed)
    return usageError(llvm::toString(parsed.takeError()));
  else if (parsed->kind != FaultSpec::None && parsed->rank >= numRanks)
    return usageError("--inject-fault names rank " + llvm::Twine(parsed->rank) +
                      ", but the job has ranks 0.." +
                      llvm::Twine(numRanks - 1));
  return std::nullopt;
}

/// The pipeline's options from the command line's.
void setPipelineOptions(dist::DistToLLVMPipelineOptions &options,
                        const std::string &topologyFile) {
  // The backend decides where buffers live, hence by default which code to
  // generate; the runtime's copy kernels also exist on host memory, so the
  // GPU lowering can run on the mpi backend.
  options.target = target.getNumOccurrences() ? target.getValue()
                   : backendName == "nccl"    ? dist::RuntimeTarget::Gpu
                                              : dist::RuntimeTarget::Cpu;
  options.permuteTableDevices = permuteTableDevices;
  options.contractions = contractions;
  options.compute = compute;
  options.vectorBytes = vectorBytes;
  options.rowTileElements = rowTileElements;
  options.microbatches = microbatches;
  options.gpuChip = gpuChip;
#define DIST_PLANNING_OPTION(Member, Flag, Type, Default, Values, Passes,      \
                             Description)                                      \
  options.Member = Member;
#define DIST_PLANNING_LIST_OPTION(Member, Flag, Description)                   \
  options.Member = Member;
#include "dist/Dialect/Dist/Transforms/PlanningOptions.def"
  // --topology auto, resolved to this machine's calibration.
  options.topology = topologyFile;
}

/// Makes `input`'s folder absolute (the workers run elsewhere) and checks
/// every argument's file: header, dtype, shape and size.
llvm::Error checkNpyInputs(InputSpec &input, const EntrySignature &signature) {
  llvm::SmallString<256> dir(input.dir);
  llvm::sys::fs::make_absolute(dir);
  input.dir = std::string(dir);
  for (auto [k, sig] : llvm::enumerate(signature.arguments))
    if (llvm::Expected<NpyInput> npy = NpyInput::open(
            input.npyPath(k), k, sig.globalShape, sig.element, sig.typeText);
        !npy)
      return npy.takeError();
  return llvm::Error::success();
}

int runFront(const char *argv0) {
  // --timeout counts from here: compiling may take long too.
  std::optional<Deadline> deadline;
  if (timeoutSeconds > 0)
    deadline =
        std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  // Usage first: nothing is compiled or started for a bad command line.
  if (std::optional<int> bad = checkCommandLine())
    return *bad;
  llvm::Expected<InputSpec> input = InputSpec::parse(inputText);
  if (!input)
    return usageError("bad --input '" + inputText +
                      "': " + llvm::toString(input.takeError()));
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
      return usageError("--np " + llvm::Twine(numRanks) +
                        " is too small: mesh @" + name + " names rank " +
                        llvm::Twine(mesh.getMaxRank()) + " (run with --np " +
                        llvm::Twine(mesh.getMaxRank() + 1) + " or more)");
  // npy:DIR: every file is checked (header, dtype, shape, size) before
  // anything is compiled or started; the workers read the data.
  std::string workerInput = inputText;
  if (input->kind == InputSpec::Npy) {
    if (llvm::Error error = checkNpyInputs(*input, *signature))
      return failure("bad --input: " + llvm::toString(std::move(error)));
    workerInput = input->str();
  }

  // --topology auto: this machine's calibration for the entry's meshes.
  std::string topologyFile = topology;
  if (topology == "auto") {
    std::string self = llvm::sys::fs::getMainExecutable(
        argv0, reinterpret_cast<void *>(&runFront));
    llvm::Expected<std::string> file = dist::run::autoTopology(
        signature->meshes(), numRanks, backendName, self);
    if (!file)
      return failure(llvm::toString(file.takeError()));
    topologyFile = *file;
  }

  dist::DistToLLVMPipelineOptions options;
  setPipelineOptions(options, topologyFile);

  // Memory: the arguments and results first (what the signature says), the
  // intermediates once every tensor has its layout; either way before any
  // rank starts.
  const uint64_t limit = memoryLimit ? uint64_t(memoryLimit) : machineMemory();
  const char *limitSource =
      memoryLimit ? "that --memory-limit allows" : "of memory this machine has";
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
  double modelledSeconds = 0;
  if (mlir::failed(
          planProgram(*module, options, reps > 0 ? &modelledSeconds : nullptr)))
    return compileFailed();
  // Semantics §6a: a dist.auto entry has its free layouts only now; the
  // signature (and so what the ranks hold) is the planned one.
  if (autoSharded) {
    llvm::Expected<EntrySignature> planned =
        readEntrySignature(*module, signature->name);
    if (!planned)
      return failure(llvm::toString(planned.takeError()));
    signature = std::move(planned);
  }
  if (llvm::Error error = checkJobMemory(rankMemory(*signature, *module),
                                         numRanks, limit, limitSource))
    return failure(llvm::toString(std::move(error)));
  if (mlir::failed(lowerPlannedToLLVM(*module, options)))
    return compileFailed();
  if (llvm::Error error = checkLoweredEntry(*module, *signature))
    return failure(llvm::toString(std::move(error)));

  if (!saveLowered.empty())
    if (llvm::Error error =
            writeOutputFile(saveLowered, [&](llvm::raw_pwrite_stream &os) {
              module->print(os);
              return llvm::Error::success();
            }))
      return failure(llvm::toString(std::move(error)));
  // The job's folder: --compile-only's, or a private temporary one that
  // goes with the front. From here on a stop signal ends the job and
  // removes the temporary folder.
  catchStopSignals();
  TempDir temp;
  llvm::SmallString<256> jobDir(compileOnly);
  if (compileOnly.empty()) {
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("dist-run", temp.path))
      return failure("cannot create a temporary folder: " + ec.message());
    jobDir = temp.path;
  } else if (std::error_code ec = llvm::sys::fs::create_directories(jobDir)) {
    return failure("cannot create --compile-only folder '" + jobDir +
                   "': " + ec.message());
  }
  // Compiled once, here: the ranks load the shared object.
  auto inJobDir = [&](llvm::StringRef name) {
    llvm::SmallString<256> path(jobDir);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  SharedObjectOptions compile;
  compile.optLevel = optLevel;
  compile.cpu = targetCpu;
  if (llvm::Error error =
          compileSharedObject(*module, signature->name, compile,
                              inJobDir("program.o"), inJobDir("program.so")))
    return failure("compiling @" + signature->name + " of '" + inputFile +
                   "' failed: " + llvm::toString(std::move(error)));
  // The compilation is over: the job gets what is left of the time.
  watchdog.reset();
  if (deadline && std::chrono::steady_clock::now() >= *deadline) {
    llvm::errs() << compileTimeout;
    return kFailure;
  }

  llvm::SmallString<256> dump(dumpDir);
  if (!dump.empty()) {
    llvm::sys::fs::make_absolute(dump);
    if (std::error_code ec = llvm::sys::fs::create_directories(dump))
      return failure("cannot create --dump folder '" + dump +
                     "': " + ec.message());
  }
  // Everything a rank needs, so that it needs no MLIR and no planner.
  JobFile manifest;
  manifest.entry = signature->name;
  manifest.symbol = packedSymbol(signature->name);
  manifest.library = "program.so";
  manifest.backend = backendName;
  manifest.target = dist::stringifyRuntimeTarget(options.target).str();
  manifest.numRanks = numRanks;
  manifest.input = workerInput;
  manifest.dump = std::string(dump);
  manifest.fault = injectFault;
  manifest.reps = reps;
  manifest.modelledSeconds = modelledSeconds;
  for (const TensorSignature &sig : signature->arguments)
    manifest.arguments.push_back(tensorJobOf(sig, numRanks));
  for (const TensorSignature &sig : signature->results)
    manifest.results.push_back(tensorJobOf(sig, numRanks));
  const std::string jobFile = inJobDir("job.txt");
  if (llvm::Error error = writeJobFile(jobFile, manifest))
    return failure(llvm::toString(std::move(error)));
  if (!compileOnly.empty()) {
    llvm::outs() << "dist-run: @" << signature->name << " compiled for "
                 << numRanks << " ranks (" << backendName << ") into " << jobDir
                 << "; run it with: dist-mpirun -np " << numRanks
                 << " dist-run-worker " << jobFile << "\n";
    return kSuccess;
  }

  std::string self = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&runFront));
  std::optional<std::string> mpirun = findSibling(self, "dist-mpirun");
  if (!mpirun)
    return failure("dist-mpirun not found next to " + self + " or on PATH");
  // The front enforces --timeout itself (runJob), so that the launcher is
  // mpiexec itself (dist-mpirun execs it) and its fate is known exactly.
  std::optional<std::string> worker = findSibling(self, "dist-run-worker");
  if (!worker)
    return failure("dist-run-worker not found next to " + self + " or on PATH");
  std::vector<std::string> args = {*mpirun, "-np", std::to_string(numRanks),
                                   *worker, jobFile};
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
  return failure("the job failed (mpirun exit status " + llvm::Twine(job.code) +
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
  return runFront(argv[0]);
}
