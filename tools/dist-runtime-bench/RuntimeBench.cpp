//===- RuntimeBench.cpp - distRt* collectives vs the raw MPI collectives --===//
//
//   dist-mpirun -np 8 dist-runtime-bench [--sizes 1MiB,4MiB,16MiB,64MiB]
//       [--ops all_gather,all_to_all,reduce_scatter,all_reduce] [--reps N]
//       [--no-validation] [--json]
//   dist-mpirun -np 8 dist-runtime-bench --ops transpose,handoff
//       [--dims 1024,4096] [--reps N] [--no-validation] [--json]
//
// For each collective and size, times the runtime's call (distRtAllGather,
// ...) and the MPI collective it stands for, on the same f32 buffers and the
// same ranks, in one run: samples alternate between the two so that both see
// the same machine load, each sample is the slowest rank's time for a batch
// of calls, and the reported time is the median sample. The ratio is
// MPI time / runtime time, i.e. the runtime's throughput relative to MPI's
// (1.0 = no overhead).
//
// Size = the larger local buffer of the op in bytes: the gathered output of
// all_gather, the input of reduce_scatter, either buffer of all_to_all and
// all_reduce. GB/s = size / time.
//
// The point-to-point exchange (distRtExchange, semantics §3 redistribute), on
// an f32 tensor of N x N (--dims):
//   transpose  rows split over all p ranks -> columns split over all p
//              ranks, measured as (a) distRtExchange with the table of that
//              move, on runtime memory (distRtAlloc: the single-copy path
//              between the ranks' shared heaps) and on plain host memory
//              (MPI messages with derived datatypes), (b) the hand-written
//              MPI program: pack per destination, MPI_Alltoallv straight
//              into the output (each received block is already in place, so
//              there is no unpack), (c) distRtAllToAllStrided doing the same
//              move as one collective;
//   handoff    ranks 0..p/2-1 holding rows split p/2 ways -> ranks
//              p/2..p-1 holding columns split p/2 ways (a pipeline stage
//              boundary), as (a) distRtExchange (runtime memory) vs (b) MPI:
//              gather on rank 0, send to rank p/2, pack columns, scatter.
// Each implementation's output is checked against (b)'s once before timing.
// Ratio = MPI time / exchange time (> 1: the exchange is faster).
//
// Output: a markdown table (rank 0), or with --json one JSON object (one
// more line for the exchange cases).
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Options {
  std::vector<int64_t> sizes{1 << 20, 4 << 20, 16 << 20, 64 << 20};
  std::vector<std::string> ops{"all_gather", "all_to_all", "reduce_scatter",
                               "all_reduce"};
  std::vector<std::string> exchangeOps;
  std::vector<int64_t> dims{1024, 4096};
  int reps = 7;
  bool validation = true;
  bool json = false;
};

[[noreturn]] void usage(const char *argv0, const std::string &problem) {
  std::fprintf(stderr,
               "dist-runtime-bench: %s\nusage: %s [--sizes LIST] [--ops LIST] "
               "[--dims LIST] [--reps N] [--no-validation] [--json]\n  sizes: "
               "bytes with optional KiB/MiB/GiB suffix, comma-separated\n  "
               "ops: all_gather, all_to_all, reduce_scatter, all_reduce, "
               "transpose, handoff\n  dims: N of the N x N tensors of "
               "transpose and handoff\n",
               problem.c_str(), argv0);
  std::exit(2);
}

