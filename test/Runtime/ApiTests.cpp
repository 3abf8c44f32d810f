//===- ApiTests.cpp - The C ABI in a one-rank MPI world -------------------===//
//
// Exercises the C ABI as compiled code calls it, in a singleton MPI world
// (no mpirun): lifetime, handles, every error path as a return code, and the
// local data movement. Multi-rank behaviour is tested by the lit tests that
// run dist-rt-collectives-check and dist-rt-failure under mpirun.
//
//===----------------------------------------------------------------------===//

#include "dist/Runtime/DistRuntime.h"

#include "../../lib/Runtime/Types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

// These tests initialise MPI, whose plugins leak at MPI_Finalize and are
// unloaded by then, so that LeakSanitizer cannot tell their allocations from
// ours (test/sanitize.py); in an ASan build this program opts out of leak
// checks (ASan and UBSan stay on).
#if defined(__SANITIZE_ADDRESS__)
#define DIST_API_TESTS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DIST_API_TESTS_ASAN 1
#endif
#endif
#ifdef DIST_API_TESTS_ASAN
extern "C" const char *__asan_default_options() { return "detect_leaks=0"; }
#endif

namespace {

// MPI can be initialised once per process: one environment for all tests.
class RuntimeEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    distRtSetAbortOnError(0);
    ASSERT_EQ(distRtInitWithBackend("mpi"), DIST_RT_OK)
        << distRtLastErrorMessage();
  }
  void TearDown() override { EXPECT_EQ(distRtFinalize(), DIST_RT_OK); }
};

const ::testing::Environment *const env =
    ::testing::AddGlobalTestEnvironment(new RuntimeEnvironment);

class Api : public ::testing::Test {
protected:
  void SetUp() override {
    distRtSetAbortOnError(0);
    distRtClearError();
  }
  // Expects the last call to have failed with `code` and a message
  // containing `text` in the documented format.
  void expectError(int32_t code, const std::string &op,
                   const std::string &text) {
    EXPECT_EQ(distRtLastError(), code);
    std::string msg = distRtLastErrorMessage();
    EXPECT_EQ(msg.rfind("dist-runtime: rank 0: " + op + ": ", 0), 0u) << msg;
    EXPECT_NE(msg.find(text), std::string::npos) << msg;
    distRtClearError();
  }
  int64_t worldMesh() {
    int64_t size = 1;
    return distRtMeshCreate(1, &size, nullptr);
  }
};

TEST_F(Api, Lifetime) {
  EXPECT_EQ(distRtIsInitialized(), 1);
  EXPECT_STREQ(distRtBackendName(), "mpi");
  EXPECT_EQ(distRtWorldRank(), 0);
  EXPECT_EQ(distRtWorldSize(), 1);
  EXPECT_EQ(distRtInit(), DIST_RT_OK); // idempotent
  EXPECT_EQ(distRtInitWithBackend("mpi"), DIST_RT_OK);
  EXPECT_EQ(distRtDefaultStream(), nullptr);
  EXPECT_EQ(distRtSynchronize(nullptr), DIST_RT_OK);
}

TEST_F(Api, BackendSwitchAndUnknownBackend) {
  EXPECT_EQ(distRtInitWithBackend("nccl"), DIST_RT_ERR_STATE);
  expectError(DIST_RT_ERR_STATE, "init",
              "already initialised with backend 'mpi'");
  EXPECT_EQ(distRtInitWithBackend(nullptr), DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "init", "null");
}

TEST_F(Api, MeshesAreDeduplicated) {
  int64_t one = 1;
  int64_t m = distRtMeshCreate(1, &one, nullptr);
  ASSERT_GE(m, 0);
  int64_t identity = 0;
  EXPECT_EQ(distRtMeshCreate(1, &one, &identity), m);
  int64_t ones[3] = {1, 1, 1};
  int64_t m3 = distRtMeshCreate(3, ones, nullptr);
  EXPECT_NE(m3, m);
  EXPECT_EQ(distRtMeshNumAxes(m3), 3);
  EXPECT_EQ(distRtMeshCoord(m3, 2), 0);
  EXPECT_EQ(distRtMeshContains(m), 1);
}

