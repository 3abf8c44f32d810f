//===- SignatureTests.cpp - What ranks compare before they communicate ----===//
//
// The cross-rank signatures (lib/Runtime/Signature.h): which difference is
// reported, and in which words, for collectives and for exchange pairs.
// The lit tests fail-size-mismatch and fail-exchange-mismatch check the
// same messages end to end under mpirun.
//
//===----------------------------------------------------------------------===//

#include "ErrorCapture.h"

#include "../../lib/Runtime/Signature.h"
#include "../../lib/Runtime/Types.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace dist::rt;
using dist::rt::test::errorReport;

namespace {

std::string mismatch(const std::string &reason) {
  return std::to_string(DIST_RT_ERR_MISMATCH) + ": " + reason;
}

Signature allGather(int64_t count, int64_t dtype = DIST_RT_F32) {
  return {int64_t(OpCode::AllGather), count, dtype, -1, 0, DIST_RT_OK};
}

} // namespace

TEST(Signature, AgreementIsSilent) {
  Signature s = allGather(4096);
  EXPECT_EQ(errorReport([&] { checkSignatures(s, {s, s}, {0, 1}, "count"); }),
            "no error");
}

TEST(Signature, FirstDifferingFieldIsNamed) {
  Signature mine = allGather(4096);
  std::vector<int64_t> world{2, 5};
  EXPECT_EQ(errorReport([&] {
              checkSignatures(mine, {mine, allGather(5000)}, world,
                              "countPerRank");
            }),
            mismatch("ranks disagree on countPerRank (group of 2): 4096 on "
                     "this rank, 5000 on world rank 5"));
  EXPECT_EQ(errorReport([&] {
              checkSignatures(mine, {mine, allGather(4096, DIST_RT_BF16)},
                              world, "count");
            }),
            mismatch("ranks disagree on dtype (group of 2): f32 on this rank, "
                     "bf16 on world rank 5"));
  Signature reduce = {int64_t(OpCode::AllReduce),
                      4096,
                      DIST_RT_F32,
                      DIST_RT_SUM,
                      0,
                      DIST_RT_OK};
  EXPECT_EQ(errorReport(
                [&] { checkSignatures(mine, {reduce, mine}, world, "count"); }),
            mismatch("ranks disagree on the operation (group of 2): "
                     "all_gather on this rank, all_reduce on world rank 2"));
  Signature max = reduce;
  max.redop = DIST_RT_MAX;
  EXPECT_EQ(errorReport([&] {
              checkSignatures(reduce, {reduce, max}, world, "count");
            }),
            mismatch("ranks disagree on reduction (group of 2): sum on this "
                     "rank, max on world rank 5"));
  Signature permute = {
      int64_t(OpCode::Permute), 8, DIST_RT_I32, -1, 42, DIST_RT_OK};
  Signature other = permute;
  other.extra = 43;
  EXPECT_EQ(errorReport([&] {
              checkSignatures(permute, {other, permute}, world, "count");
            }),
            mismatch("ranks disagree on the permute table (group of 2): this "
                     "rank's table differs from world rank 2's"));
}

TEST(Signature, AFailedMemberComesFirst) {
  Signature mine = allGather(4096);
  Signature failed = allGather(7);
  failed.failed = DIST_RT_ERR_INVALID_ARGUMENT;
  EXPECT_EQ(errorReport([&] {
              checkSignatures(mine, {mine, allGather(9), failed}, {0, 1, 3},
                              "count");
            }),
            std::to_string(DIST_RT_ERR_INVALID_ARGUMENT) +
                ": world rank 3 failed its checks of this call (status " +
                std::to_string(DIST_RT_ERR_INVALID_ARGUMENT) + ")");
}

TEST(Signature, ExchangePairs) {
  ExchangeSignature mine = {
      int64_t(OpCode::Exchange), DIST_RT_F32, 6, 4, 99, DIST_RT_OK};
  ExchangeSignature theirs = {
      int64_t(OpCode::Exchange), DIST_RT_F32, 4, 6, 99, DIST_RT_OK};
  EXPECT_EQ(errorReport([&] { checkExchangeSignature(mine, theirs, 0, 1); }),
            "no error");

  ExchangeSignature counts = theirs;
  counts.fromPeer = 5;
  EXPECT_EQ(errorReport([&] { checkExchangeSignature(mine, counts, 0, 1); }),
            mismatch("ranks 0 and 1 disagree on the exchange: rank 0 sends 6 "
                     "elements to rank 1, which expects 5; rank 1 sends 4, "
                     "rank 0 expects 4"));
  ExchangeSignature table = theirs;
  table.hash = 98;
  EXPECT_EQ(errorReport([&] { checkExchangeSignature(mine, table, 0, 1); }),
            mismatch("ranks 0 and 1 disagree on the exchange: rank 0's table "
                     "differs from rank 1's"));
  ExchangeSignature dtype = theirs;
  dtype.dtype = 77;
  EXPECT_EQ(errorReport([&] { checkExchangeSignature(mine, dtype, 2, 3); }),
            mismatch("ranks 2 and 3 disagree on the exchange: dtype f32 on "
                     "rank 2, code 77 on rank 3"));
  ExchangeSignature call = theirs;
  call.op = int64_t(OpCode::AllToAll);
  EXPECT_EQ(errorReport([&] { checkExchangeSignature(mine, call, 0, 1); }),
            mismatch("ranks 0 and 1 disagree on the exchange: world rank 1 "
                     "is in another call"));
  ExchangeSignature failed = theirs;
  failed.failed = DIST_RT_ERR_INVALID_ARGUMENT;
  EXPECT_EQ(errorReport([&] { checkExchangeSignature(mine, failed, 0, 1); }),
            std::to_string(DIST_RT_ERR_INVALID_ARGUMENT) +
                ": world rank 1 failed its checks of this exchange (status " +
                std::to_string(DIST_RT_ERR_INVALID_ARGUMENT) + ")");
}