std::vector<std::string> split(const std::string &s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos)
      comma = s.size();
    if (comma > start)
      out.push_back(s.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

int64_t parseSize(const std::string &s, const char *argv0) {
  char *end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string suffix(end);
  double scale = suffix.empty() || suffix == "B" ? 1
                 : suffix == "KiB"               ? 1024.0
                 : suffix == "MiB"               ? 1048576.0
                 : suffix == "GiB"               ? 1073741824.0
                                                 : -1;
  if (scale < 0 || v <= 0)
    usage(argv0, "bad size '" + s + "'");
  return static_cast<int64_t>(v * scale);
}

Options parse(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        usage(argv[0], a + " needs a value");
      return argv[++i];
    };
    if (a == "--sizes") {
      o.sizes.clear();
      for (const std::string &s : split(value()))
        o.sizes.push_back(parseSize(s, argv[0]));
    } else if (a == "--ops") {
      o.ops.clear();
      for (const std::string &op : split(value())) {
        if (op == "transpose" || op == "handoff")
          o.exchangeOps.push_back(op);
        else if (op == "all_gather" || op == "all_to_all" ||
                 op == "reduce_scatter" || op == "all_reduce")
          o.ops.push_back(op);
        else
          usage(argv[0], "unknown op '" + op + "'");
      }
    } else if (a == "--dims") {
      o.dims.clear();
      for (const std::string &d : split(value())) {
        long long v = std::atoll(d.c_str());
        if (v <= 0)
          usage(argv[0], "bad dim '" + d + "'");
        o.dims.push_back(v);
      }
    } else if (a == "--reps") {
      o.reps = std::atoi(value().c_str());
      if (o.reps < 1)
        usage(argv[0], "--reps must be >= 1");
    } else if (a == "--no-validation") {
      o.validation = false;
    } else if (a == "--json") {
      o.json = true;
    } else {
      usage(argv[0], "unknown argument '" + a + "'");
    }
  }
  return o;
}

struct Result {
  std::string op;
  int64_t bytes;
  double mpiS, distS;
};

std::string sizeStr(int64_t bytes) {
  char buf[32];
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0)
    std::snprintf(buf, sizeof buf, "%lld MiB", (long long)(bytes >> 20));
  else if (bytes >= 1024 && bytes % 1024 == 0)
    std::snprintf(buf, sizeof buf, "%lld KiB", (long long)(bytes >> 10));
  else
    std::snprintf(buf, sizeof buf, "%lld B", (long long)bytes);
  return buf;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

//===--------------------------------------------------------------------===//
// The point-to-point exchange
//===--------------------------------------------------------------------===//

struct ExchangeResult {
  std::string op;
  int64_t n;
  double exchangeS, exchangeHostS, mpiS, stridedS; // < 0: not measured
};

/// Median over `reps` samples of the slowest rank's time for `fn`, the
/// implementations' samples interleaved (as for the collectives).
std::vector<double> timeInterleaved(MPI_Comm comm, int reps,
                                    std::vector<std::function<void()>> fns) {
  auto sample = [&](const std::function<void()> &fn) {
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    fn();
    double t = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    return slowest;
  };
  for (auto &fn : fns)
    fn(); // warm-up: pages, scratch, MPI's connections
  std::vector<std::vector<double>> times(fns.size());
  for (int r = 0; r < reps; ++r)
    for (size_t k = 0; k < fns.size(); ++k) {
      size_t i = r % 2 ? fns.size() - 1 - k : k;
      times[i].push_back(sample(fns[i]));
    }
  std::vector<double> out;
  for (auto &t : times)
    out.push_back(median(t));
  return out;
}

/// Whether every rank's `got` equals its `want` (reported on stderr).
bool sameEverywhere(MPI_Comm comm, const float *got, const float *want,
                    int64_t n, const char *what) {
  int bad = 0, anyBad = 0;
  for (int64_t i = 0; i < n && !bad; ++i)
    bad = got[i] != want[i];
  MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, comm);
  if (bad)
    std::fprintf(stderr, "dist-runtime-bench: %s: wrong result\n", what);
  return !anyBad;
}