TEST_F(Api, MeshErrors) {
  int64_t sizes[2] = {2, 4};
  EXPECT_EQ(distRtMeshCreate(2, sizes, nullptr), -1);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "mesh_create",
              "the mesh names rank 7 (8 devices, no device table: ranks "
              "0..7) but the job has only 1 ranks; run with --np 8 or more");
  int64_t two = 2, repeated[2] = {0, 0}, negative[2] = {0, -3};
  EXPECT_EQ(distRtMeshCreate(1, &two, repeated), -1);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "mesh_create",
              "names rank 0 twice");
  EXPECT_EQ(distRtMeshCreate(1, &two, negative), -1);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "mesh_create",
              "devices[1] = -3 is not a rank");
  EXPECT_EQ(distRtMeshContains(12345), -1);
  expectError(DIST_RT_ERR_BAD_HANDLE, "mesh_contains", "bad mesh handle");
  int64_t zero = 0;
  EXPECT_EQ(distRtMeshCreate(1, &zero, nullptr), -1);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "mesh_create", "size 0");
  EXPECT_EQ(distRtMeshCoord(worldMesh(), 1), -1);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "mesh_coord",
              "unknown mesh axis 1");
  EXPECT_EQ(distRtMeshCoord(12345, 0), -1);
  expectError(DIST_RT_ERR_BAD_HANDLE, "mesh_coord", "bad mesh handle 12345");
}

TEST_F(Api, GroupsAreCachedAndChecked) {
  int64_t m = worldMesh();
  int64_t axis = 0;
  int64_t g = distRtGroup(m, 1, &axis);
  ASSERT_GE(g, 0) << distRtLastErrorMessage();
  EXPECT_EQ(distRtGroup(m, 1, &axis), g);
  EXPECT_EQ(distRtGroupSize(g), 1);
  EXPECT_EQ(distRtGroupRank(g), 0);
  int64_t self = distRtGroup(m, 0, nullptr);
  EXPECT_NE(self, g);
  EXPECT_EQ(distRtGroupSize(self), 1);

  int64_t bad = 3;
  EXPECT_EQ(distRtGroup(m, 1, &bad), -1);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "group", "unknown mesh axis 3");
  // A group handle is not a mesh handle, and vice versa.
  EXPECT_EQ(distRtGroup(g, 1, &axis), -1);
  expectError(DIST_RT_ERR_BAD_HANDLE, "group", "bad mesh handle");
  EXPECT_EQ(distRtGroupSize(m), -1);
  expectError(DIST_RT_ERR_BAD_HANDLE, "group_size", "bad group handle");
}

int64_t worldGroup() {
  int64_t one = 1, axis = 0;
  return distRtGroup(distRtMeshCreate(1, &one, nullptr), 1, &axis);
}

TEST_F(Api, OneRankCollectivesAreCopies) {
  int64_t g = worldGroup();
  std::vector<float> in{1.5f, -2.f, 3.f}, out(3);
  ASSERT_EQ(distRtAllGather(g, in.data(), out.data(), 3, DIST_RT_F32, nullptr),
            DIST_RT_OK);
  EXPECT_EQ(out, in);
  out.assign(3, 0);
  ASSERT_EQ(distRtAllToAll(g, in.data(), out.data(), 3, DIST_RT_F32, nullptr),
            DIST_RT_OK);
  EXPECT_EQ(out, in);
  for (int op = DIST_RT_SUM; op <= DIST_RT_AVG; ++op) {
    out.assign(3, 0);
    ASSERT_EQ(
        distRtAllReduce(g, in.data(), out.data(), 3, DIST_RT_F32, op, nullptr),
        DIST_RT_OK);
    EXPECT_EQ(out, in) << op;
    out.assign(3, 0);
    ASSERT_EQ(distRtReduceScatter(g, in.data(), out.data(), 3, DIST_RT_F32, op,
                                  nullptr),
              DIST_RT_OK);
    EXPECT_EQ(out, in) << op;
  }
  // In place.
  std::vector<int64_t> v{4, 5};
  ASSERT_EQ(distRtAllReduce(g, v.data(), v.data(), 2, DIST_RT_I64, DIST_RT_MAX,
                            nullptr),
            DIST_RT_OK);
  EXPECT_EQ(v, (std::vector<int64_t>{4, 5}));
  // Zero counts are valid no-ops, even with null buffers.
  EXPECT_EQ(distRtAllGather(g, nullptr, nullptr, 0, DIST_RT_F16, nullptr),
            DIST_RT_OK);
}

