//===- strided_alltoall_variants.cpp - ways to run an S(0)->S(1) exchange ===//
//
// An experiment, not part of the build: how fast can one node move the
// S(0) -> S(1) all-to-all (rows in, column blocks out) with MPI on host
// memory? It times, on the same buffers and alternating so that all see the
// same load:
//   raw        MPI_Alltoall of contiguous chunks: the lower bound (it does
//              not transpose; Open MPI sends large chunks with one CMA copy)
//   pack+a2a   memcpy the column blocks into chunk order, then raw
//   datatype   MPI_Alltoall with a strided send datatype (what the runtime's
//              distRtAllToAllStrided does)
//   pipelined  pairwise MPI_Sendrecv of packed segments of SEG KiB, so the
//              pack stays in cache
//   cma-push   process_vm_writev of the strided rows straight into each
//              peer's contiguous output (Linux; needs ptrace rights)
// and checks that every variant but raw produced the target layout.
//
//   mpicxx -O3 -std=c++17 utils/bench/strided_alltoall_variants.cpp -o /tmp/variants
//   mpirun --allow-run-as-root --oversubscribe -np 8 /tmp/variants MIB [SEG_KIB]
//
// On the 2-core development machine (8 ranks oversubscribed, Open MPI 4.1.4)
// the datatype path was the fastest transposing variant at every size tried
// (1, 16, 64 MiB): pipelined 1.05-1.4x its time, cma-push 1.2-1.8x,
// pack+a2a 1.4-2.2x; it was within noise of raw.
//
//===----------------------------------------------------------------------===//

#include <mpi.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

namespace {

constexpr int kColumns = 1024;

struct Exchange {
  int rank = 0, size = 1;
  size_t rows = 0;  // local rows of the [rows, kColumns] input
  int chunk = 0;    // kColumns / size
  float *in = nullptr, *out = nullptr, *stage = nullptr;
  std::vector<pid_t> pids;