/// The table of a move of [N, N] from rows split over `from` to columns
/// split over `to` (block k of a layout on from[k] / to[k]).
std::vector<int64_t> transposeTable(int64_t n, const std::vector<int> &from,
                                    const std::vector<int> &to) {
  const int64_t rb = n / static_cast<int64_t>(from.size());
  const int64_t cb = n / static_cast<int64_t>(to.size());
  std::vector<int64_t> t;
  for (size_t s = 0; s < from.size(); ++s)
    for (size_t d = 0; d < to.size(); ++d) {
      const int64_t entry[8] = {from[s],         to[d], 0,  int64_t(d) * cb,
                                int64_t(s) * rb, 0,     rb, cb};
      t.insert(t.end(), entry, entry + 8);
    }
  return t;
}

/// A float buffer in runtime memory (distRtAlloc) or on the host.
struct Floats {
  float *p = nullptr;
  std::vector<float> host;
  bool runtime;
  Floats(int64_t n, bool runtimeMemory) : runtime(runtimeMemory) {
    if (runtime)
      p = static_cast<float *>(distRtAlloc(n * 4));
    else {
      host.assign(n, 0.0f);
      p = host.data();
    }
    for (int64_t i = 0; i < n; ++i)
      p[i] = 0.0f;
  }
  ~Floats() {
    if (runtime)
      distRtFree(p);
  }
};

ExchangeResult benchTranspose(MPI_Comm comm, int64_t group, int64_t n,
                              int reps) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const int64_t b = n / p; // rows in, columns out
  std::vector<int> all(p);
  for (int r = 0; r < p; ++r)
    all[r] = r;
  const std::vector<int64_t> table = transposeTable(n, all, all);
  const int64_t sendShape[2] = {b, n}, recvShape[2] = {n, b};
  Floats send(b * n, true), recv(b * n, true), sendHost(b * n, false),
      recvHost(b * n, false), want(b * n, false), packed(b * n, false),
      strided(b * n, true);
  for (int64_t i = 0; i < b * n; ++i)
    send.p[i] = sendHost.p[i] = static_cast<float>((rank * b * n + i) % 8191);
  std::vector<int> counts(p, static_cast<int>(b * b)), displs(p);
  for (int r = 0; r < p; ++r)
    displs[r] = static_cast<int>(r * b * b);
  auto exchange = [&] {
    distRtExchange(2, sendShape, send.p, recvShape, recv.p, p * p, table.data(),
                   DIST_RT_F32, nullptr);
  };
  auto exchangeHost = [&] {
    distRtExchange(2, sendShape, sendHost.p, recvShape, recvHost.p, p * p,
                   table.data(), DIST_RT_F32, nullptr);
  };
  auto mpi = [&] {
    // Pack: destination d gets columns [d*b, (d+1)*b) of the b local rows.
    for (int d = 0; d < p; ++d)
      for (int64_t i = 0; i < b; ++i)
        std::memcpy(packed.p + (d * b + i) * b, sendHost.p + i * n + d * b,
                    b * 4);
    // Block s lands at rows [s*b, (s+1)*b) of the [n, b] output: in place.
    MPI_Alltoallv(packed.p, counts.data(), displs.data(), MPI_FLOAT, want.p,
                  counts.data(), displs.data(), MPI_FLOAT, comm);
  };
  const int64_t chunk[2] = {b, b}, sendStrides[2] = {n, 1},
                recvStrides[2] = {b, 1};
  auto stridedAllToAll = [&] {
    distRtAllToAllStrided(group, 2, chunk, send.p, sendStrides, b, strided.p,
                          recvStrides, b * b, DIST_RT_F32, nullptr);
  };
  mpi();
  exchange();
  exchangeHost();
  stridedAllToAll();
  if (!sameEverywhere(comm, recv.p, want.p, b * n, "transpose: exchange") ||
      !sameEverywhere(comm, recvHost.p, want.p, b * n,
                      "transpose: exchange (host memory)") ||
      !sameEverywhere(comm, strided.p, want.p, b * n,
                      "transpose: strided all_to_all"))
    std::exit(1);
  std::vector<double> t = timeInterleaved(
      comm, reps, {exchange, exchangeHost, mpi, stridedAllToAll});
  return {"transpose", n, t[0], t[1], t[2], t[3]};
}