TEST_F(Api, CollectiveArgumentErrors) {
  int64_t g = worldGroup();
  float a[4] = {}, b[4] = {};
  EXPECT_EQ(distRtAllGather(g, a, b, -1, DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_gather",
              "countPerRank is negative (-1)");
  EXPECT_EQ(distRtAllGather(g, a, b, 1, 42, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_gather", "unknown dtype 42");
  EXPECT_EQ(distRtAllReduce(g, a, b, 1, DIST_RT_F32, 9, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_reduce",
              "unknown reduction 9");
  EXPECT_EQ(distRtAllReduce(g, a, b, 1, DIST_RT_I1, DIST_RT_SUM, nullptr),
            DIST_RT_ERR_UNSUPPORTED);
  expectError(DIST_RT_ERR_UNSUPPORTED, "all_reduce",
              "reduction sum is not defined on i1");
  EXPECT_EQ(distRtAllToAll(g, nullptr, b, 2, DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_to_all",
              "send buffer is null");
  EXPECT_EQ(distRtAllReduce(g, a, a + 1, 2, DIST_RT_F32, DIST_RT_SUM, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_reduce", "overlap");
  int dummy;
  EXPECT_EQ(distRtAllReduce(g, a, b, 1, DIST_RT_F32, DIST_RT_SUM, &dummy),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_reduce",
              "the mpi backend has no streams");
  EXPECT_EQ(distRtAllGather(77, a, b, 1, DIST_RT_F32, nullptr),
            DIST_RT_ERR_BAD_HANDLE);
  expectError(DIST_RT_ERR_BAD_HANDLE, "all_gather", "bad group handle 77");
  EXPECT_EQ(distRtAllGather(g, a, b, int64_t(1) << 33, DIST_RT_F32, nullptr),
            DIST_RT_ERR_UNSUPPORTED);
  expectError(DIST_RT_ERR_UNSUPPORTED, "all_gather",
              "exceeds the mpi backend's limit");
}

TEST_F(Api, StridedAllToAllArgumentErrors) {
  int64_t g = worldGroup();
  float a[16] = {}, b[16] = {};
  const int64_t shape[2] = {2, 3}, rowMajor[2] = {3, 1};
  // On one rank the strided form is a strided copy: [2, 3] out of a 2x4
  // tensor into the top-left of a 2x5 one.
  for (int i = 0; i < 8; ++i)
    a[i] = float(i);
  const int64_t from[2] = {4, 1}, to[2] = {5, 1};
  ASSERT_EQ(distRtAllToAllStrided(g, 2, shape, a, from, 0, b, to, 0,
                                  DIST_RT_F32, nullptr),
            DIST_RT_OK)
      << distRtLastErrorMessage();
  EXPECT_EQ(b[0], 0.f);
  EXPECT_EQ(b[2], 2.f);
  EXPECT_EQ(b[3], 0.f); // outside the box
  EXPECT_EQ(b[5], 4.f);
  EXPECT_EQ(b[7], 6.f);

  EXPECT_EQ(distRtAllToAllStrided(g, 9, shape, a, rowMajor, 6, b, rowMajor, 6,
                                  DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_to_all",
              "numDims 9 is outside [0, 7]");
  EXPECT_EQ(distRtAllToAllStrided(g, 2, shape, a, nullptr, 6, b, rowMajor, 6,
                                  DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_to_all", "must not be null");
  const int64_t negative[2] = {-1, 3};
  EXPECT_EQ(distRtAllToAllStrided(g, 2, negative, a, rowMajor, 6, b, rowMajor,
                                  6, DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_to_all",
              "chunkShape has a negative size");
  const int64_t backwards[2] = {3, -1};
  EXPECT_EQ(distRtAllToAllStrided(g, 2, shape, a, backwards, 6, b, rowMajor, 6,
                                  DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_to_all",
              "send stride 2 is negative (-1)");
  // Rows 2 apart hold 3 elements each: the recv box writes some twice.
  const int64_t tooClose[2] = {2, 1};
  EXPECT_EQ(distRtAllToAllStrided(g, 2, shape, a, rowMajor, 6, b, tooClose, 6,
                                  DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_to_all",
              "recv chunks overlap");
  EXPECT_EQ(distRtAllToAllStrided(g, 2, shape, a, rowMajor, 6, a + 4, rowMajor,
                                  6, DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_to_all",
              "send and recv overlap");
  EXPECT_EQ(distRtAllToAllStrided(g, 2, shape, nullptr, rowMajor, 6, b,
                                  rowMajor, 6, DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "all_to_all",
              "send buffer is null");
  // An empty box moves nothing and accepts null buffers.
  const int64_t empty[2] = {0, 3};
  EXPECT_EQ(distRtAllToAllStrided(g, 2, empty, nullptr, rowMajor, 0, nullptr,
                                  rowMajor, 0, DIST_RT_F32, nullptr),
            DIST_RT_OK);
}

TEST_F(Api, ValidationOffStillChecksLocally) {
  int64_t g = worldGroup();
  distRtSetValidation(0);
  float a[2] = {1, 2}, b[2] = {};
  EXPECT_EQ(distRtAllGather(g, a, b, 2, DIST_RT_F32, nullptr), DIST_RT_OK);
  EXPECT_EQ(b[1], 2.f);
  EXPECT_EQ(distRtAllGather(g, a, b, -2, DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  distRtSetValidation(1);
}

TEST_F(Api, PermuteOnOneRank) {
  int64_t m = worldMesh();
  int32_t in[3] = {7, 8, 9}, out[3] = {};
  int64_t self[1] = {0}, offsets[2] = {0, 0}, none[1] = {-1};
  ASSERT_EQ(distRtPermute(m, in, out, 3, DIST_RT_I32, self, offsets, nullptr,
                          nullptr),
            DIST_RT_OK)
      << distRtLastErrorMessage();
  EXPECT_EQ(std::memcmp(in, out, sizeof in), 0);
  int32_t untouched[3] = {1, 1, 1};
  ASSERT_EQ(distRtPermute(m, in, untouched, 3, DIST_RT_I32, none, offsets,
                          nullptr, nullptr),
            DIST_RT_OK);
  EXPECT_EQ(untouched[0], 1);
  int64_t bogus[1] = {3};
  EXPECT_EQ(distRtPermute(m, in, out, 3, DIST_RT_I32, bogus, offsets, nullptr,
                          nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "permute",
              "srcRank[0] = 3 is not a rank");
}

TEST_F(Api, ExchangeOnOneRankIsLocalCopies) {
  // A 3x4 i32 tensor: its transpose-free "reshard" into a 4x3 buffer as two
  // boxes (rows 0..1 -> columns, row 2 -> last row), plus an empty box.
  std::vector<int32_t> in(12), out(12, -1);
  for (int i = 0; i < 12; ++i)
    in[i] = i;
  int64_t sendShape[2] = {3, 4}, recvShape[2] = {4, 3};
  int64_t table[3 * 8] = {
      0, 0, 0, 1, 1, 0, 2, 3, // in[0..1][1..3] -> out[1..2][0..2]
      0, 0, 2, 0, 3, 0, 1, 3, // in[2][0..2]    -> out[3][0..2]
      0, 0, 9, 9, 9, 9, 0, 5, // empty: never checked against the shapes
  };
  ASSERT_EQ(distRtExchange(2, sendShape, in.data(), recvShape, out.data(), 3,
                           table, DIST_RT_I32, nullptr),
            DIST_RT_OK)
      << distRtLastErrorMessage();
  EXPECT_EQ(out,
            (std::vector<int32_t>{-1, -1, -1, 1, 2, 3, 5, 6, 7, 8, 9, 10}));
  // Nothing names this rank... there is only rank 0; no transfers at all.
  EXPECT_EQ(distRtExchange(2, nullptr, nullptr, nullptr, nullptr, 0, nullptr,
                           DIST_RT_I32, nullptr),
            DIST_RT_OK);
}

TEST_F(Api, ExchangeErrors) {
  int32_t a[4] = {}, b[4] = {};
  int64_t shape[1] = {4};
  auto call = [&](std::vector<int64_t> table, int64_t nd = 1) {
    return distRtExchange(nd, shape, a, shape, b,
                          static_cast<int64_t>(table.size()) /
                              (2 + 3 * std::max<int64_t>(nd, 0)),
                          table.data(), DIST_RT_I32, nullptr);
  };
  EXPECT_EQ(call({0, 1, 0, 0, 1}), DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange",
              "table entry 0: dstRank = 1 is not a rank of the 1-rank job");
  EXPECT_EQ(call({0, 0, 0, 0, 1, 0, 0, -1, 0, 1}),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange",
              "table entry 1: srcOffset[0] = -1 is negative");
  EXPECT_EQ(call({0, 0, 0, 0, -2}), DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange",
              "table entry 0: size[0] = -2 is negative");
  EXPECT_EQ(call({0, 0, 0, 2, 3}), DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange",
              "table entry 0: dstOffset[0] + size[0] = 2 + 3 exceeds "
              "recvShape[0] = 4");
  EXPECT_EQ(call({0, 0}, 9), DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange",
              "numDims 9 is outside [0, 8]");
  EXPECT_EQ(distRtExchange(1, shape, a, shape, nullptr, 1,
                           std::vector<int64_t>{0, 0, 0, 0, 1}.data(),
                           DIST_RT_I32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange", "recv buffer is null");
  EXPECT_EQ(distRtExchange(1, shape, a, shape, a + 1, 1,
                           std::vector<int64_t>{0, 0, 0, 0, 1}.data(),
                           DIST_RT_I32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange",
              "send and recv overlap");
  EXPECT_EQ(distRtExchange(1, shape, a, shape, b, 1,
                           std::vector<int64_t>{0, 0, 0, 0, 1}.data(), 42,
                           nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  distRtClearError();
}

// distRtExchangeStart/Wait on one rank (local copies, done by the start),
// and every request it does not know, or a bad table, refused by name.
TEST_F(Api, NonBlockingExchangeOnOneRankAndErrors) {
  int32_t a[4] = {1, 2, 3, 4}, b[4] = {};
  int64_t shape[1] = {4};
  const std::vector<int64_t> table = {0, 0, 1, 0, 3}; // a[1..3] -> b[0..2]
  int64_t request = -1;
  ASSERT_EQ(distRtExchangeStart(1, shape, a, shape, b, 1, table.data(),
                                DIST_RT_I32, nullptr, &request),
            DIST_RT_OK)
      << distRtLastErrorMessage();
  EXPECT_GT(request, 0);
  ASSERT_EQ(distRtExchangeWait(request), DIST_RT_OK);
  EXPECT_EQ(std::vector<int32_t>(b, b + 4), (std::vector<int32_t>{2, 3, 4, 0}));
  // Waited for once only.
  EXPECT_EQ(distRtExchangeWait(request), DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange_wait",
              "is not an exchange in flight");
  EXPECT_EQ(distRtExchangeWait(12345), DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange_wait",
              "request 12345 is not an exchange in flight");
  EXPECT_EQ(distRtExchangeStart(1, shape, a, shape, b, 1, table.data(),
                                DIST_RT_I32, nullptr, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange_start",
              "request is NULL");
  const std::vector<int64_t> past = {0, 0, 2, 0, 3}; // a[2..4]: past a
  EXPECT_EQ(distRtExchangeStart(1, shape, a, shape, b, 1, past.data(),
                                DIST_RT_I32, nullptr, &request),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "exchange_start",
              "srcOffset[0] + size[0] = 2 + 3 exceeds sendShape[0] = 4");
  EXPECT_EQ(request, 0); // nothing to wait for
  distRtClearError();
}

TEST_F(Api, LocalDataMovement) {
  // A 4x6 i16 tensor: pack on dim 1 into 3 chunks, unpack back.
  std::vector<int16_t> t(24), packed(24), back(24);
  for (int i = 0; i < 24; ++i)
    t[i] = static_cast<int16_t>(i);
  int64_t shape[2] = {4, 6};
  ASSERT_EQ(distRtPackChunks(2, shape, 1, 3, t.data(), packed.data(),
                             DIST_RT_I16, nullptr),
            DIST_RT_OK);
  // Chunk 1 = columns 2..3 of every row.
  EXPECT_EQ(packed[8], 2);
  EXPECT_EQ(packed[9], 3);
  EXPECT_EQ(packed[10], 8);
  ASSERT_EQ(distRtUnpackChunks(2, shape, 1, 3, packed.data(), back.data(),
                               DIST_RT_I16, nullptr),
            DIST_RT_OK);
  EXPECT_EQ(back, t);

  // Slice rows 1..2, columns 2..4 of the tensor into a 2x3 buffer.
  std::vector<int16_t> slice(6);
  int64_t sizes[2] = {2, 3}, srcStrides[2] = {6, 1}, dstStrides[2] = {3, 1};
  ASSERT_EQ(distRtCopyStrided(2, sizes, t.data() + 8, srcStrides, slice.data(),
                              dstStrides, DIST_RT_I16, nullptr),
            DIST_RT_OK);
  EXPECT_EQ(slice, (std::vector<int16_t>{8, 9, 10, 14, 15, 16}));
  ASSERT_EQ(
      distRtFillZero(2, sizes, t.data() + 8, srcStrides, DIST_RT_I16, nullptr),
      DIST_RT_OK);
  EXPECT_EQ(t[7], 7);
  EXPECT_EQ(t[8], 0);
  EXPECT_EQ(t[16], 0);
  EXPECT_EQ(t[17], 17);

  EXPECT_EQ(distRtPackChunks(2, shape, 1, 4, t.data(), packed.data(),
                             DIST_RT_I16, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "pack_chunks",
              "does not split into 4");
  EXPECT_EQ(distRtCopyStrided(2, sizes, t.data(), srcStrides, t.data() + 1,
                              dstStrides, DIST_RT_I16, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "copy_strided", "overlap");
}

TEST_F(Api, MemoryAndCopies) {
  void *p = distRtAlloc(100);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  char host[100];
  for (int i = 0; i < 100; ++i)
    host[i] = static_cast<char>(i);
  EXPECT_EQ(distRtMemcpy(p, host, 100, DIST_RT_COPY_HOST_TO_DEVICE, nullptr),
            DIST_RT_OK);
  char back[100] = {};
  EXPECT_EQ(distRtMemcpy(back, p, 100, DIST_RT_COPY_DEVICE_TO_HOST, nullptr),
            DIST_RT_OK);
  EXPECT_EQ(std::memcmp(host, back, 100), 0);
  EXPECT_EQ(distRtMemcpy(back, p, 100, 9, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "memcpy", "unknown copy kind 9");
  EXPECT_EQ(distRtFree(p), DIST_RT_OK);
  EXPECT_EQ(distRtAlloc(0), nullptr);
  EXPECT_EQ(distRtLastError(), DIST_RT_OK);
  EXPECT_EQ(distRtAlloc(-5), nullptr);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "alloc", "negative size -5");
}

// distRtGemm against reference loops on random calls: sizes from 0 to 9,
// both transposes, padded leading dimensions, batches with gaps between
// matrices, every supported type pair. Inputs are multiples of 1/16 in
// [-4, 4], exact in every type, so every sum is exact in f32 and the only
// rounding is the one to a half-type output: the results must be equal.
TEST_F(Api, GemmMatchesReferenceLoops) {
  struct Types {
    int32_t in, out;
  };
  const Types pairs[] = {
      {DIST_RT_F32, DIST_RT_F32},  {DIST_RT_F64, DIST_RT_F64},
      {DIST_RT_BF16, DIST_RT_F32}, {DIST_RT_BF16, DIST_RT_BF16},
      {DIST_RT_F16, DIST_RT_F32},  {DIST_RT_F16, DIST_RT_F16}};
  auto load = [](int32_t t, const std::vector<uint8_t> &buf, int64_t i) {
    switch (t) {
    case DIST_RT_F32: {
      float f;
      std::memcpy(&f, buf.data() + 4 * i, 4);
      return double(f);
    }
    case DIST_RT_F64: {
      double d;
      std::memcpy(&d, buf.data() + 8 * i, 8);
      return d;
    }
    default: {
      uint16_t h;
      std::memcpy(&h, buf.data() + 2 * i, 2);
      return double(t == DIST_RT_F16 ? dist::rt::halfBitsToFloat(h)
                                     : dist::rt::bf16BitsToFloat(h));
    }
    }
  };
  auto store = [](int32_t t, std::vector<uint8_t> &buf, int64_t i, double v) {
    switch (t) {
    case DIST_RT_F32: {
      float f = float(v);
      std::memcpy(buf.data() + 4 * i, &f, 4);
      return;
    }
    case DIST_RT_F64:
      std::memcpy(buf.data() + 8 * i, &v, 8);
      return;
    default: {
      uint16_t h = t == DIST_RT_F16 ? dist::rt::floatToHalfBits(float(v))
                                    : dist::rt::floatToBf16Bits(float(v));
      std::memcpy(buf.data() + 2 * i, &h, 2);
    }
    }
  };
  auto bytes = [](int32_t t) {
    return t == DIST_RT_F64 ? 8 : t == DIST_RT_F32 ? 4 : 2;
  };
  std::mt19937_64 rng(20261127);
  auto below = [&](int64_t n) { return int64_t(rng() % uint64_t(n)); };
  for (int trial = 0; trial < 300; ++trial) {
    Types types = pairs[trial % 6];
    int64_t m = below(10), n = below(10), k = below(10), batch = 1 + below(3);
    bool transA = below(2), transB = below(2);
    int64_t aRows = transA ? k : m, aCols = transA ? m : k;
    int64_t bRows = transB ? n : k, bCols = transB ? k : n;
    int64_t lda = std::max<int64_t>(1, aCols) + below(3);
    int64_t ldb = std::max<int64_t>(1, bCols) + below(3);
    int64_t ldc = std::max<int64_t>(1, n) + below(3);
    int64_t strideA = aRows * lda + below(4), strideB = bRows * ldb + below(4),
            strideC = m * ldc + below(4);
    int64_t aSize = batch * strideA + 1, bSize = batch * strideB + 1,
            cSize = batch * strideC + 1;
    std::vector<uint8_t> a(aSize * bytes(types.in)), b(bSize * bytes(types.in)),
        c(cSize * bytes(types.out));
    auto value = [&] { return double(below(129) - 64) / 16.0; };
    for (int64_t i = 0; i < aSize; ++i)
      store(types.in, a, i, value());
    for (int64_t i = 0; i < bSize; ++i)
      store(types.in, b, i, value());
    for (int64_t i = 0; i < cSize; ++i)
      store(types.out, c, i, value());
    std::vector<uint8_t> expected = c;
    for (int64_t q = 0; q < batch; ++q)
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p) {
            int64_t ai = q * strideA + (transA ? p * lda + i : i * lda + p);
            int64_t bi = q * strideB + (transB ? j * ldb + p : p * ldb + j);
            sum += load(types.in, a, ai) * load(types.in, b, bi);
          }
          int64_t ci = q * strideC + i * ldc + j;
          store(types.out, expected, ci, load(types.out, expected, ci) + sum);
        }
    ASSERT_EQ(distRtGemm(transA, transB, m, n, k, a.data(), lda, strideA,
                         b.data(), ldb, strideB, c.data(), ldc, strideC, batch,
                         types.in, types.out, nullptr),
              DIST_RT_OK)
        << distRtLastErrorMessage();
    ASSERT_EQ(c, expected) << "trial " << trial << ": m " << m << " n " << n
                           << " k " << k << " batch " << batch << " transA "
                           << transA << " transB " << transB << " types "
                           << types.in << " -> " << types.out;
  }
}

TEST_F(Api, GemmArgumentErrors) {
  float a[4] = {}, b[4] = {}, c[4] = {};
  EXPECT_EQ(distRtGemm(0, 0, -1, 2, 2, a, 2, 0, b, 2, 0, c, 2, 0, 1,
                       DIST_RT_F32, DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "gemm", "m is negative (-1)");
  EXPECT_EQ(distRtGemm(0, 0, 2, 2, 2, a, 1, 0, b, 2, 0, c, 2, 0, 1, DIST_RT_F32,
                       DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "gemm",
              "lda = 1 is below the row length 2");
  EXPECT_EQ(distRtGemm(2, 0, 2, 2, 2, a, 2, 0, b, 2, 0, c, 2, 0, 1, DIST_RT_F32,
                       DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "gemm",
              "transA and transB must be 0 or 1");
  EXPECT_EQ(distRtGemm(0, 0, 2, 2, 2, a, 2, 0, b, 2, 0, c, 2, 0, 1, DIST_RT_I32,
                       DIST_RT_I32, nullptr),
            DIST_RT_ERR_UNSUPPORTED);
  expectError(DIST_RT_ERR_UNSUPPORTED, "gemm", "no matrix product of i32");
  EXPECT_EQ(distRtGemm(0, 0, 2, 2, 2, nullptr, 2, 0, b, 2, 0, c, 2, 0, 1,
                       DIST_RT_F32, DIST_RT_F32, nullptr),
            DIST_RT_ERR_INVALID_ARGUMENT);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "gemm", "A");
  // Nothing to compute: null buffers are fine.
  EXPECT_EQ(distRtGemm(0, 0, 0, 2, 2, nullptr, 2, 0, nullptr, 2, 0, nullptr, 2,
                       0, 1, DIST_RT_F32, DIST_RT_F32, nullptr),
            DIST_RT_OK);
}

// The launch path of compiled GPU kernels (CApiGpuKernels) on a backend
// without a GPU: a clear refusal, never a crash; arguments checked first.
TEST_F(Api, GpuKernelsNeedAGpuBackend) {
  char image[16] = {};
  EXPECT_EQ(mgpuModuleLoad(image, sizeof image), nullptr);
  expectError(DIST_RT_ERR_UNSUPPORTED, "gpu_module_load",
              "the mpi backend runs no GPU kernels here");
  EXPECT_EQ(mgpuModuleLoad(nullptr, 0), nullptr);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "gpu_module_load",
              "the kernel image is null");
  EXPECT_EQ(mgpuModuleGetFunction(nullptr, "k"), nullptr);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "gpu_kernel",
              "no module or no kernel name");
  int dummy = 0;
  mgpuLaunchKernel(&dummy, 1, 1, 1, 0, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "gpu_launch",
              "empty launch dimension");
  void *args[1] = {&dummy};
  void *extra[1] = {nullptr};
  mgpuLaunchKernel(&dummy, 1, 1, 1, 1, 1, 1, 0, nullptr, args, extra, 1);
  expectError(DIST_RT_ERR_INVALID_ARGUMENT, "gpu_launch",
              "'extra' launch parameters are not supported");
  mgpuLaunchKernel(&dummy, 1, 1, 1, 1, 1, 1, 0, nullptr, args, nullptr, 1);
  expectError(DIST_RT_ERR_UNSUPPORTED, "gpu_launch",
              "the mpi backend runs no GPU kernels here");
  // The stream calls name the runtime's stream (none for mpi) and wait for
  // nothing: a compiled program's work is ordered on that one stream.
  EXPECT_EQ(mgpuStreamCreate(), distRtDefaultStream());
  mgpuStreamSynchronize(nullptr);
  mgpuStreamDestroy(nullptr);
  EXPECT_EQ(distRtLastError(), DIST_RT_OK);
}

} // namespace
