//===- OverlapBench.cpp - does a non-blocking exchange overlap compute? ---===//
//
//   dist-mpirun -np 2 dist-exchange-overlap-bench [--mib N] [--compute-ms T]
//                                                 [--host]
//
// Ranks 0 and 1 swap N MiB (f32) through distRtExchange and through
// distRtExchangeStart/Wait with T ms of busy compute between the start and
// the wait, and print, from rank 0, the median of 5 rounds of: the exchange
// alone, the blocking exchange followed by the compute, and start, compute,
// wait. Overlap shows as the last being close to max(exchange, compute)
// rather than their sum. Buffers are runtime memory (distRtAlloc) unless
// --host.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

double now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

volatile double gSink;

/// Arithmetic (no memory traffic) for `seconds`.
void compute(double seconds) {
  double start = now(), x = 1.0;
  while (now() - start < seconds)
    for (int i = 0; i < 1000; ++i)
      x = x * 1.0000001 + 1e-9;
  gSink = x;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  int64_t mib = 64;
  double computeMs = 30;
  bool host = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--mib") && i + 1 < argc)
      mib = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--compute-ms") && i + 1 < argc)
      computeMs = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--host"))
      host = true;
    else {
      std::fprintf(stderr, "usage: %s [--mib N] [--compute-ms T] [--host]\n",
                   argv[0]);
      return 2;
    }
  }
  if (distRtInit() != DIST_RT_OK)
    return 1;
  if (distRtWorldSize() != 2) {
    std::fprintf(stderr, "dist-exchange-overlap-bench: run on 2 ranks\n");
    distRtFinalize();
    return 2;
  }
  const int64_t cols = 1024, rows = std::max<int64_t>(1, mib * 256);
  int64_t shape[2] = {rows, cols};
  // Rank 0's tensor to rank 1 and rank 1's to rank 0.
  const int64_t table[16] = {0, 1, 0, 0, 0, 0, rows, cols,
                             1, 0, 0, 0, 0, 0, rows, cols};
  const size_t bytes = size_t(rows * cols) * sizeof(float);
  std::vector<float> hostSend, hostRecv;
  float *send, *recv;
  if (host) {
    hostSend.assign(rows * cols, 1.0f);
    hostRecv.assign(rows * cols, 0.0f);
    send = hostSend.data();
    recv = hostRecv.data();
  } else {
    send = static_cast<float *>(distRtAlloc(bytes));
    recv = static_cast<float *>(distRtAlloc(bytes));
    std::fill(send, send + rows * cols, 1.0f);
  }
  const double seconds = computeMs / 1e3;
  std::vector<double> alone, blocking, overlapped;
  for (int round = 0; round < 6; ++round) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = now();
    distRtExchange(2, shape, send, shape, recv, 2, table, DIST_RT_F32, nullptr);
    double a = now() - t;
    MPI_Barrier(MPI_COMM_WORLD);
    t = now();
    distRtExchange(2, shape, send, shape, recv, 2, table, DIST_RT_F32, nullptr);
    compute(seconds);
    double b = now() - t;
    MPI_Barrier(MPI_COMM_WORLD);
    t = now();
    int64_t request = 0;
    distRtExchangeStart(2, shape, send, shape, recv, 2, table, DIST_RT_F32,
                        nullptr, &request);
    compute(seconds);
    distRtExchangeWait(request);
    double o = now() - t;
    if (round > 0) { // the first round warms up
      alone.push_back(a);
      blocking.push_back(b);
      overlapped.push_back(o);
    }
  }
  if (distRtWorldRank() == 0)
    std::printf("exchange-overlap: %lld MiB each way, %s memory: exchange "
                "%.1f ms; blocking then %.0f ms of compute %.1f ms; start, "
                "compute, wait %.1f ms\n",
                static_cast<long long>(mib), host ? "host" : "runtime",
                median(alone) * 1e3, computeMs, median(blocking) * 1e3,
                median(overlapped) * 1e3);
  if (!host) {
    distRtFree(send);
    distRtFree(recv);
  }
  distRtFinalize();
  return 0;
}