ExchangeResult benchHandoff(MPI_Comm comm, int64_t n, int reps) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const int h = p / 2;
  const int64_t b = n / h;
  std::vector<int> first(h), second(h);
  for (int k = 0; k < h; ++k) {
    first[k] = k;
    second[k] = h + k;
  }
  const std::vector<int64_t> table = transposeTable(n, first, second);
  const bool source = rank < h, target = rank >= h;
  const int64_t sendShape[2] = {b, n}, recvShape[2] = {n, b};
  Floats send(source ? b * n : 1, true), recv(target ? b * n : 1, true),
      want(target ? b * n : 1, false);
  if (source)
    for (int64_t i = 0; i < b * n; ++i)
      send.p[i] = static_cast<float>((rank * b * n + i) % 8191);
  // The MPI program's communicators: each half, for its gather or scatter.
  MPI_Comm half;
  MPI_Comm_split(comm, source ? 0 : 1, rank, &half);
  std::vector<float> whole(rank == 0 || rank == h ? n * n : 0);
  std::vector<float> columns(rank == h ? n * n : 0);
  auto exchange = [&] {
    distRtExchange(2, source ? sendShape : nullptr, source ? send.p : nullptr,
                   target ? recvShape : nullptr, target ? recv.p : nullptr,
                   int64_t(h) * h, table.data(), DIST_RT_F32, nullptr);
  };
  auto mpi = [&] {
    if (source)
      MPI_Gather(send.p, static_cast<int>(b * n), MPI_FLOAT, whole.data(),
                 static_cast<int>(b * n), MPI_FLOAT, 0, half);
    if (rank == 0)
      MPI_Send(whole.data(), static_cast<int>(n * n), MPI_FLOAT, h, 0, comm);
    if (rank == h) {
      MPI_Recv(whole.data(), static_cast<int>(n * n), MPI_FLOAT, 0, 0, comm,
               MPI_STATUS_IGNORE);
      for (int d = 0; d < h; ++d)
        for (int64_t i = 0; i < n; ++i)
          std::memcpy(columns.data() + (d * n + i) * b,
                      whole.data() + i * n + d * b, b * 4);
    }
    if (target)
      MPI_Scatter(columns.data(), static_cast<int>(b * n), MPI_FLOAT, want.p,
                  static_cast<int>(b * n), MPI_FLOAT, 0, half);
  };
  mpi();
  exchange();
  if (!sameEverywhere(comm, recv.p, want.p, target ? b * n : 0,
                      "handoff: exchange"))
    std::exit(1);
  std::vector<double> t = timeInterleaved(comm, reps, {exchange, mpi});
  MPI_Comm_free(&half);
  return {"handoff", n, t[0], -1, t[1], -1};
}

