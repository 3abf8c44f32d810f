//===- FailureCheck.cpp - Failures must be loud, attributed and final -----===//
//
//   dist-mpirun -np N dist-rt-failure CASE
//
// Each CASE provokes one failure on a multi-rank job; the lit tests check
// that it ends with the runtime's "dist-runtime: rank R: <op>: <reason>"
// message and a non-zero exit, within a timeout (never a hang):
//   size-mismatch    rank 1 passes a different count to an all_gather
//   mpi-error        the same with the argument check off: MPI's own error
//                    code must still be reported, never wrong data
//   unknown-axis     a group over an axis the mesh does not have
//   mesh-size        a mesh (no device table) with more devices than ranks
//   mesh-rank        a device table naming a rank the job does not have
//   mesh-repeat      a device table naming a rank twice
//   bad-exchange     an exchange table entry naming a rank the job lacks
//   exchange-bounds  an exchange box past the end of one rank's buffer
//   exchange-mismatch  rank 1 passes a different exchange table than rank 0
//   exchange-dtype   rank 1 passes a different dtype than rank 0
//   bad-handle       a collective on a handle that is no group
//   bad-permute      a permute table that contradicts itself
//   bad-backend      initialisation with an unknown backend
//   exit-early       rank 1 leaves main without distRtFinalize while the
//                    others wait for it in a collective
//   killed           rank 1 dies from SIGKILL while the others wait for it
// and two that must succeed:
//   return-mode      with distRtSetAbortOnError(0) the same mismatch, and a
//                    failure on one rank only, come back as error codes on
//                    every rank, which then carry on in step; an exchange
//                    mismatch between ranks 0 and 1 comes back as MISMATCH
//                    on both, the ranks it does not name return OK
//   forgot-finalize  every rank leaves without distRtFinalize: the exit
//                    handler finalises quietly and the job succeeds
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

int64_t gRank, gSize, gMesh, gGroup;

void setUp() {
  if (distRtInit() != DIST_RT_OK)
    std::exit(1);
  gRank = distRtWorldRank();
  gSize = distRtWorldSize();
  gMesh = distRtMeshCreate(1, &gSize, nullptr);
  int64_t axis = 0;
  gGroup = distRtGroup(gMesh, 1, &axis);
}

int allGather(int64_t count) {
  std::vector<float> send(count + 1, 1.0f), recv((count + 1) * gSize);
  return distRtAllGather(gGroup, send.data(), recv.data(), count, DIST_RT_F32,
                         nullptr);
}

// Rank 1 sends `rows` rows of a 4x4 f32 tensor to rank 0.
int exchangeOneToZero(int64_t rows, int32_t dtype) {
  int64_t shape[2] = {4, 4};
  int64_t table[8] = {1, 0, 0, 0, 0, 0, rows, 4};
  std::vector<float> send(16, 1.0f), recv(16, 0.0f);
  return distRtExchange(2, shape, send.data(), shape, recv.data(), 1, table,
                        dtype, nullptr);
}

// exchangeOneToZero in two halves: start's and wait's return codes.
struct StartedExchange {
  int start = 0, wait = 0;
};
StartedExchange startedOneToZero(int64_t rows, bool nullSend = false) {
  int64_t shape[2] = {4, 4};
  int64_t table[8] = {1, 0, 0, 0, 0, 0, rows, 4};
  std::vector<float> send(16, 1.0f), recv(16, 0.0f);
  int64_t request = 0;
  StartedExchange r;
  r.start = distRtExchangeStart(2, shape, nullSend ? nullptr : send.data(),
                                shape, recv.data(), 1, table, DIST_RT_F32,
                                nullptr, &request);
  if (r.start == DIST_RT_OK)
    r.wait = distRtExchangeWait(request);
  return r;
}

int expect(bool ok, const char *what) {
  if (!ok) {
    std::fprintf(stderr, "rank %lld: unexpected: %s (%s)\n", (long long)gRank,
                 what, distRtLastErrorMessage());
    std::exit(3);
  }
  return 0;
}