  float expected(int from, size_t row, int col) const {
    return float(from * 1000000 + (row * kColumns + col) % 1000000);
  }
  bool outputIsTarget() const {
    // out is [size * rows, chunk]: block i = rows of rank i, my column block.
    for (int i = 0; i < size; ++i)
      for (size_t r = 0; r < rows; r += 97)
        for (int k = 0; k < chunk; ++k)
          if (out[(i * rows + r) * chunk + k] !=
              expected(i, r, rank * chunk + k))
            return false;
    return true;
  }
  void packColumnBlock(int block, size_t firstRow, size_t numRows,
                       float *dst) const {
    for (size_t r = 0; r < numRows; ++r)
      std::memcpy(dst + r * chunk, in + (firstRow + r) * kColumns + block * chunk,
                  chunk * sizeof(float));
  }
};

double timeIt(const std::function<void()> &fn) {
  std::vector<double> samples;
  for (int k = 0; k < 7; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    fn();
    double t = MPI_Wtime() - t0, slowest = 0;
    MPI_Allreduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    samples.push_back(slowest);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

} // namespace

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  Exchange x;
  MPI_Comm_rank(MPI_COMM_WORLD, &x.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &x.size);
  if (argc < 2 || kColumns % x.size != 0) {
    if (x.rank == 0)
      std::fprintf(stderr, "usage: %s MIB [SEG_KIB] (ranks must divide %d)\n",
                   argv[0], kColumns);
    MPI_Finalize();
    return 2;
  }
  const size_t bytes = size_t(std::atoi(argv[1])) << 20;
  const size_t segment = size_t(argc > 2 ? std::atoi(argv[2]) : 256) << 10;
  x.rows = bytes / sizeof(float) / kColumns;
  x.chunk = kColumns / x.size;
  const size_t elements = x.rows * kColumns;
  x.in = static_cast<float *>(std::aligned_alloc(64, bytes));
  x.out = static_cast<float *>(std::aligned_alloc(64, bytes));
  x.stage = static_cast<float *>(std::aligned_alloc(64, bytes));
  for (size_t i = 0; i < elements; ++i)
    x.in[i] = x.expected(x.rank, i / kColumns, int(i % kColumns));
  std::memset(x.stage, 0, bytes);
  pid_t me = getpid();
  x.pids.resize(x.size);
  MPI_Allgather(&me, sizeof(pid_t), MPI_BYTE, x.pids.data(), sizeof(pid_t),
                MPI_BYTE, MPI_COMM_WORLD);
  const int perPeer = int(elements / x.size);

  MPI_Datatype vector, columns;
  MPI_Type_vector(int(x.rows), x.chunk, kColumns, MPI_FLOAT, &vector);
  MPI_Type_create_resized(vector, 0, x.chunk * sizeof(float), &columns);
  MPI_Type_commit(&columns);

  auto raw = [&] {
    MPI_Alltoall(x.in, perPeer, MPI_FLOAT, x.out, perPeer, MPI_FLOAT,
                 MPI_COMM_WORLD);
  };
  auto packed = [&] {
    for (int j = 0; j < x.size; ++j)
      x.packColumnBlock(j, 0, x.rows, x.stage + j * x.rows * x.chunk);
    MPI_Alltoall(x.stage, perPeer, MPI_FLOAT, x.out, perPeer, MPI_FLOAT,
                 MPI_COMM_WORLD);
  };
  auto datatype = [&] {
    MPI_Alltoall(x.in, 1, columns, x.out, perPeer, MPI_FLOAT, MPI_COMM_WORLD);
  };
  const size_t segRows = std::max<size_t>(1, segment / (x.chunk * sizeof(float)));
  auto pipelined = [&] {
    x.packColumnBlock(x.rank, 0, x.rows, x.out + x.rank * x.rows * x.chunk);
    for (int k = 1; k < x.size; ++k) {
      int to = (x.rank + k) % x.size, from = (x.rank - k + x.size) % x.size;
      for (size_t first = 0; first < x.rows; first += segRows) {
        size_t n = std::min(segRows, x.rows - first);
        float *buf = x.stage + ((first / segRows) & 1) * segRows * x.chunk;
        x.packColumnBlock(to, first, n, buf);
        MPI_Sendrecv(buf, int(n * x.chunk), MPI_FLOAT, to, 7,
                     x.out + (from * x.rows + first) * x.chunk,
                     int(n * x.chunk), MPI_FLOAT, from, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
      }
    }
  };
  bool cmaFailed = false;
  std::vector<iovec> local(x.rows);
  auto cmaPush = [&] {
    uintptr_t mine = reinterpret_cast<uintptr_t>(x.out);
    std::vector<uintptr_t> outs(x.size);
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, outs.data(), sizeof mine,
                  MPI_BYTE, MPI_COMM_WORLD);
    for (int k = 0; k < x.size && !cmaFailed; ++k) {
      int to = (x.rank + k) % x.size;
      if (to == x.rank) {
        x.packColumnBlock(to, 0, x.rows, x.out + x.rank * x.rows * x.chunk);
        continue;
      }
      for (size_t r = 0; r < x.rows; ++r)
        local[r] = {x.in + r * kColumns + to * x.chunk,
                    x.chunk * sizeof(float)};
      char *remote = reinterpret_cast<char *>(outs[to]) +
                     x.rank * x.rows * x.chunk * sizeof(float);
      for (size_t first = 0; first < x.rows; first += 1024) {
        size_t n = std::min<size_t>(1024, x.rows - first);
        iovec target{remote + first * x.chunk * sizeof(float),
                     n * x.chunk * sizeof(float)};
        if (process_vm_writev(x.pids[to], &local[first], n, &target, 1, 0) !=
            ssize_t(target.iov_len)) {
          cmaFailed = true;
          break;
        }
      }
    }
    MPI_Barrier(MPI_COMM_WORLD);
  };

  struct Variant {
    const char *name;
    std::function<void()> run;
    bool transposes;
  } variants[] = {{"raw", raw, false},
                  {"pack+a2a", packed, true},
                  {"datatype", datatype, true},
                  {"pipelined", pipelined, true},
                  {"cma-push", cmaPush, true}};
  for (const Variant &v : variants) {
    std::memset(x.out, 0, bytes);
    v.run();
    int ok = !v.transposes || x.outputIsTarget(), all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    double seconds = timeIt(v.run);
    if (x.rank == 0)
      std::printf("%-10s %4zu MiB: %8.3f ms%s\n", v.name, bytes >> 20,
                  seconds * 1e3,
                  all ? "" : (v.transposes ? "  WRONG RESULT" : ""));
  }
  MPI_Type_free(&columns);
  MPI_Type_free(&vector);
  MPI_Finalize();
  return 0;
}
