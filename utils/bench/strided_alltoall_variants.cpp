//===- strided_alltoall_variants.cpp - ways to run an S(0)->S(1) exchange ===//
//
// An experiment, not part of the build: how fast can one node move the
// S(0) -> S(1) all-to-all (rows in, column blocks out) with MPI on host
// memory? It times, on the same buffers and alternating so that all see the
// same load:
//   raw        MPI_Alltoall of contiguous chunks: the reference (it does
//              not transpose; with the options below Open MPI copies through
//              its shared-memory fragments, with CMA allowed it would send
//              large chunks with one CMA copy)
//   pack+a2a   memcpy the column blocks into chunk order, then raw
//   datatype   MPI_Alltoall with a strided send datatype (what the runtime's
//              distRtAllToAllStrided does)
//   pipelined  pairwise MPI_Sendrecv of packed segments of SEG KiB, so the
//              pack stays in cache
//   cma-push   process_vm_writev of the strided rows straight into each
//              peer's contiguous output (Linux; needs ptrace rights)
//   shm-pull   each rank reads its column block straight out of the peers'
//              inputs, mapped through /proc/<pid>/fd of a memfd
//   shm-pull-nt  the same with non-temporal stores
//   shm-push-rows  each rank walks its rows once and writes the pieces
//              straight into the peers' outputs (mapped the same way)
//   shm-push-chunks  the same writes, one peer's whole block after another
//              (the order of the runtime's push)
// and checks that every variant but raw produced the target layout.
//
//   mpicxx -O3 -std=c++17 utils/bench/strided_alltoall_variants.cpp -o
//   /tmp/variants build/bin/dist-mpirun -np 8 /tmp/variants MIB [SEG_KIB]
// (dist-mpirun: mpirun with the options the benchmarks use.)
//
// On the 2-core development machine (8 ranks oversubscribed, Open MPI 4.1.4,
// dist-mpirun's options) the direct copies through mapped memory were the
// fastest transposing variants: at 1-4 MiB the shm variants took
// 0.25-0.6x the time of raw, at 16-64 MiB 0.65-1.1x (the spread is run to
// run noise of 8 ranks on 2 cores); datatype took 0.9-1.5x, pipelined
// 1.05-1.6x, cma-push 1.1-2.4x, pack+a2a 1.2-2.4x, and non-temporal stores
// made the pull slower (1.2-3x). The runtime's
// single-copy strided all-to-all (lib/Runtime/NodeHeaps.cpp) grew out of
// the shm variants.
//
//===----------------------------------------------------------------------===//

#include <emmintrin.h>
#include <fcntl.h>
#include <mpi.h>
#include <sys/mman.h>
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
  size_t rows = 0; // local rows of the [rows, kColumns] input
  int chunk = 0;   // kColumns / size
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
      std::memcpy(dst + r * chunk,
                  in + (firstRow + r) * kColumns + block * chunk,
                  chunk * sizeof(float));
  }
};

/// A buffer in a memfd that the other ranks map through /proc/<pid>/fd, as
/// the runtime's shared heap is; `peers[j]` is rank j's buffer as mapped
/// here (this rank's own at peers[rank]).
struct SharedBuffer {
  float *local = nullptr;
  std::vector<float *> peers;
};