void printExchange(const std::vector<ExchangeResult> &results, int p,
                   const Options &opt) {
  auto ms = [](double s) {
    char buf[32];
    if (s < 0)
      return std::string("-");
    std::snprintf(buf, sizeof buf, "%.2f", s * 1e3);
    return std::string(buf);
  };
  if (opt.json) {
    std::printf("{\"ranks\": %d, \"dtype\": \"f32\", \"validation\": %s, "
                "\"reps\": %d, \"exchange\": [",
                p, opt.validation ? "true" : "false", opt.reps);
    for (size_t i = 0; i < results.size(); ++i) {
      const ExchangeResult &r = results[i];
      std::printf("%s{\"op\": \"%s\", \"n\": %lld, \"exchange_s\": %.6e, "
                  "\"exchange_host_s\": %.6e, \"mpi_s\": %.6e, "
                  "\"strided_all_to_all_s\": %.6e, \"ratio\": %.4f}",
                  i ? ", " : "", r.op.c_str(), (long long)r.n, r.exchangeS,
                  r.exchangeHostS, r.mpiS, r.stridedS, r.mpiS / r.exchangeS);
    }
    std::printf("]}\n");
    return;
  }
  std::printf("dist-runtime-bench: exchange, %d ranks, f32 N x N, validation "
              "%s, median of %d samples\n\n",
              p, opt.validation ? "on" : "off", opt.reps);
  std::printf("| case | N | MiB | distRtExchange ms | distRtExchange (host "
              "memory) ms | MPI program ms | distRtAllToAllStrided ms | "
              "ratio |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const ExchangeResult &r : results)
    std::printf("| %s | %lld | %lld | %s | %s | %s | %s | %.3f |\n",
                r.op.c_str(), (long long)r.n, (long long)(r.n * r.n * 4 >> 20),
                ms(r.exchangeS).c_str(), ms(r.exchangeHostS).c_str(),
                ms(r.mpiS).c_str(), ms(r.stridedS).c_str(),
                r.mpiS / r.exchangeS);
  std::printf("\nratio = MPI program time / distRtExchange time (> 1: the "
              "exchange is faster)\n");
}

} // namespace

