//===- ReshardBench.cpp - compiled reshards vs the raw MPI collectives ----===//
//
//   dist-mpirun -np 8 dist-reshard-bench [--sizes 1MiB,4MiB,16MiB,64MiB]
//       [--ops all_gather,all_gather_cols,all_to_all,reduce_scatter,all_reduce]
//       [--reps N]
//       [--opt-level 0-3] [--no-validation] [--json]
//
// Each op is a global-view reshard on a 1-D mesh of all ranks that the
// planner turns into one collective:
//   all_gather      tensor<N>, [{"x"}]                  -> [{}]
//   all_gather_cols tensor<RxC>, [{}, {"x"}]            -> [{}, {}]
//   all_to_all      tensor<RxC>, [{"x"}, {}]            -> [{}, {"x"}]
//   reduce_scatter  tensor<N>, [{}] partial = sum {"x"} -> [{"x"}]
//   all_reduce      tensor<N>, [{}] partial = sum {"x"} -> [{}]
// All of them are compiled by the same pipeline as dist-run (one module, one
// JIT), called through the same calling convention, and timed against the
// MPI collective that computes the same result from the same buffers, in one
// run: samples alternate between the two so that both see the same machine
// load, each sample is the slowest rank's time for a batch of calls, and the
// reported time is the median sample. ratio = MPI time / compiled time, i.e.
// the compiled code's throughput relative to raw MPI (1.0 = no overhead).
//
// Size = the larger local buffer in bytes (the gathered output of
// all_gather, the input of reduce_scatter, either buffer of the others), as
// in dist-runtime-bench. f32 throughout. Before timing, the compiled result
// is checked element by element against the expected shard of the global
// iota input.
//
// The all_to_all row needs a word: S(0) -> S(1) must also reorder data
// (each destination's columns are strided in the source rows), which the
// compiled code leaves to the runtime's strided all-to-all (one direct copy
// between the ranks' shared heaps, no pack pass). The raw MPI_Alltoall on
// the same buffers moves the same bytes without reordering them, so it does
// not compute the reshard: it is the cost of moving the bytes alone. A second
// baseline, "MPI reshard", is MPI computing the same target layout (a strided
// send type), checked like the compiled result; for the other ops the raw
// collective already computes the reshard. all_gather_cols, a gather along
// the inner dim (column blocks), is the same story for a gather: the raw
// MPI_Allgather leaves the blocks stacked, "MPI reshard" receives them into
// their columns with a strided recv type, and the compiled code has the
// runtime write them there (distRtAllToAllStrided with a send chunk stride
// of 0).
//
//===----------------------------------------------------------------------===//

#include "Program.h"
#include "Tensors.h"

#include "dist/Runtime/DistRuntime.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace dist::run;