SharedBuffer shareBuffer(size_t bytes, const std::vector<pid_t> &pids,
                         int rank) {
  SharedBuffer b;
  int memfd = memfd_create("dist-variants", 0);
  if (memfd < 0 || ftruncate(memfd, bytes) != 0) {
    std::perror("memfd");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  std::vector<int> fds(pids.size());
  MPI_Allgather(&memfd, 1, MPI_INT, fds.data(), 1, MPI_INT, MPI_COMM_WORLD);
  for (size_t j = 0; j < pids.size(); ++j) {
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", int(pids[j]), fds[j]);
    int fd = int(j) == rank ? memfd : open(path, O_RDWR);
    void *m = fd < 0 ? MAP_FAILED
                     : mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED,
                            fd, 0);
    if (m == MAP_FAILED) {
      std::perror(path);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    b.peers.push_back(static_cast<float *>(m));
  }
  b.local = b.peers[rank];
  MPI_Barrier(MPI_COMM_WORLD);
  return b;
}

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
  pid_t me = getpid();
  x.pids.resize(x.size);
  MPI_Allgather(&me, sizeof(pid_t), MPI_BYTE, x.pids.data(), sizeof(pid_t),
                MPI_BYTE, MPI_COMM_WORLD);
  const SharedBuffer sharedIn = shareBuffer(bytes, x.pids, x.rank);
  const SharedBuffer sharedOut = shareBuffer(bytes, x.pids, x.rank);
  x.in = sharedIn.local;
  x.out = sharedOut.local;
  const std::vector<float *> &peerIn = sharedIn.peers;
  const std::vector<float *> &peerOut = sharedOut.peers;
  x.stage = static_cast<float *>(std::aligned_alloc(64, bytes));
  for (size_t i = 0; i < elements; ++i)
    x.in[i] = x.expected(x.rank, i / kColumns, int(i % kColumns));
  std::memset(x.stage, 0, bytes);
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
  const size_t segRows =
      std::max<size_t>(1, segment / (x.chunk * sizeof(float)));
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

  // Each rank reads its column block straight out of every peer's input;
  // `copyRow` moves one row's piece. (The allgather stands for the
  // runtime's exchange of buffer offsets.)
  auto pull = [&](auto copyRow) {
    uintptr_t mine = 0;
    std::vector<uintptr_t> offs(x.size);
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, offs.data(), sizeof mine,
                  MPI_BYTE, MPI_COMM_WORLD);
    for (int k = 0; k < x.size; ++k) {
      int from = (x.rank + k) % x.size;
      const float *src = peerIn[from] + offs[from] / sizeof(float);
      float *dst = x.out + from * x.rows * x.chunk;
      for (size_t r = 0; r < x.rows; ++r)
        copyRow(dst + r * x.chunk, src + r * kColumns + x.rank * x.chunk);
    }
    // Non-temporal stores must be visible before the peers are told.
    _mm_sfence();
    MPI_Barrier(MPI_COMM_WORLD);
  };
  auto shmPull = [&] {
    pull([&](float *dst, const float *src) {
      std::memcpy(dst, src, x.chunk * sizeof(float));
    });
  };
  // With non-temporal stores: the output is written without first reading
  // its lines from memory.
  auto shmPullNt = [&] {
    const size_t vecs = x.chunk * sizeof(float) / 16;
    pull([&](float *dst, const float *src) {
      const __m128i *s = reinterpret_cast<const __m128i *>(src);
      __m128i *d = reinterpret_cast<__m128i *>(dst);
      for (size_t v = 0; v < vecs; ++v)
        _mm_stream_si128(d + v, _mm_loadu_si128(s + v));
    });
  };

  // Push, walking the source rows in memory order: every row is read once,
  // front to back, and its pieces go to the p receivers' contiguous blocks.
  auto shmPushRows = [&] {
    MPI_Barrier(MPI_COMM_WORLD);
    for (size_t r = 0; r < x.rows; ++r)
      for (int k = 0; k < x.size; ++k) {
        int to = (x.rank + k) % x.size;
        std::memcpy(peerOut[to] + (x.rank * x.rows + r) * x.chunk,
                    x.in + r * kColumns + to * x.chunk,
                    x.chunk * sizeof(float));
      }
    MPI_Barrier(MPI_COMM_WORLD);
  };

  auto shmPushChunks = [&] {
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < x.size; ++k) {
      int to = (x.rank + 1 + k) % x.size;
      for (size_t r = 0; r < x.rows; ++r)
        std::memcpy(peerOut[to] + (x.rank * x.rows + r) * x.chunk,
                    x.in + r * kColumns + to * x.chunk,
                    x.chunk * sizeof(float));
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
                  {"cma-push", cmaPush, true},
                  {"shm-pull", shmPull, true},
                  {"shm-pull-nt", shmPullNt, true},
                  {"shm-push-rows", shmPushRows, true},
                  {"shm-push-chunks", shmPushChunks, true}};
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