int returnMode() {
  setUp();
  distRtSetAbortOnError(0);
  // A mismatch is reported on every rank, as MISMATCH.
  int rc = allGather(gRank == 1 ? 17 : 16);
  expect(rc == DIST_RT_ERR_MISMATCH, "mismatch not reported as MISMATCH");
  expect(std::strstr(distRtLastErrorMessage(), "ranks disagree on "
                                               "countPerRank") != nullptr,
         "mismatch message");
  distRtClearError();
  // A local failure on rank 1 (null buffer) fails the call everywhere.
  std::vector<double> a(4, 1.0), b(4);
  rc = distRtAllReduce(gGroup, gRank == 1 ? nullptr : a.data(), b.data(), 4,
                       DIST_RT_F64, DIST_RT_SUM, nullptr);
  if (gRank == 1)
    expect(rc == DIST_RT_ERR_INVALID_ARGUMENT, "null buffer not reported");
  else
    expect(rc == DIST_RT_ERR_INVALID_ARGUMENT &&
               std::strstr(distRtLastErrorMessage(),
                           "world rank 1 failed its checks") != nullptr,
           "peer failure not reported");
  // The ranks are still in step: a correct call works.
  rc = distRtAllReduce(gGroup, a.data(), b.data(), 4, DIST_RT_F64, DIST_RT_SUM,
                       nullptr);
  expect(rc == DIST_RT_OK && b[3] == static_cast<double>(gSize),
         "collective after errors");
  // An exchange between ranks 0 and 1 whose tables differ: MISMATCH on both,
  // nothing on the others; then a correct exchange works.
  distRtClearError();
  rc = exchangeOneToZero(gRank == 1 ? 3 : 2, DIST_RT_F32);
  if (gRank <= 1)
    expect(rc == DIST_RT_ERR_MISMATCH &&
               std::strstr(distRtLastErrorMessage(),
                           gRank == 0 ? "rank 0: exchange: ranks 0 and 1 "
                                        "disagree on the exchange"
                                      : "rank 1: exchange: ranks 1 and 0 "
                                        "disagree on the exchange") != nullptr,
           "exchange mismatch not reported as MISMATCH");
  else
    expect(rc == DIST_RT_OK, "exchange on a rank it does not name");
  distRtClearError();
  expect(exchangeOneToZero(2, DIST_RT_F32) == DIST_RT_OK,
         "exchange after errors");
  // The same through distRtExchangeStart/Wait: both starts succeed, both
  // waits report the mismatch (the data is discarded); a null send buffer on
  // rank 1 fails its start and rank 0's wait; then the ranks are in step.
  distRtClearError();
  StartedExchange nb = startedOneToZero(gRank == 1 ? 3 : 2);
  expect(nb.start == DIST_RT_OK, "start of a mismatched exchange");
  if (gRank <= 1)
    expect(nb.wait == DIST_RT_ERR_MISMATCH &&
               std::strstr(distRtLastErrorMessage(), "exchange_wait: ranks") !=
                   nullptr,
           "non-blocking exchange mismatch not reported at the wait");
  else
    expect(nb.wait == DIST_RT_OK, "wait on a rank the table does not name");
  distRtClearError();
  nb = startedOneToZero(2, /*nullSend=*/gRank == 1);
  if (gRank == 1)
    expect(nb.start == DIST_RT_ERR_INVALID_ARGUMENT,
           "a bad send buffer not reported at the start");
  else if (gRank == 0)
    expect(nb.start == DIST_RT_OK && nb.wait == DIST_RT_ERR_INVALID_ARGUMENT &&
               std::strstr(distRtLastErrorMessage(),
                           "world rank 1 failed its checks") != nullptr,
           "the peer's failure not reported at the wait");
  distRtClearError();
  nb = startedOneToZero(2);
  expect(nb.start == DIST_RT_OK && nb.wait == DIST_RT_OK,
         "non-blocking exchange after errors");
  distRtFinalize();
  if (gRank == 0)
    std::printf("return-mode: errors returned on all %lld ranks, still in "
                "step\n",
                (long long)gSize);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s CASE\n", argv[0]);
    return 2;
  }
  std::string c = argv[1];
  if (c == "bad-backend") {
    distRtInitWithBackend("tpu");
    return 0; // not reached: the init aborts
  }
  if (c == "return-mode")
    return returnMode();
  setUp();
  if (c == "size-mismatch" || c == "mpi-error") {
    if (c == "mpi-error")
      distRtSetValidation(0);
    // Large enough that a short receive cannot go unnoticed.
    allGather(gRank == 1 ? 5000 : 4096);
  } else if (c == "unknown-axis") {
    int64_t axis = 1;
    distRtGroup(gMesh, 1, &axis);
  } else if (c == "mesh-size") {
    int64_t sizes[2] = {2, gSize};
    distRtMeshCreate(2, sizes, nullptr);
  } else if (c == "mesh-rank") {
    int64_t size = 2, devices[2] = {0, 7};
    distRtMeshCreate(1, &size, devices);
  } else if (c == "mesh-repeat") {
    int64_t size = 3, devices[3] = {1, 2, 1};
    distRtMeshCreate(1, &size, devices);
  } else if (c == "bad-exchange") {
    // Entry 1 sends from rank 0 to a rank past the job's last.
    int64_t shape[1] = {4};
    int64_t table[10] = {0, 1, 0, 0, 2, 0, gSize, 0, 0, 2};
    float send[4] = {}, recv[4] = {};
    distRtExchange(1, shape, send, shape, recv, 2, table, DIST_RT_F32, nullptr);
  } else if (c == "exchange-bounds") {
    // Rank 1's send buffer is shorter than the box it sends.
    int64_t shape[1] = {4}, shortShape[1] = {2};
    int64_t table[5] = {1, 0, 1, 0, 3};
    float send[4] = {}, recv[4] = {};
    distRtExchange(1, gRank == 1 ? shortShape : shape, send, shape, recv, 1,
                   table, DIST_RT_F32, nullptr);
    // Ranks 2 and 3 take no part: they wait in a collective, where rank
    // 1's abort reaches them (see exchange-mismatch).
    allGather(16);
  } else if (c == "exchange-mismatch") {
    exchangeOneToZero(gRank == 1 ? 3 : 2, DIST_RT_F32);
    // The ranks the table does not name return at once; they wait in a
    // collective (where the abort reaches them) rather than in
    // MPI_Finalize, which Open MPI can leave hanging after another rank's
    // MPI_Abort (seen once in 8 runs on an oversubscribed machine).
    allGather(16);
  } else if (c == "exchange-dtype") {
    exchangeOneToZero(2, gRank == 1 ? DIST_RT_I32 : DIST_RT_F32);
    allGather(16);
  } else if (c == "bad-handle") {
    float x = 0, y = 0;
    distRtAllReduce(gMesh, &x, &y, 1, DIST_RT_F32, DIST_RT_SUM, nullptr);
  } else if (c == "bad-permute") {
    // Everyone claims to receive from rank 0, but rank 0 sends to nobody.
    std::vector<int64_t> src(gSize, 0), offsets(gSize + 1, 0);
    src[0] = -1;
    float x = 0, y = 0;
    distRtPermute(gMesh, &x, &y, 1, DIST_RT_F32, src.data(), offsets.data(),
                  nullptr, nullptr);
  } else if (c == "exit-early") {
    if (gRank == 1)
      return 0; // leaves without distRtFinalize
    allGather(16);
  } else if (c == "killed") {
    if (gRank == 1)
      std::raise(SIGKILL);
    allGather(16);
  } else if (c == "forgot-finalize") {
    allGather(16);
    if (gRank == 0)
      std::printf("forgot-finalize: leaving without distRtFinalize\n");
    return 0;
  } else {
    std::fprintf(stderr, "unknown case '%s'\n", c.c_str());
    return 2;
  }
  // A rank whose own call succeeded waits here for the others to fail the
  // job (with the mismatch unchecked, only the ranks that got less data
  // than they expected see an MPI error). Getting past the finalize means
  // that no rank failed: the case was not caught.
  distRtFinalize();
  if (gRank == 0)
    std::fprintf(stderr, "case '%s' did not fail\n", c.c_str());
  return 0;
}