namespace {

const char *const kOps[] = {"all_gather", "all_gather_cols", "all_to_all",
                            "reduce_scatter", "all_reduce"};
/// Columns of the all_to_all and all_gather_cols tensors: a multiple of
/// every rank count up to 1024 that divides it, and rows of 4 KiB.
constexpr int64_t kAllToAllColumns = 1024;

/// Cases whose raw collective moves the bytes without producing the target
/// layout (column blocks), so MPI's own reshard is timed too.
bool movesColumns(llvm::StringRef op) {
  return op == "all_to_all" || op == "all_gather_cols";
}

struct Options {
  std::vector<int64_t> sizes{1 << 20, 4 << 20, 16 << 20, 64 << 20};
  std::vector<std::string> ops{std::begin(kOps), std::end(kOps)};
  int reps = 7;
  unsigned optLevel = 3;
  bool validation = true;
  bool json = false;
};

[[noreturn]] void usage(const std::string &problem) {
  std::fprintf(stderr,
               "dist-reshard-bench: %s\nusage: dist-mpirun -np P "
               "dist-reshard-bench [--sizes LIST] [--ops LIST] [--reps N] "
               "[--opt-level 0-3] [--no-validation] [--json]\n"
               "  sizes: bytes with optional KiB/MiB/GiB suffix, "
               "comma-separated\n  ops: all_gather, all_gather_cols, "
               "all_to_all, reduce_scatter, all_reduce\n",
               problem.c_str());
  std::exit(2);
}

int64_t parseSize(llvm::StringRef text) {
  int64_t scale = 1;
  if (text.consume_back("KiB"))
    scale = 1 << 10;
  else if (text.consume_back("MiB"))
    scale = 1 << 20;
  else if (text.consume_back("GiB"))
    scale = int64_t(1) << 30;
  else
    text.consume_back("B");
  int64_t value = 0;
  if (text.getAsInteger(10, value) || value <= 0)
    usage("bad size '" + text.str() + "'");
  return value * scale;
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> llvm::StringRef {
      if (i + 1 >= argc)
        usage(a + " needs a value");
      return argv[++i];
    };
    if (a == "--sizes") {
      o.sizes.clear();
      llvm::SmallVector<llvm::StringRef> parts;
      value().split(parts, ',', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef s : parts)
        o.sizes.push_back(parseSize(s));
    } else if (a == "--ops") {
      o.ops.clear();
      llvm::SmallVector<llvm::StringRef> parts;
      value().split(parts, ',', -1, /*KeepEmpty=*/false);
      for (llvm::StringRef op : parts) {
        if (!llvm::is_contained(kOps, op))
          usage("unknown op '" + op.str() + "'");
        o.ops.push_back(op.str());
      }
    } else if (a == "--reps") {
      if (value().getAsInteger(10, o.reps) || o.reps < 1)
        usage("--reps must be a positive integer");
    } else if (a == "--opt-level") {
      if (value().getAsInteger(10, o.optLevel) || o.optLevel > 3)
        usage("--opt-level must be 0, 1, 2 or 3");
    } else if (a == "--no-validation") {
      o.validation = false;
    } else if (a == "--json") {
      o.json = true;
    } else {
      usage("unknown argument '" + a + "'");
    }
  }
  return o;
}