int main(int argc, char **argv) {
  Options opt = parse(argc, argv);
  if (distRtInitWithBackend("mpi") != DIST_RT_OK)
    return 1;
  distRtSetValidation(opt.validation ? 1 : 0);
  const int rank = static_cast<int>(distRtWorldRank());
  const int p = static_cast<int>(distRtWorldSize());
  int64_t worldSize = p, axis = 0;
  const int64_t mesh = distRtMeshCreate(1, &worldSize, nullptr);
  const int64_t group = distRtGroup(mesh, 1, &axis);
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);

  std::vector<ExchangeResult> exchangeResults;
  for (const std::string &op : opt.exchangeOps)
    for (int64_t n : opt.dims) {
      if (n % p != 0 || (op == "handoff" && (p < 2 || p % 2 != 0))) {
        if (rank == 0)
          std::fprintf(stderr,
                       "dist-runtime-bench: %s needs N divisible by the %d "
                       "ranks (and an even number of ranks for handoff); "
                       "skipping N = %lld\n",
                       op.c_str(), p, (long long)n);
        continue;
      }
      exchangeResults.push_back(op == "transpose"
                                    ? benchTranspose(comm, group, n, opt.reps)
                                    : benchHandoff(comm, n, opt.reps));
    }

  std::vector<Result> results;
  for (const std::string &op : opt.ops) {
    for (int64_t bytes : opt.sizes) {
      // Element counts: the larger buffer holds n floats, n divisible by p.
      const int64_t n = std::max<int64_t>(p, bytes / 4 / p * p);
      const int64_t chunk = n / p;
      std::vector<float> send(n, 1.0f), recv(n, 0.0f);
      auto runMpi = [&] {
        if (op == "all_gather")
          MPI_Allgather(send.data(), (int)chunk, MPI_FLOAT, recv.data(),
                        (int)chunk, MPI_FLOAT, comm);
        else if (op == "all_to_all")
          MPI_Alltoall(send.data(), (int)chunk, MPI_FLOAT, recv.data(),
                       (int)chunk, MPI_FLOAT, comm);
        else if (op == "reduce_scatter")
          MPI_Reduce_scatter_block(send.data(), recv.data(), (int)chunk,
                                   MPI_FLOAT, MPI_SUM, comm);
        else
          MPI_Allreduce(send.data(), recv.data(), (int)n, MPI_FLOAT, MPI_SUM,
                        comm);
      };
      auto runDist = [&] {
        if (op == "all_gather")
          distRtAllGather(group, send.data(), recv.data(), chunk, DIST_RT_F32,
                          nullptr);
        else if (op == "all_to_all")
          distRtAllToAll(group, send.data(), recv.data(), chunk, DIST_RT_F32,
                         nullptr);
        else if (op == "reduce_scatter")
          distRtReduceScatter(group, send.data(), recv.data(), chunk,
                              DIST_RT_F32, DIST_RT_SUM, nullptr);
        else
          distRtAllReduce(group, send.data(), recv.data(), n, DIST_RT_F32,
                          DIST_RT_SUM, nullptr);
      };
      // Batches of roughly 16 MiB of traffic so that small sizes are not
      // timer noise; warm-up calls fault the pages in first.
      const int iters = static_cast<int>(std::max<int64_t>(
          1, (int64_t(16) << 20) / std::max<int64_t>(1, bytes)));
      runMpi();
      runDist();
      auto sample = [&](auto &&fn) {
        MPI_Barrier(comm);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; ++i)
          fn();
        double t = (MPI_Wtime() - t0) / iters, slowest = 0;
        MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
        return slowest;
      };
      std::vector<double> mpiTimes, distTimes;
      for (int r = 0; r < opt.reps; ++r) {
        // Alternate the order too, so neither always runs first.
        if (r % 2 == 0) {
          mpiTimes.push_back(sample(runMpi));
          distTimes.push_back(sample(runDist));
        } else {
          distTimes.push_back(sample(runDist));
          mpiTimes.push_back(sample(runMpi));
        }
      }
      results.push_back({op, n * 4, median(mpiTimes), median(distTimes)});
    }
  }

  if (rank == 0 && !exchangeResults.empty())
    printExchange(exchangeResults, p, opt);
  if (rank == 0 && !results.empty()) {
    if (!exchangeResults.empty() && !opt.json)
      std::printf("\n");
    double minRatio = INFINITY, logSum = 0;
    for (const Result &r : results) {
      double ratio = r.mpiS / r.distS;
      minRatio = std::min(minRatio, ratio);
      logSum += std::log(ratio);
    }
    const double geomean = std::exp(logSum / results.size());
    if (opt.json) {
      std::printf("{\"ranks\": %d, \"dtype\": \"f32\", \"validation\": %s, "
                  "\"reps\": %d, \"results\": [",
                  p, opt.validation ? "true" : "false", opt.reps);
      for (size_t i = 0; i < results.size(); ++i) {
        const Result &r = results[i];
        std::printf("%s{\"op\": \"%s\", \"bytes\": %lld, \"mpi_s\": %.6e, "
                    "\"dist_s\": %.6e, \"mpi_gbps\": %.3f, \"dist_gbps\": "
                    "%.3f, \"ratio\": %.4f}",
                    i ? ", " : "", r.op.c_str(), (long long)r.bytes, r.mpiS,
                    r.distS, r.bytes / r.mpiS / 1e9, r.bytes / r.distS / 1e9,
                    r.mpiS / r.distS);
      }
      std::printf("], \"min_ratio\": %.4f, \"geomean_ratio\": %.4f}\n",
                  minRatio, geomean);
    } else {
      std::printf("dist-runtime-bench: %d ranks, f32, validation %s, median "
                  "of %d samples\n\n",
                  p, opt.validation ? "on" : "off", opt.reps);
      std::printf("| op | size | MPI ms | distRt ms | MPI GB/s | distRt GB/s "
                  "| ratio |\n|---|---:|---:|---:|---:|---:|---:|\n");
      for (const Result &r : results)
        std::printf("| %s | %s | %.3f | %.3f | %.2f | %.2f | %.3f |\n",
                    r.op.c_str(), sizeStr(r.bytes).c_str(), r.mpiS * 1e3,
                    r.distS * 1e3, r.bytes / r.mpiS / 1e9,
                    r.bytes / r.distS / 1e9, r.mpiS / r.distS);
      std::printf("\nratio = MPI time / distRt time (throughput relative to "
                  "raw MPI): min %.3f, geometric mean %.3f\n",
                  minRatio, geomean);
    }
  }
  MPI_Comm_free(&comm);
  distRtFinalize();
  return 0;
}
