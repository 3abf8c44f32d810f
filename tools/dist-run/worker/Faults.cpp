//===- Faults.cpp - dist-run's injected faults (tests) --------------------===//

#include "Faults.h"

#include "dist/Runtime/DistRuntime.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <thread>
#include <vector>

namespace dist::run {

Fault fault;

} // namespace dist::run

using dist::run::Fault;
using dist::run::fault;

namespace {

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

/// libdist_runtime's definition of `name`, the one this executable's
/// definition hides.
template <typename Fn> Fn *real(Fn *, const char *name) {
  void *symbol = dlsym(RTLD_NEXT, name);
  if (!symbol) {
    std::fprintf(stderr, "dist-run: cannot find the runtime's %s: %s\n", name,
                 dlerror());
    std::abort();
  }
  return reinterpret_cast<Fn *>(symbol);
}

#define DIST_REAL(name) static auto *const forward = real(&name, #name)

} // namespace

// The definitions the compiled program binds to (exported from the
// executable: CMake's ENABLE_EXPORTS).
extern "C" {

int32_t distRtAllGather(int64_t group, const void *send, void *recv,
                        int64_t count, int32_t dtype, void *stream) {
  DIST_REAL(distRtAllGather);
  return forward(group, send, recv, beforeCollective("all_gather", count),
                 dtype, stream);
}

int32_t distRtAllToAll(int64_t group, const void *send, void *recv,
                       int64_t count, int32_t dtype, void *stream) {
  DIST_REAL(distRtAllToAll);
  return forward(group, send, recv, beforeCollective("all_to_all", count),
                 dtype, stream);
}

int32_t distRtReduceScatter(int64_t group, const void *send, void *recv,
                            int64_t count, int32_t dtype, int32_t redop,
                            void *stream) {
  DIST_REAL(distRtReduceScatter);
  return forward(group, send, recv, beforeCollective("reduce_scatter", count),
                 dtype, redop, stream);
}

int32_t distRtAllReduce(int64_t group, const void *send, void *recv,
                        int64_t count, int32_t dtype, int32_t redop,
                        void *stream) {
  DIST_REAL(distRtAllReduce);
  return forward(group, send, recv, beforeCollective("all_reduce", count),
                 dtype, redop, stream);
}

int32_t distRtPermute(int64_t mesh, const void *send, void *recv, int64_t count,
                      int32_t dtype, const int64_t *srcRank,
                      const int64_t *destOffsets, const int64_t *destList,
                      void *stream) {
  DIST_REAL(distRtPermute);
  return forward(mesh, send, recv, beforeCollective("permute", count), dtype,
                 srcRank, destOffsets, destList, stream);
}

int32_t distRtPermuteByLayouts(int64_t mesh, const void *send, void *recv,
                               int64_t count, int32_t dtype, int64_t numDims,
                               const int64_t *dimAxes, int64_t dimAxesSize,
                               void *stream) {
  DIST_REAL(distRtPermuteByLayouts);
  return forward(mesh, send, recv, beforeCollective("permute", count), dtype,
                 numDims, dimAxes, dimAxesSize, stream);
}

int32_t distRtExchange(int64_t numDims, const int64_t *sendShape,
                       const void *send, const int64_t *recvShape, void *recv,
                       int64_t numTransfers, const int64_t *table,
                       int32_t dtype, void *stream) {
  DIST_REAL(distRtExchange);
  if (!fault.armed(/*forGroup=*/false))
    return forward(numDims, sendShape, send, recvShape, recv, numTransfers,
                   table, dtype, stream);
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
  return forward(numDims, sendShape, send, recvShape, recv, numTransfers,
                 copy.data(), dtype, stream);
}

int32_t distRtExchangeLocal(int64_t numDims, const int64_t *sendShape,
                            const void *send, const int64_t *recvShape,
                            void *recv, int64_t numTransfers,
                            const int64_t *table, int32_t dtype, void *stream) {
  DIST_REAL(distRtExchangeLocal);
  // Only local copies: no other rank could notice a shrunken box, so a
  // count fault waits for a call the ranks agree on; the others fire here.
  if (fault.armed(/*forGroup=*/false) && fault.kind != Fault::Count)
    beforeCollective("exchange_local", 1);
  return forward(numDims, sendShape, send, recvShape, recv, numTransfers, table,
                 dtype, stream);
}

int64_t distRtGroup(int64_t mesh, int64_t numAxes, const int64_t *axes) {
  DIST_REAL(distRtGroup);
  if (!fault.armed(/*forGroup=*/true) || numAxes == 0)
    return forward(mesh, numAxes, axes);
  fault.fired = true;
  announce("asking for a group over an axis past the mesh's last", "group");
  std::vector<int64_t> bad(axes, axes + numAxes);
  bad[0] = distRtMeshNumAxes(mesh);
  return forward(mesh, numAxes, bad.data());
}

} // extern "C"