std::string sizeName(int64_t bytes) {
  if (bytes % (1 << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes % 1024 == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " B";
}

struct Case {
  std::string op;
  int64_t bytes = 0; // the larger local buffer
  std::string function;
  EntrySignature signature;
  std::string runtimeCalls; // data-moving distRt* calls of the compiled code
  double mpiSeconds = 0, compiledSeconds = 0;
  double mpiReshardSeconds = 0; // MPI producing the same target layout
};

/// The global-view program of one case, as a function of `module`.
std::string caseFunction(const std::string &op, int64_t bytes, int64_t p,
                         const std::string &name) {
  const int64_t elements = bytes / 4;
  std::string from, to, shape;
  if (op == "all_to_all") {
    // Local input (R/p) x C holds `bytes`.
    int64_t rows = elements / kAllToAllColumns * p;
    shape = std::to_string(rows) + "x" + std::to_string(kAllToAllColumns);
    from = R"([{"x"}, {}])";
    to = R"([{}, {"x"}])";
  } else if (op == "all_gather_cols") {
    // The gathered local R x C holds `bytes`.
    shape = std::to_string(elements / kAllToAllColumns) + "x" +
            std::to_string(kAllToAllColumns);
    from = R"([{}, {"x"}])";
    to = R"([{}, {}])";
  } else {
    shape = std::to_string(elements);
    if (op == "all_gather") {
      from = R"([{"x"}])";
      to = R"([{}])";
    } else {
      from = R"([{}], partial = sum {"x"})";
      to = op == "reduce_scatter" ? R"([{"x"}])" : R"([{}])";
    }
  }
  std::string in =
      "tensor<" + shape + "xf32, #dist.sharding<@m, " + from + ">>";
  std::string out = "tensor<" + shape + "xf32, #dist.sharding<@m, " + to + ">>";
  return "func.func @" + name + "(%a: " + in + ") -> " + out +
         " {\n  %b = dist.reshard %a : " + in + " -> " + out +
         "\n  return %b : " + out + "\n}\n";
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

[[noreturn]] void fail(int64_t rank, const llvm::Twine &message) {
  // One write, so that MPI_Abort's banner cannot split the line.
  llvm::errs() << "dist-reshard-bench: rank " + std::to_string(rank) + ": " +
                      message.str() + "\n";
  llvm::errs().flush();
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::exit(1);
}

/// Rank 0's report: a markdown table, or one JSON object with --json.
void printReport(const std::vector<Case> &cases, const Options &opt,
                 int64_t p) {
  double minRatio = INFINITY, logSum = 0;
  for (const Case &c : cases) {
    double ratio = c.mpiSeconds / c.compiledSeconds;
    minRatio = std::min(minRatio, ratio);
    logSum += std::log(ratio);
  }
  const double geomean = std::exp(logSum / cases.size());
  if (opt.json) {
    llvm::outs() << "{\"ranks\": " << p << ", \"dtype\": \"f32\", "
                 << "\"validation\": " << (opt.validation ? "true" : "false")
                 << ", \"reps\": " << opt.reps
                 << ", \"opt_level\": " << opt.optLevel << ", \"results\": [";
    for (auto [i, c] : llvm::enumerate(cases))
      llvm::outs() << (i ? ", " : "") << "{\"op\": \"" << c.op
                   << "\", \"bytes\": " << c.bytes << ", \"calls\": \""
                   << c.runtimeCalls
                   << "\", \"mpi_s\": " << llvm::format("%.6e", c.mpiSeconds)
                   << ", \"mpi_reshard_s\": "
                   << llvm::format("%.6e", c.mpiReshardSeconds)
                   << ", \"compiled_s\": "
                   << llvm::format("%.6e", c.compiledSeconds) << ", \"ratio\": "
                   << llvm::format("%.4f", c.mpiSeconds / c.compiledSeconds)
                   << ", \"ratio_vs_mpi_reshard\": "
                   << llvm::format("%.4f",
                                   c.mpiReshardSeconds / c.compiledSeconds)
                   << "}";
    llvm::outs() << "], \"min_ratio\": " << llvm::format("%.4f", minRatio)
                 << ", \"geomean_ratio\": " << llvm::format("%.4f", geomean)
                 << "}\n";
  } else {
    llvm::outs() << "dist-reshard-bench: " << p << " ranks, f32, runtime "
                 << "validation " << (opt.validation ? "on" : "off")
                 << ", JIT -O" << opt.optLevel << ", median of " << opt.reps
                 << " samples\n\n";
    llvm::outs() << "| reshard | compiled code calls | size | MPI ms | "
                    "compiled ms | MPI GB/s | compiled GB/s | ratio | "
                    "MPI reshard ms | ratio vs MPI reshard |\n"
                    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const Case &c : cases)
      llvm::outs()
          << "| " << c.op << " | " << c.runtimeCalls << " | "
          << sizeName(c.bytes) << " | "
          << llvm::format("%.3f", c.mpiSeconds * 1e3) << " | "
          << llvm::format("%.3f", c.compiledSeconds * 1e3) << " | "
          << llvm::format("%.2f", c.bytes / c.mpiSeconds / 1e9) << " | "
          << llvm::format("%.2f", c.bytes / c.compiledSeconds / 1e9) << " | "
          << llvm::format("%.3f", c.mpiSeconds / c.compiledSeconds) << " | "
          << (movesColumns(c.op)
                  ? llvm::formatv("{0:F3}", c.mpiReshardSeconds * 1e3).str()
                  : std::string("="))
          << " | "
          << llvm::format("%.3f", c.mpiReshardSeconds / c.compiledSeconds)
          << " |\n";
    llvm::outs() << "\nratio = MPI time / compiled time (throughput "
                    "relative to the raw MPI collective on the same "
                    "buffers): min "
                 << llvm::format("%.3f", minRatio) << ", geometric mean "
                 << llvm::format("%.3f", geomean)
                 << "\nMPI reshard = MPI producing the same target layout "
                    "(all_to_all: MPI_Alltoall with a strided send type, "
                    "all_gather_cols: MPI_Allgather with a strided recv "
                    "type; "
                    "'=': the raw collective already does)\n";
  }
  llvm::outs().flush();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  Options opt = parse(argc, argv);
  if (distRtInitWithBackend("mpi") != DIST_RT_OK)
    return 1;
  distRtSetValidation(opt.validation ? 1 : 0);
  const int64_t rank = distRtWorldRank();
  const int64_t p = distRtWorldSize();
  if (kAllToAllColumns % p != 0)
    fail(rank, "the all_to_all case needs a rank count dividing " +
                   llvm::Twine(kAllToAllColumns));
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);

  // One module with every case, lowered and JIT-compiled once.
  std::vector<Case> cases;
  std::string text = "dist.mesh @m = <[\"x\"=" + std::to_string(p) + "]>\n";
  for (const std::string &op : opt.ops) {
    for (int64_t requested : opt.sizes) {
      // Round so that every dim divides evenly: p floats, or p rows of the
      // all_to_all tensor.
      int64_t unit = movesColumns(op) ? 4 * kAllToAllColumns : 4 * p;
      int64_t bytes = std::max(unit, requested / unit * unit);
      Case c;
      c.op = op;
      c.bytes = bytes;
      c.function = op + "_" + std::to_string(bytes);
      text += caseFunction(op, bytes, p, c.function);
      cases.push_back(std::move(c));
    }
  }

  mlir::DialectRegistry registry;
  registerDistRunDialects(registry);
  mlir::MLIRContext context(registry);
  mlir::OwningOpRef<mlir::ModuleOp> module = parseProgramText(text, context);
  if (!module)
    fail(rank, "cannot parse the generated program");
  for (Case &c : cases) {
    auto signature = readEntrySignature(*module, c.function);
    if (!signature)
      fail(rank, llvm::toString(signature.takeError()));
    c.signature = std::move(*signature);
  }
  if (mlir::failed(lowerToLLVM(*module, dist::DistToLLVMPipelineOptions())))
    fail(rank, "the pipeline failed");
  for (Case &c : cases) {
    if (llvm::Error error = checkLoweredEntry(*module, c.signature))
      fail(rank, llvm::toString(std::move(error)));
    // Which runtime calls move the data, for the table: proof that the
    // planner chose one collective and what the lowering put around it.
    std::set<std::string> calls;
    auto func = module->lookupSymbol<mlir::LLVM::LLVMFuncOp>(c.function);
    func.walk([&](mlir::LLVM::CallOp call) {
      std::optional<llvm::StringRef> callee = call.getCallee();
      if (callee && callee->starts_with("distRt") &&
          !llvm::is_contained({"distRtMeshCreate", "distRtGroup", "distRtAlloc",
                               "distRtFree", "distRtDefaultStream",
                               "distRtSynchronize"},
                              *callee))
        calls.insert(callee->str());
    });
    c.runtimeCalls = llvm::join(calls, ", ");
  }
  auto engine = createExecutionEngine(*module, opt.optLevel);
  if (!engine)
    fail(rank, "JIT compilation failed: " + llvm::toString(engine.takeError()));

  const InputSpec iota;
  for (Case &c : cases) {
    auto function = (*engine)->lookupPacked(c.function);
    if (!function)
      fail(rank, llvm::toString(function.takeError()));
    const TensorSignature &inSig = c.signature.arguments[0];
    const TensorSignature &outSig = c.signature.results[0];
    // Runtime memory (64-byte aligned host memory for mpi), as in dist-run.
    void *in = distRtAlloc(inSig.localBytes());
    void *out = distRtAlloc(outSig.localBytes());
    if (!in || !out)
      fail(rank, "cannot allocate the buffers of " + c.function);
    materializeArgument(inSig, iota, rank, in);
    std::memset(out, 0, outSig.localBytes());

    PackedCall call;
    call.addMemRef(in, inSig.localShape());
    call.addMemRef(out, outSig.localShape());
    auto runCompiled = [&] { (*function)(call.arguments().data()); };

    // The compiled result must be this rank's shard of the global iota.
    runCompiled();
    std::vector<uint8_t> expected(outSig.localBytes());
    materializeArgument(outSig, iota, rank, expected.data());
    if (std::memcmp(expected.data(), out, expected.size()) != 0)
      fail(rank, "@" + c.function + " computed a wrong result");

    const int64_t inCount = inSig.localElements();
    const int64_t outCount = outSig.localElements();
    auto check = [&](int rc, const char *what) {
      if (rc != MPI_SUCCESS)
        fail(rank, llvm::Twine(what) + " failed");
    };
    // The raw collective on the same buffers.
    auto runMpi = [&] {
      if (c.op == "all_gather" || c.op == "all_gather_cols")
        check(MPI_Allgather(in, static_cast<int>(inCount), MPI_FLOAT, out,
                            static_cast<int>(inCount), MPI_FLOAT, comm),
              "MPI_Allgather");
      else if (c.op == "all_to_all")
        check(MPI_Alltoall(in, static_cast<int>(inCount / p), MPI_FLOAT, out,
                           static_cast<int>(outCount / p), MPI_FLOAT, comm),
              "MPI_Alltoall");
      else if (c.op == "reduce_scatter")
        check(MPI_Reduce_scatter_block(in, out, static_cast<int>(outCount),
                                       MPI_FLOAT, MPI_SUM, comm),
              "MPI_Reduce_scatter_block");
      else
        check(MPI_Allreduce(in, out, static_cast<int>(outCount), MPI_FLOAT,
                            MPI_SUM, comm),
              "MPI_Allreduce");
    };
    // For S(0) -> S(1) the raw MPI_Alltoall moves contiguous chunks and so
    // does not produce the target layout; MPI produces it with a strided
    // send type (chunk j = columns [j*c, (j+1)*c) of every local row), which
    // is what a hand-written MPI program would do; for all_gather_cols the
    // same type, as the recv type, puts member j's block into columns
    // [j*c, (j+1)*c) of every row. For the other ops the raw collective
    // already is the whole reshard.
    MPI_Datatype columns = MPI_DATATYPE_NULL;
    const int64_t rows = inSig.localShape()[0];
    if (movesColumns(c.op)) {
      MPI_Datatype vector;
      const int64_t chunk = kAllToAllColumns / p;
      check(MPI_Type_vector(static_cast<int>(rows), static_cast<int>(chunk),
                            static_cast<int>(kAllToAllColumns), MPI_FLOAT,
                            &vector),
            "MPI_Type_vector");
      check(MPI_Type_create_resized(vector, 0, chunk * sizeof(float), &columns),
            "MPI_Type_create_resized");
      check(MPI_Type_commit(&columns), "MPI_Type_commit");
      MPI_Type_free(&vector);
    }
    auto runMpiReshard = [&] {
      if (c.op == "all_gather_cols")
        check(MPI_Allgather(in, static_cast<int>(inCount), MPI_FLOAT, out, 1,
                            columns, comm),
              "MPI_Allgather (strided recv type)");
      else
        check(MPI_Alltoall(in, 1, columns, out, static_cast<int>(outCount / p),
                           MPI_FLOAT, comm),
              "MPI_Alltoall (strided send type)");
    };
    if (movesColumns(c.op)) {
      std::memset(out, 0, outSig.localBytes());
      runMpiReshard();
      if (std::memcmp(expected.data(), out, expected.size()) != 0)
        fail(rank, "MPI's strided reshard computed a wrong result");
    }
    runMpi();

    // Batches of about 16 MiB of traffic, so that small sizes are not timer
    // noise.
    const int iters =
        static_cast<int>(std::max<int64_t>(1, (int64_t(16) << 20) / c.bytes));
    auto sample = [&](auto &&fn) {
      MPI_Barrier(comm);
      double t0 = MPI_Wtime();
      for (int i = 0; i < iters; ++i)
        fn();
      double t = (MPI_Wtime() - t0) / iters, slowest = 0;
      MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
      return slowest;
    };
    std::vector<double> mpiTimes, compiledTimes, reshardTimes;
    for (int r = 0; r < opt.reps; ++r) {
      // Rotate the order too, so that none always runs first.
      for (int k = 0; k < 3; ++k) {
        switch ((r + k) % 3) {
        case 0:
          mpiTimes.push_back(sample(runMpi));
          break;
        case 1:
          compiledTimes.push_back(sample(runCompiled));
          break;
        default:
          if (movesColumns(c.op))
            reshardTimes.push_back(sample(runMpiReshard));
        }
      }
    }
    c.mpiSeconds = median(mpiTimes);
    c.compiledSeconds = median(compiledTimes);
    c.mpiReshardSeconds =
        reshardTimes.empty() ? c.mpiSeconds : median(reshardTimes);
    if (columns != MPI_DATATYPE_NULL)
      MPI_Type_free(&columns);
    distRtFree(in);
    distRtFree(out);
  }

  if (rank == 0)
    printReport(cases, opt, p);
  engine->reset();
  MPI_Comm_free(&comm);
  distRtFinalize();
  return 0;
}
