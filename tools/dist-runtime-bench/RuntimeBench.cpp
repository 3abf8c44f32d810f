//===- RuntimeBench.cpp - distRt* collectives vs the raw MPI collectives --===//
//
//   dist-mpirun -np 8 dist-runtime-bench [--sizes 1MiB,4MiB,16MiB,64MiB]
//       [--ops all_gather,all_to_all,reduce_scatter,all_reduce] [--reps N]
//       [--no-validation] [--json]
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
// Output: a markdown table (rank 0), or with --json one JSON object.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Options {
  std::vector<int64_t> sizes{1 << 20, 4 << 20, 16 << 20, 64 << 20};
  std::vector<std::string> ops{"all_gather", "all_to_all", "reduce_scatter",
                               "all_reduce"};
  int reps = 7;
  bool validation = true;
  bool json = false;
};

[[noreturn]] void usage(const char *argv0, const std::string &problem) {
  std::fprintf(stderr,
               "dist-runtime-bench: %s\nusage: %s [--sizes LIST] [--ops LIST] "
               "[--reps N] [--no-validation] [--json]\n  sizes: bytes with "
               "optional KiB/MiB/GiB suffix, comma-separated\n  ops: "
               "all_gather, all_to_all, reduce_scatter, all_reduce\n",
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
      o.ops = split(value());
      for (const std::string &op : o.ops)
        if (op != "all_gather" && op != "all_to_all" &&
            op != "reduce_scatter" && op != "all_reduce")
          usage(argv[0], "unknown op '" + op + "'");
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
      const int iters = static_cast<int>(
          std::max<int64_t>(1, (int64_t(16) << 20) / std::max<int64_t>(1, bytes)));
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

  if (rank == 0) {
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
