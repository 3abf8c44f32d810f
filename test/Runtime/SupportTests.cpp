//===- SupportTests.cpp - Unit tests of the runtime's pure logic ----------===//
//
// Types and half-precision conversions, mesh coordinates, group membership
// and order, permute tables, and the copy plans behind every local data
// movement (including the __host__ __device__ offset math the CUDA kernels
// run), each against an independent reference written out here.
//
//===----------------------------------------------------------------------===//

#include "ErrorCapture.h"

#include "../../lib/Runtime/CopyPlan.h"
#include "../../lib/Runtime/Exchange.h"
#include "../../lib/Runtime/Mesh.h"
#include "../../lib/Runtime/Types.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <random>
#include <vector>

using namespace dist::rt;
using dist::rt::test::errorCode;
using dist::rt::test::errorText;

namespace {

//===--------------------------------------------------------------------===//
// Types
//===--------------------------------------------------------------------===//

TEST(Types, SizesAndNames) {
  EXPECT_EQ(dtypeSize(toDType(DIST_RT_F16)), 2u);
  EXPECT_EQ(dtypeSize(toDType(DIST_RT_BF16)), 2u);
  EXPECT_EQ(dtypeSize(toDType(DIST_RT_F32)), 4u);
  EXPECT_EQ(dtypeSize(toDType(DIST_RT_F64)), 8u);
  EXPECT_EQ(dtypeSize(toDType(DIST_RT_I32)), 4u);
  EXPECT_EQ(dtypeSize(toDType(DIST_RT_I64)), 8u);
  EXPECT_EQ(dtypeSize(toDType(DIST_RT_I8)), 1u);
  EXPECT_EQ(dtypeSize(toDType(DIST_RT_I16)), 2u);
  EXPECT_EQ(dtypeSize(toDType(DIST_RT_I1)), 1u);
  EXPECT_STREQ(dtypeName(DType::BF16), "bf16");
  EXPECT_STREQ(redOpName(toRedOp(DIST_RT_AVG)), "avg");
  EXPECT_STREQ(redOpName(toRedOp(DIST_RT_MAX)), "max");
}

TEST(Types, RejectsUnknownCodes) {
  EXPECT_EQ(errorCode([] { toDType(9); }), DIST_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(errorCode([] { toDType(-1); }), DIST_RT_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(errorCode([] { toRedOp(5); }), DIST_RT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(errorText([] { toRedOp(17); }).find("unknown reduction 17"),
            std::string::npos);
}

TEST(Types, BooleanReductions) {
  for (RedOp op : {RedOp::Max, RedOp::Min, RedOp::Prod})
    EXPECT_TRUE(supportsReduction(DType::I1, op));
  for (RedOp op : {RedOp::Sum, RedOp::Avg}) {
    EXPECT_FALSE(supportsReduction(DType::I1, op));
    EXPECT_EQ(errorCode([&] { checkReduction(DType::I1, op); }),
              DIST_RT_ERR_UNSUPPORTED);
  }
  for (int t = 0; t < kNumDTypes; ++t) {
    if (static_cast<DType>(t) == DType::I1)
      continue;
    for (int op = 0; op < kNumRedOps; ++op) {
      EXPECT_TRUE(
          supportsReduction(static_cast<DType>(t), static_cast<RedOp>(op)));
    }
  }
}

#if defined(__FLT16_MAX__)
// GCC's _Float16 (software conversions on x86-64) is an independent
// reference for IEEE binary16 round-to-nearest-even.
TEST(Types, HalfMatchesFloat16Exhaustively) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    _Float16 ref;
    uint16_t bits = static_cast<uint16_t>(h);
    std::memcpy(&ref, &bits, 2);
    float f = halfBitsToFloat(bits);
    float rf = static_cast<float>(ref);
    if (std::isnan(rf)) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE(std::isnan(halfBitsToFloat(floatToHalfBits(f)))) << h;
      continue;
    }
    ASSERT_EQ(std::memcmp(&f, &rf, 4), 0) << "half " << h;
    ASSERT_EQ(floatToHalfBits(f), bits) << "round trip of half " << h;
  }
}

TEST(Types, HalfRoundingMatchesFloat16) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<uint32_t> bitsDist;
  int checked = 0;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t b = bitsDist(rng);
    // Concentrate on the binary16 range, where rounding is interesting,
    // including subnormals and the overflow boundary.
    b = (b & 0x807fffffu) | ((0x60u + (b >> 23) % 0x30u) << 23);
    float f;
    std::memcpy(&f, &b, 4);
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t refBits;
    std::memcpy(&refBits, &ref, 2);
    ASSERT_EQ(floatToHalfBits(f), refBits) << std::hexfloat << f;
    ++checked;
  }
  for (float f :
       {65504.f, 65519.f, 65520.f, 65536.f, 1e10f, -65520.f, 5.9604645e-8f,
        2.9802322e-8f, 2.9802326e-8f, 8.9406967e-8f, 6.1035156e-5f,
        6.1035152e-5f, INFINITY, -INFINITY, 0.f, -0.f}) {
    _Float16 ref = static_cast<_Float16>(f);
    uint16_t refBits;
    std::memcpy(&refBits, &ref, 2);
    EXPECT_EQ(floatToHalfBits(f), refBits) << std::hexfloat << f;
  }
  EXPECT_GT(checked, 0);
}
#endif

// bf16 is float with the low 16 bits rounded away (nearest, ties to even):
// compute it in double arithmetic with the current (nearest-even) rounding.
float referenceBf16(float f) {
  if (f == 0 || std::isinf(f))
    return f;
  int exp;
  double m = std::frexp(static_cast<double>(f), &exp); // |m| in [0.5, 1)
  double scaled = std::nearbyint(std::ldexp(m, 8));    // 8 significant bits
  return static_cast<float>(std::ldexp(scaled, exp - 8));
}

TEST(Types, Bf16RoundsToNearestEven) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  std::mt19937 rng(11);
  std::uniform_int_distribution<uint32_t> bitsDist;
  for (int i = 0; i < 2000000; ++i) {
    uint32_t b = bitsDist(rng);
    // Stay clear of the float subnormal range and overflow, where frexp-based
    // rounding would differ from bit rounding only by representation.
    b = (b & 0x807fffffu) | ((0x20u + (b >> 23) % 0xbeu) << 23);
    float f;
    std::memcpy(&f, &b, 4);
    float got = bf16BitsToFloat(floatToBf16Bits(f));
    ASSERT_EQ(got, referenceBf16(f)) << std::hexfloat << f;
  }
  // Ties go to even: 1 + 2^-8 is halfway between 1 and 1 + 2^-7.
  EXPECT_EQ(bf16BitsToFloat(floatToBf16Bits(1.00390625f)), 1.0f);
  EXPECT_EQ(bf16BitsToFloat(floatToBf16Bits(1.01171875f)), 1.015625f);
  EXPECT_TRUE(std::isnan(bf16BitsToFloat(floatToBf16Bits(NAN))));
  EXPECT_EQ(floatToBf16Bits(INFINITY), 0x7f80);
  // Every bf16 value survives a round trip.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = bf16BitsToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f))
      continue;
    ASSERT_EQ(floatToBf16Bits(f), h);
  }
}

TEST(Types, DivideTruncatesIntegersTowardZero) {
  std::vector<int32_t> v{7, -7, 8, -9, 0, 3};
  divideInPlace(v.data(), v.size(), DType::I32, 4);
  EXPECT_EQ(v, (std::vector<int32_t>{1, -1, 2, -2, 0, 0}));
  std::vector<int8_t> b{-128, 127, -3};
  divideInPlace(b.data(), b.size(), DType::I8, 8);
  EXPECT_EQ(b, (std::vector<int8_t>{-16, 15, 0}));
  std::vector<int64_t> l{int64_t(1) << 40, -5};
  divideInPlace(l.data(), l.size(), DType::I64, 2);
  EXPECT_EQ(l, (std::vector<int64_t>{int64_t(1) << 39, -2}));
  std::vector<double> d{1.0, -3.0};
  divideInPlace(d.data(), d.size(), DType::F64, 4);
  EXPECT_EQ(d, (std::vector<double>{0.25, -0.75}));
  std::vector<uint16_t> h{floatToHalfBits(3.0f), floatToBf16Bits(3.0f)};
  divideInPlace(&h[0], 1, DType::F16, 2);
  divideInPlace(&h[1], 1, DType::BF16, 2);
  EXPECT_EQ(halfBitsToFloat(h[0]), 1.5f);
  EXPECT_EQ(bf16BitsToFloat(h[1]), 1.5f);
  uint8_t flag = 1;
  EXPECT_EQ(errorCode([&] { divideInPlace(&flag, 1, DType::I1, 2); }),
            DIST_RT_ERR_UNSUPPORTED);
}

//===--------------------------------------------------------------------===//
// Meshes and groups
//===--------------------------------------------------------------------===//

MeshSpec mesh(std::vector<int64_t> sizes, std::vector<int64_t> devices = {}) {
  return MeshSpec::create(static_cast<int64_t>(sizes.size()), sizes.data(),
                          devices.empty() ? nullptr : devices.data());
}

TEST(Mesh, RowMajorCoordinates) {
  MeshSpec m = mesh({2, 3, 4});
  EXPECT_EQ(m.numDevices(), 24);
  // L(c) = c0*12 + c1*4 + c2 (semantics §1).
  EXPECT_EQ(m.linearIndex({1, 2, 3}), 23);
  EXPECT_EQ(m.linearIndex({1, 0, 2}), 14);
  EXPECT_EQ(m.coordsOfRank(14), (std::vector<int64_t>{1, 0, 2}));
  for (int64_t r = 0; r < 24; ++r)
    EXPECT_EQ(m.rankOfCoords(m.coordsOfRank(r)), r);
}

TEST(Mesh, DeviceTableMapsLinearIndexToRank) {
  // <["x"=2, "y"=2], devices = [3, 2, 1, 0]>: coordinate (0,0) is rank 3.
  MeshSpec m = mesh({2, 2}, {3, 2, 1, 0});
  EXPECT_EQ(m.rankOfCoords({0, 0}), 3);
  EXPECT_EQ(m.rankOfCoords({0, 1}), 2);
  EXPECT_EQ(m.rankOfCoords({1, 0}), 1);
  EXPECT_EQ(m.coordsOfRank(0), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(m.coordsOfRank(2), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(mesh({2, 2}, {0, 1, 2, 3}) == mesh({2, 2}));
  EXPECT_FALSE(m == mesh({2, 2}));
  EXPECT_FALSE(mesh({4}) == mesh({2, 2}));
}

TEST(Mesh, RejectsInvalidMeshes) {
  EXPECT_NE(errorText([] { mesh({}); }).find("at least one axis"),
            std::string::npos);
  EXPECT_NE(errorText([] { mesh({2, 0}); }).find("axis 1 has size 0"),
            std::string::npos);
  EXPECT_NE(errorText([] {
              mesh({2}, {0, -2});
            }).find("devices[1] = -2 is not a rank"),
            std::string::npos);
  EXPECT_NE(errorText([] {
              mesh({3}, {0, 1, 1});
            }).find("names rank 1 twice, at devices[1] and devices[2]"),
            std::string::npos);
  // Ranks the job does not have: the message says what job size is needed.
  EXPECT_EQ(errorText([] {
              std::vector<int64_t> s{2}, d{0, 7};
              MeshSpec::create(1, s.data(), d.data(), 4);
            }),
            "the mesh names rank 7 (devices[1]) but the job has only 4 ranks; "
            "run with --np 8 or more");
  EXPECT_NE(errorText([] {
              std::vector<int64_t> s{8};
              MeshSpec::create(1, s.data(), nullptr, 4);
            }).find("no device table: ranks 0..7"),
            std::string::npos);
  EXPECT_EQ(errorCode([] { mesh({1 << 20, 1 << 20}); }),
            DIST_RT_ERR_INVALID_ARGUMENT);
}

TEST(Mesh, SubsetsOfTheWorld) {
  // A pipeline stage on ranks 4..7 ordered [6, 4, 7, 5] (semantics §1).
  MeshSpec m = MeshSpec::create(2, std::vector<int64_t>{2, 2}.data(),
                                std::vector<int64_t>{6, 4, 7, 5}.data(), 8);
  EXPECT_EQ(m.numDevices(), 4);
  EXPECT_EQ(m.maxRank(), 7);
  EXPECT_EQ(permuteTableSize(m), 8);
  EXPECT_FALSE(m.coversWorld(8));
  for (int64_t r = 0; r < 4; ++r)
    EXPECT_FALSE(m.contains(r));
  EXPECT_TRUE(m.contains(5));
  EXPECT_FALSE(m.contains(8));
  EXPECT_EQ(m.coordsOfRank(7), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(m.rankOfCoords({0, 1}), 4);
  // Groups: members by world rank; a rank outside is a group of itself.
  GroupSpec g = computeGroup(m, {1}, 7);
  EXPECT_EQ(g.members, (std::vector<int64_t>{7, 5}));
  EXPECT_EQ(g.index, 0);
  GroupSpec outside = computeGroup(m, {0, 1}, 2);
  EXPECT_EQ(outside.color, -1);
  EXPECT_EQ(outside.index, 0);
  EXPECT_EQ(outside.members, (std::vector<int64_t>{2}));
  // Identity and permutation meshes still cover the world, with N-entry
  // permute tables.
  EXPECT_TRUE(mesh({2, 2}, {3, 2, 1, 0}).coversWorld(4));
  EXPECT_EQ(permuteTableSize(mesh({4})), 4);
  // The same ranks in another order are another mesh.
  EXPECT_FALSE(mesh({2}, {2, 3}) == mesh({2}, {3, 2}));
}

// Independent reference: scan every device, keep those equal to `rank`'s
// coordinate off the group axes, order by the combined index over the axes.
std::vector<int64_t> referenceMembers(const std::vector<int64_t> &sizes,
                                      const std::vector<int64_t> &devices,
                                      const std::vector<int64_t> &axes,
                                      int64_t rank) {
  int64_t n = 1;
  for (int64_t s : sizes)
    n *= s;
  auto coordsOf = [&](int64_t linear) {
    std::vector<int64_t> c(sizes.size());
    for (size_t a = sizes.size(); a-- > 0;) {
      c[a] = linear % sizes[a];
      linear /= sizes[a];
    }
    return c;
  };
  int64_t myLinear =
      std::find(devices.begin(), devices.end(), rank) - devices.begin();
  std::vector<int64_t> mine = coordsOf(myLinear);
  std::vector<std::pair<int64_t, int64_t>> found; // (group index, rank)
  for (int64_t l = 0; l < n; ++l) {
    std::vector<int64_t> c = coordsOf(l);
    bool same = true;
    for (size_t a = 0; a < sizes.size(); ++a)
      if (std::find(axes.begin(), axes.end(), (int64_t)a) == axes.end() &&
          c[a] != mine[a])
        same = false;
    if (!same)
      continue;
    int64_t idx = 0;
    for (int64_t a : axes)
      idx = idx * sizes[a] + c[a];
    found.push_back({idx, devices[l]});
  }
  std::sort(found.begin(), found.end());
  std::vector<int64_t> members;
  for (auto &f : found)
    members.push_back(f.second);
  return members;
}

TEST(Group, SpecExamples) {
  MeshSpec m = mesh({2, 4}); // ["x"=2, "y"=4]
  GroupSpec y = computeGroup(m, {1}, 5);
  EXPECT_EQ(y.members, (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_EQ(y.index, 1);
  GroupSpec x = computeGroup(m, {0}, 5);
  EXPECT_EQ(x.members, (std::vector<int64_t>{1, 5}));
  EXPECT_EQ(x.index, 1);
  // Axis order decides member order: over (y, x) the index is y*2 + x.
  GroupSpec yx = computeGroup(m, {1, 0}, 5);
  EXPECT_EQ(yx.members, (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  EXPECT_EQ(yx.index, 3);
  GroupSpec xy = computeGroup(m, {0, 1}, 5);
  EXPECT_EQ(xy.members, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(xy.index, 5);
  GroupSpec self = computeGroup(m, {}, 5);
  EXPECT_EQ(self.members, (std::vector<int64_t>{5}));
  EXPECT_EQ(self.index, 0);
}

TEST(Group, ColorsPartitionTheWorld) {
  MeshSpec m = mesh({2, 2, 2}, {6, 1, 4, 3, 2, 5, 0, 7});
  for (std::vector<int64_t> axes : std::vector<std::vector<int64_t>>{
           {}, {0}, {1}, {2}, {0, 2}, {2, 0}, {1, 2}, {2, 1, 0}}) {
    std::map<int64_t, std::vector<int64_t>> byColor;
    for (int64_t r = 0; r < 8; ++r) {
      GroupSpec g = computeGroup(m, axes, r);
      byColor[g.color].push_back(r);
      // Every member computes the same group and finds itself at its index.
      EXPECT_EQ(g.members[g.index], r);
      for (int64_t other : g.members) {
        GroupSpec h = computeGroup(m, axes, other);
        EXPECT_EQ(h.color, g.color);
        EXPECT_EQ(h.members, g.members);
      }
    }
    int64_t groupSize = 1;
    for (int64_t a : axes)
      groupSize *= m.sizes()[a];
    EXPECT_EQ((int64_t)byColor.size(), 8 / groupSize);
  }
}

TEST(Group, MatchesReferenceOnRandomMeshes) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 200; ++trial) {
    int numAxes = 1 + rng() % 4;
    std::vector<int64_t> sizes;
    int64_t n = 1;
    for (int a = 0; a < numAxes; ++a) {
      sizes.push_back(1 + rng() % 3);
      n *= sizes.back();
    }
    std::vector<int64_t> devices(n);
    std::iota(devices.begin(), devices.end(), 0);
    std::shuffle(devices.begin(), devices.end(), rng);
    std::vector<int64_t> axes(numAxes);
    std::iota(axes.begin(), axes.end(), 0);
    std::shuffle(axes.begin(), axes.end(), rng);
    axes.resize(rng() % (numAxes + 1));
    MeshSpec m = mesh(sizes, devices);
    for (int64_t r = 0; r < n; ++r) {
      GroupSpec g = computeGroup(m, axes, r);
      ASSERT_EQ(g.members, referenceMembers(sizes, devices, axes, r));
      ASSERT_EQ(g.members[g.index], r);
    }
  }
}

TEST(Group, RejectsBadAxes) {
  MeshSpec m = mesh({2, 4});
  EXPECT_NE(errorText([&] {
              computeGroup(m, {2}, 0);
            }).find("unknown mesh axis 2 (the mesh has 2 axes"),
            std::string::npos);
  EXPECT_EQ(errorCode([&] { computeGroup(m, {-1}, 0); }),
            DIST_RT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(errorText([&] { computeGroup(m, {1, 1}, 0); }).find("twice"),
            std::string::npos);
}

//===--------------------------------------------------------------------===//
// Permute tables
//===--------------------------------------------------------------------===//

struct Table {
  std::vector<int64_t> src, offsets, dests;
};

// Builds the table of "r receives from src[r]" with sends derived from it.
Table tableFrom(const std::vector<int64_t> &src, bool listSelf) {
  Table t;
  t.src = src;
  t.offsets.push_back(0);
  for (size_t s = 0; s < src.size(); ++s) {
    for (size_t r = 0; r < src.size(); ++r)
      if (src[r] == (int64_t)s && (r != s || listSelf))
        t.dests.push_back(r);
    t.offsets.push_back(t.dests.size());
  }
  return t;
}

std::string validate(const Table &t) {
  return errorText([&] {
    validatePermuteTable(t.src.size(), t.src.data(), t.offsets.data(),
                         t.dests.data());
  });
}

TEST(Permute, ValidTables) {
  // A cyclic shift, a swap with self copies, one sender to several
  // receivers (replicated blocks), and ranks that receive nothing.
  for (std::vector<int64_t> src : std::vector<std::vector<int64_t>>{
           {1, 2, 3, 0}, {1, 0, 2, 3}, {0, 0, 0, 3}, {-1, 0, -1, 2}}) {
    EXPECT_EQ(validate(tableFrom(src, false)), "");
    EXPECT_EQ(validate(tableFrom(src, true)), "");
  }
  Table t = tableFrom({0, 0, 0, 3}, false);
  PermuteRole r0 =
      permuteRole(0, t.src.data(), t.offsets.data(), t.dests.data());
  EXPECT_EQ(r0.source, 0);
  EXPECT_EQ(r0.dests, (std::vector<int64_t>{1, 2}));
  PermuteRole r2 =
      permuteRole(2, t.src.data(), t.offsets.data(), t.dests.data());
  EXPECT_EQ(r2.source, 0);
  EXPECT_TRUE(r2.dests.empty());
}

TEST(Permute, RejectsInconsistentTables) {
  Table t = tableFrom({1, 2, 3, 0}, false);
  Table bad = t;
  bad.src[2] = 0; // 3 still sends to 2
  EXPECT_NE(validate(bad).find("rank 3 sends to 2 but srcRank[2] = 0"),
            std::string::npos);
  bad = t;
  bad.src[1] = 7;
  EXPECT_NE(validate(bad).find("srcRank[1] = 7 is not a rank"),
            std::string::npos);
  bad = t;
  bad.dests[0] = 9;
  EXPECT_NE(validate(bad).find("which is not a rank"), std::string::npos);
  bad = t;
  bad.offsets[0] = 1;
  EXPECT_NE(validate(bad).find("destOffsets[0]"), std::string::npos);
  bad = t;
  std::swap(bad.offsets[1], bad.offsets[2]);
  EXPECT_NE(validate(bad).find("decreases"), std::string::npos);
  // A declared source that never sends.
  bad = tableFrom({-1, -1, -1, -1}, false);
  bad.src[3] = 0;
  EXPECT_NE(validate(bad).find("does not list 3"), std::string::npos);
  // A duplicate destination.
  bad = {{-1, 0}, {0, 2, 2}, {1, 1}};
  EXPECT_NE(validate(bad).find("twice"), std::string::npos);
  // Listing yourself requires srcRank[r] == r.
  bad = {{-1, -1}, {0, 1, 1}, {0}};
  EXPECT_NE(validate(bad).find("rank 0 sends to 0"), std::string::npos);
}

TEST(Permute, TablesOfSubsetMeshes) {
  // Mesh on ranks [3, 1]: tables have entries for ranks 0..3; 0 and 2 are
  // not devices and must stay out.
  MeshSpec m = MeshSpec::create(1, std::vector<int64_t>{2}.data(),
                                std::vector<int64_t>{3, 1}.data(), 4);
  Table swap = tableFrom({-1, 3, -1, 1}, false);
  auto check = [&](const Table &t) {
    return errorText([&] {
      validatePermuteTable(m, t.src.data(), t.offsets.data(), t.dests.data());
    });
  };
  EXPECT_EQ(check(swap), "");
  EXPECT_NE(check(tableFrom({-1, 3, 2, 1}, true))
                .find("rank 2 is not a device of the mesh but srcRank[2] = "
                      "2 (expected -1)"),
            std::string::npos);
  EXPECT_NE(check(tableFrom({-1, 2, -1, 1}, false))
                .find("rank 2 is not a "
                      "device"),
            std::string::npos);
}

//===--------------------------------------------------------------------===//
// Exchange tables
//===--------------------------------------------------------------------===//

std::string validateExchange(int64_t nd, const std::vector<int64_t> &table,
                             int64_t world) {
  return errorText([&] {
    validateExchangeTable(
        nd, static_cast<int64_t>(table.size()) / exchangeEntryWords(nd),
        table.data(), world);
  });
}

TEST(Exchange, ValidatesEveryEntry) {
  // 1-D entries: src, dst, srcOffset, dstOffset, size.
  EXPECT_EQ(validateExchange(1, {0, 1, 0, 0, 4, 1, 1, 2, 3, 0}, 2), "");
  EXPECT_EQ(validateExchange(1, {0, 2, 0, 0, 4}, 2),
            "table entry 0: dstRank = 2 is not a rank of the 2-rank job");
  EXPECT_EQ(validateExchange(1, {0, 1, 0, 0, 4, -1, 1, 0, 0, 1}, 2),
            "table entry 1: srcRank = -1 is not a rank of the 2-rank job");
  EXPECT_EQ(validateExchange(1, {0, 1, 0, -5, 4}, 2),
            "table entry 0: dstOffset[0] = -5 is negative");
  EXPECT_EQ(validateExchange(2, {0, 1, 0, 0, 0, 0, 2, -1}, 2),
            "table entry 0: size[1] = -1 is negative");
  EXPECT_NE(validateExchange(
                2, {0, 1, 0, 0, 0, 0, int64_t(1) << 40, int64_t(1) << 40}, 2)
                .find("overflows"),
            std::string::npos);
  EXPECT_NE(validateExchange(-1, {}, 2).find("numDims -1"), std::string::npos);
  EXPECT_NE(
      errorText([] { validateExchangeTable(1, 1, nullptr, 2); }).find("null"),
      std::string::npos);
  // Bounds: only the entries that name the rank, against its own shapes;
  // empty boxes never.
  std::vector<int64_t> t{0, 1, 2, 1, 3, 1, 0, 9, 9, 0};
  int64_t four = 4, three = 3;
  EXPECT_EQ(errorText([&] {
              checkExchangeBounds(1, 2, t.data(), 0, &four, nullptr);
            }),
            "table entry 0: srcOffset[0] + size[0] = 2 + 3 exceeds "
            "sendShape[0] = 4");
  EXPECT_EQ(
      errorText([&] { checkExchangeBounds(1, 2, t.data(), 1, &three, &four); }),
      "");
  EXPECT_EQ(errorText([&] {
              checkExchangeBounds(1, 2, t.data(), 1, &three, &three);
            }),
            "table entry 0: dstOffset[0] + size[0] = 1 + 3 exceeds "
            "recvShape[0] = 3");
}

TEST(Exchange, RolesGroupTransfersByPeerInTableOrder) {
  // 1-D: rank 0 sends two boxes to 2 and one to 1, keeps one, gets one from
  // 2; an empty box names rank 3; rank 4 is not named.
  std::vector<int64_t> t{
      0, 2, 0, 0, 2, //
      0, 1, 2, 0, 1, //
      2, 0, 0, 5, 3, //
      0, 0, 3, 3, 1, //
      0, 2, 4, 2, 2, //
      3, 1, 0, 0, 0, //
  };
  ExchangeRole r = exchangeRole(1, 6, t.data(), 0);
  EXPECT_TRUE(r.named);
  EXPECT_EQ(r.participants, (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_EQ(r.sends.size(), 2u);
  EXPECT_EQ(r.sends[0].rank, 1);
  EXPECT_EQ(r.sends[0].entries, (std::vector<int64_t>{1}));
  EXPECT_EQ(r.sends[1].rank, 2);
  EXPECT_EQ(r.sends[1].entries, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(r.sends[1].elements, 4);
  ASSERT_EQ(r.recvs.size(), 1u);
  EXPECT_EQ(r.recvs[0].rank, 2);
  EXPECT_EQ(r.recvs[0].elements, 3);
  EXPECT_EQ(r.local, (std::vector<int64_t>{3}));
  int64_t to = 0, from = 0;
  exchangePairCounts(r, 2, to, from);
  EXPECT_EQ(to, 4);
  EXPECT_EQ(from, 3);
  // Rank 3 is named only by an empty box: it takes part, moves nothing.
  ExchangeRole r3 = exchangeRole(1, 6, t.data(), 3);
  EXPECT_TRUE(r3.named);
  EXPECT_FALSE(r3.sendsData() || r3.receivesData());
  EXPECT_FALSE(exchangeRole(1, 6, t.data(), 4).named);
  // The hash sees every word.
  std::vector<int64_t> u = t;
  u[7] = 1;
  EXPECT_NE(hashExchangeTable(1, 6, t.data()),
            hashExchangeTable(1, 6, u.data()));
  EXPECT_EQ(hashExchangeTable(1, 6, t.data()),
            hashExchangeTable(1, 6, std::vector<int64_t>(t).data()));
}

TEST(Exchange, BoxesAndTheirCopies) {
  int64_t shape[3] = {4, 5, 6};
  EXPECT_TRUE(boxIsContiguous(3, shape, std::vector<int64_t>{2, 5, 6}.data()));
  EXPECT_TRUE(boxIsContiguous(3, shape, std::vector<int64_t>{1, 3, 6}.data()));
  EXPECT_TRUE(boxIsContiguous(3, shape, std::vector<int64_t>{1, 1, 4}.data()));
  EXPECT_FALSE(boxIsContiguous(3, shape, std::vector<int64_t>{2, 3, 6}.data()));
  EXPECT_FALSE(boxIsContiguous(3, shape, std::vector<int64_t>{1, 2, 5}.data()));
  EXPECT_EQ(rowMajorOffset(3, shape, std::vector<int64_t>{1, 2, 3}.data()),
            30 + 12 + 3);
  // Pack the box [1..3) x [2..5) x [1..4) of a 4x5x6 i32 tensor, unpack it
  // into a zeroed tensor, and copy it tensor to tensor at another offset.
  std::vector<int32_t> t(120), packed(18, -1), back(120, 0), moved(120, 0);
  std::iota(t.begin(), t.end(), 0);
  int64_t off[3] = {1, 2, 1}, size[3] = {2, 3, 3}, to[3] = {0, 0, 3};
  BoxCopy pack =
      boxPackCopy(3, shape, off, size, 4, t.data(), packed.data(), true);
  copyCpu(pack.plan, pack.src, pack.dst);
  EXPECT_EQ(packed[0], 30 + 12 + 1);
  EXPECT_EQ(packed[17], 60 + 24 + 3);
  BoxCopy unpack =
      boxPackCopy(3, shape, off, size, 4, back.data(), packed.data(), false);
  copyCpu(unpack.plan, unpack.src, unpack.dst);
  BoxCopy c =
      boxCopy(3, size, shape, off, t.data(), shape, to, moved.data(), 4);
  copyCpu(c.plan, c.src, c.dst);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 5; ++j)
      for (int64_t k = 0; k < 6; ++k) {
        const int64_t l = (i * 5 + j) * 6 + k;
        const bool inBox = i >= 1 && i < 3 && j >= 2 && k >= 1 && k < 4;
        EXPECT_EQ(back[l], inBox ? t[l] : 0) << l;
        const bool inMoved = i < 2 && j < 3 && k >= 3;
        const int64_t from = ((i + 1) * 5 + j + 2) * 6 + (k - 3 + 1);
        EXPECT_EQ(moved[l], inMoved ? t[from] : 0) << l;
      }
}

// The senders computed from two layouts (distRtPermuteByLayouts): the
// planner's rule, checked against hand-worked meshes, and a valid table on
// random ones.
TEST(Permute, TablesFromLayouts) {
  // 2x2 mesh on ranks [3, 1, 0, 2], [{"x"}, {"y"}] -> [{"y"}, {"x"}]: the
  // receiver at (a, b) wants row block b and column block a, held by the
  // device at (b, a). Ranks: (0,0)=3 (0,1)=1 (1,0)=0 (1,1)=2.
  std::vector<int64_t> sizes{2, 2}, devices{3, 1, 0, 2};
  MeshSpec m = MeshSpec::create(2, sizes.data(), devices.data());
  std::vector<int64_t> swap{1, 0, 1, 1, 1, 1, 1, 0};
  PermuteTables t = permuteTablesFromLayouts(m, 2, swap.data(), swap.size());
  // Rank 1 at (0,1) receives from (1,0) = rank 0, and vice versa; the
  // diagonal keeps its buffer.
  EXPECT_EQ(t.srcRank, (std::vector<int64_t>{1, 0, 2, 3}));
  EXPECT_EQ(validate({t.srcRank, t.destOffsets, t.destList}), "");
  // [{"x"}] -> [{"y"}] on a 1-D tensor: the receiver at (a, b) wants block
  // b, which the devices with x = b hold; it takes the one with its own y
  // (y is replicated in the source): (b, b). One sender, two receivers.
  std::vector<int64_t> move{1, 0, 1, 1};
  PermuteTables u = permuteTablesFromLayouts(m, 1, move.data(), move.size());
  // (0,0)=3 <- (0,0)=3; (0,1)=1 <- (1,1)=2; (1,0)=0 <- (0,0)=3; (1,1)=2 <-
  // (1,1)=2.
  EXPECT_EQ(u.srcRank, (std::vector<int64_t>{3, 2, 2, 3}));
  EXPECT_EQ(validate({u.srcRank, u.destOffsets, u.destList}), "");
}

TEST(Permute, LayoutsDescriptionErrors) {
  std::vector<int64_t> sizes{2, 4};
  MeshSpec m = MeshSpec::create(2, sizes.data(), nullptr);
  auto error = [&](std::vector<int64_t> d, int64_t dims) {
    return errorText(
        [&] { permuteTablesFromLayouts(m, dims, d.data(), d.size()); });
  };
  EXPECT_NE(error({1, 0, 1, 1}, 1).find("2 shards in the source but 4"),
            std::string::npos);
  EXPECT_NE(error({1, 5, 1, 0}, 1).find("axis 5 of a mesh with 2 axes"),
            std::string::npos);
  EXPECT_NE(error({1, 0, 1}, 1).find("ends inside dim 0"), std::string::npos);
  EXPECT_NE(error({1, 0, 1, 0, 7}, 1).find("1 entries left"),
            std::string::npos);
  EXPECT_NE(error({2, 0, 0, 0}, 1).find("listed twice"), std::string::npos);
  EXPECT_NE(error({}, -1).find("-1 dims"), std::string::npos);
}

TEST(Permute, HashDistinguishesTables) {
  Table a = tableFrom({1, 2, 3, 0}, false);
  Table b = tableFrom({3, 0, 1, 2}, false);
  auto h = [](const Table &t) {
    return hashPermuteTable(t.src.size(), t.src.data(), t.offsets.data(),
                            t.dests.data());
  };
  EXPECT_EQ(h(a), h(tableFrom({1, 2, 3, 0}, false)));
  EXPECT_NE(h(a), h(b));
}

//===--------------------------------------------------------------------===//
// Copy plans
//===--------------------------------------------------------------------===//

// Reference strided copy over element indices, no plan involved.
void referenceCopy(const std::vector<int64_t> &sizes, const char *src,
                   const std::vector<int64_t> &srcStrides, char *dst,
                   const std::vector<int64_t> &dstStrides, size_t elem) {
  int64_t total = 1;
  for (int64_t s : sizes)
    total *= s;
  for (int64_t linear = 0; linear < total; ++linear) {
    int64_t rest = linear, so = 0, dO = 0;
    for (size_t d = sizes.size(); d-- > 0;) {
      int64_t i = rest % sizes[d];
      rest /= sizes[d];
      so += i * srcStrides[d];
      dO += i * dstStrides[d];
    }
    std::memcpy(dst + dO * elem, src + so * elem, elem);
  }
}

std::vector<char> randomBytes(size_t n, std::mt19937 &rng) {
  std::vector<char> v(n);
  for (char &c : v)
    c = static_cast<char>(rng() & 0xff);
  return v;
}

TEST(CopyPlan, ContiguousCopyIsOneRunOf16ByteUnits) {
  alignas(16) static char a[4096], b[4096];
  int64_t sizes[2] = {8, 64};
  int64_t strides[2] = {64, 1};
  CopyPlan p = makeCopyPlan(2, sizes, strides, strides, 4, a, b);
  EXPECT_EQ(p.numDims, 1);
  EXPECT_EQ(p.unitBytes, 16);
  EXPECT_EQ(p.totalUnits, 8 * 64 * 4 / 16);
  EXPECT_EQ(p.runUnits(), p.totalUnits);
  // A misaligned base pointer narrows the unit.
  CopyPlan q = makeCopyPlan(2, sizes, strides, strides, 4, a + 4, b);
  EXPECT_EQ(q.unitBytes, 4);
  // So does an odd row length.
  int64_t oddSizes[2] = {8, 63};
  int64_t oddSrc[2] = {64, 1}, oddDst[2] = {63, 1};
  CopyPlan r = makeCopyPlan(2, oddSizes, oddSrc, oddDst, 4, a, b);
  EXPECT_EQ(r.numDims, 2);
  EXPECT_EQ(r.unitBytes, 4);
  EXPECT_EQ(r.runUnits(), 63);
}

TEST(CopyPlan, DropsUnitDimsAndMerges) {
  alignas(16) static char a[1 << 16], b[1 << 16];
  // [1, 4, 1, 8, 16] slice of a [1, 4, 1, 8, 32] tensor: rows of 16 elements.
  int64_t sizes[5] = {1, 4, 1, 8, 16};
  int64_t src[5] = {1024, 256, 256, 32, 1};
  int64_t dst[5] = {512, 128, 128, 16, 1};
  CopyPlan p = makeCopyPlan(5, sizes, src, dst, 2, a, b);
  EXPECT_EQ(p.numDims, 2);
  EXPECT_EQ(p.sizes[0], 32); // 4*8 rows merged (strides agree on both sides)
  EXPECT_EQ(p.unitBytes, 16);
  EXPECT_EQ(p.runUnits(), 2); // 16 f16 = 32 bytes = 2 units
  EXPECT_EQ(p.srcStrides[0], 4);
  EXPECT_EQ(p.dstStrides[0], 2);
}

TEST(CopyPlan, EmptyAndScalarCopies) {
  char a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {};
  int64_t sizes[2] = {3, 0};
  int64_t strides[2] = {1, 1};
  EXPECT_TRUE(makeCopyPlan(2, sizes, strides, strides, 4, a, b).empty());
  CopyPlan scalar = makeCopyPlan(0, nullptr, nullptr, nullptr, 8, a, b);
  ASSERT_FALSE(scalar.empty());
  copyCpu(scalar, a, b);
  EXPECT_EQ(std::memcmp(a, b, 8), 0);
}

TEST(CopyPlan, RejectsBadDescriptors) {
  char a[64] = {}, b[64] = {};
  int64_t sizes[2] = {2, 2};
  int64_t good[2] = {2, 1};
  int64_t negative[2] = {-2, 1};
  int64_t zeroDst[2] = {0, 1};
  EXPECT_EQ(errorCode([&] { makeCopyPlan(2, sizes, negative, good, 4, a, b); }),
            DIST_RT_ERR_INVALID_ARGUMENT);
  EXPECT_NE(errorText([&] {
              makeCopyPlan(2, sizes, good, zeroDst, 4, a, b);
            }).find("destination stride of dim 0 is 0"),
            std::string::npos);
  EXPECT_EQ(errorCode([&] {
              makeCopyPlan(DIST_RT_MAX_COPY_DIMS + 1, sizes, good, good, 4, a,
                           b);
            }),
            DIST_RT_ERR_INVALID_ARGUMENT);
  int64_t huge[2] = {int64_t(1) << 40, int64_t(1) << 40};
  EXPECT_EQ(errorCode([&] { makeCopyPlan(2, huge, good, good, 4, a, b); }),
            DIST_RT_ERR_INVALID_ARGUMENT);
  int64_t shape[2] = {6, 4};
  EXPECT_NE(errorText([&] {
              makePackPlan(2, shape, 0, 4, 4, a, b, false);
            }).find("does not split into 4"),
            std::string::npos);
  EXPECT_EQ(errorCode([&] { makePackPlan(2, shape, 2, 2, 4, a, b, false); }),
            DIST_RT_ERR_INVALID_ARGUMENT);
}

TEST(CopyPlan, RandomStridedCopiesMatchReference) {
  std::mt19937 rng(5);
  for (int trial = 0; trial < 400; ++trial) {
    int nd = 1 + rng() % 5;
    size_t elem = size_t(1) << (rng() % 4); // 1, 2, 4, 8 bytes
    std::vector<int64_t> sizes(nd), perm(nd);
    for (int d = 0; d < nd; ++d)
      sizes[d] = 1 + rng() % 6;
    // Source: a padded row-major tensor (slices); destination: a transposed
    // contiguous layout, so both sides have non-trivial strides.
    std::vector<int64_t> padded(nd), srcStrides(nd), dstStrides(nd);
    for (int d = 0; d < nd; ++d)
      padded[d] = sizes[d] + rng() % 3;
    int64_t s = 1;
    for (int d = nd - 1; d >= 0; --d) {
      srcStrides[d] = s;
      s *= padded[d];
    }
    std::iota(perm.begin(), perm.end(), 0);
    if (rng() % 2)
      std::shuffle(perm.begin(), perm.end(), rng);
    int64_t t = 1;
    for (int k = nd - 1; k >= 0; --k) {
      dstStrides[perm[k]] = t;
      t *= sizes[perm[k]];
    }
    int64_t srcOffset = rng() % 3;
    std::vector<char> src = randomBytes((s + srcOffset) * elem, rng);
    std::vector<char> dst(t * elem), ref(t * elem);
    const char *srcBase = src.data() + srcOffset * elem;
    referenceCopy(sizes, srcBase, srcStrides, ref.data(), dstStrides, elem);
    CopyPlan plan = makeCopyPlan(nd, sizes.data(), srcStrides.data(),
                                 dstStrides.data(), elem, srcBase, dst.data());
    copyCpu(plan, srcBase, dst.data());
    ASSERT_EQ(dst, ref) << "trial " << trial;
    // The kernels' per-unit offsets visit exactly the same bytes.
    std::vector<char> viaOffsets(t * elem);
    for (int64_t u = 0; u < plan.totalUnits; ++u) {
      int64_t so, dO;
      planUnitOffsets(plan, u, so, dO);
      std::memcpy(viaOffsets.data() + dO * plan.unitBytes,
                  srcBase + so * plan.unitBytes, plan.unitBytes);
    }
    ASSERT_EQ(viaOffsets, ref) << "trial " << trial;
  }
}

// Reference pack: dst[j][o][i][k] = src[o][j*c + i][k].
std::vector<char> referencePack(const std::vector<int64_t> &shape, int dim,
                                int64_t parts, const std::vector<char> &src,
                                size_t elem, bool unpack) {
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d)
    outer *= shape[d];
  for (size_t d = dim + 1; d < shape.size(); ++d)
    inner *= shape[d];
  int64_t c = shape[dim] / parts;
  std::vector<char> out(src.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < parts; ++j)
      for (int64_t i = 0; i < c; ++i)
        for (int64_t k = 0; k < inner; ++k) {
          int64_t u = ((o * parts + j) * c + i) * inner + k;
          int64_t p = ((j * outer + o) * c + i) * inner + k;
          if (unpack)
            std::memcpy(&out[u * elem], &src[p * elem], elem);
          else
            std::memcpy(&out[p * elem], &src[u * elem], elem);
        }
  return out;
}

TEST(CopyPlan, PackAndUnpackOnEveryDim) {
  std::mt19937 rng(9);
  for (int trial = 0; trial < 300; ++trial) {
    int nd = 1 + rng() % 4;
    int dim = rng() % nd;
    int64_t parts = 1 + rng() % 4;
    size_t elem = size_t(1) << (rng() % 4);
    std::vector<int64_t> shape(nd);
    int64_t n = 1;
    for (int d = 0; d < nd; ++d) {
      shape[d] = (d == dim ? parts * (1 + rng() % 4) : 1 + rng() % 5);
      n *= shape[d];
    }
    std::vector<char> src = randomBytes(n * elem, rng);
    for (bool unpack : {false, true}) {
      std::vector<char> dst(n * elem);
      CopyPlan plan = makePackPlan(nd, shape.data(), dim, parts, elem,
                                   src.data(), dst.data(), unpack);
      copyCpu(plan, src.data(), dst.data());
      ASSERT_EQ(dst, referencePack(shape, dim, parts, src, elem, unpack))
          << "trial " << trial << " unpack " << unpack;
      // Unpacking the packed data gives the original back.
      if (!unpack) {
        std::vector<char> back(n * elem);
        CopyPlan inv = makePackPlan(nd, shape.data(), dim, parts, elem,
                                    dst.data(), back.data(), true);
        copyCpu(inv, dst.data(), back.data());
        ASSERT_EQ(back, src);
      }
    }
  }
}

TEST(CopyPlan, PackOnLeadingDimIsContiguous) {
  alignas(16) static float a[8 * 12], b[8 * 12];
  int64_t shape[2] = {8, 12};
  CopyPlan p = makePackPlan(2, shape, 0, 4, 4, a, b, false);
  // Chunks of whole rows are already contiguous: one run, 16-byte units.
  EXPECT_EQ(p.numDims, 1);
  EXPECT_EQ(p.unitBytes, 16);
  // On the last dim it is a [rows, parts, c] -> [parts, rows, c] transpose.
  CopyPlan q = makePackPlan(2, shape, 1, 4, 4, a, b, false);
  EXPECT_EQ(q.numDims, 3);
  EXPECT_EQ(q.runUnits() * q.unitBytes, 3 * 4);
}

TEST(CopyPlan, FillZeroTouchesOnlyTheBox) {
  std::vector<int32_t> buf(6 * 5, 7);
  // Zero the padding rows 4..5 and column 4 of a 6x5 buffer holding 4x4 data.
  int64_t rowsSizes[2] = {2, 5}, rowsStrides[2] = {5, 1};
  CopyPlan rows =
      makeCopyPlan(2, rowsSizes, nullptr, rowsStrides, 4, nullptr, &buf[20]);
  EXPECT_EQ(rows.numDims, 1); // two whole rows are one run
  fillZeroCpu(rows, &buf[20]);
  int64_t colSizes[1] = {4}, colStrides[1] = {5};
  CopyPlan col =
      makeCopyPlan(1, colSizes, nullptr, colStrides, 4, nullptr, &buf[4]);
  fillZeroCpu(col, &buf[4]);
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 5; ++c)
      EXPECT_EQ(buf[r * 5 + c], (r >= 4 || c == 4) ? 0 : 7) << r << "," << c;
}

TEST(CopyPlan, ExtentOfAStridedBox) {
  int64_t sizes[2] = {3, 4}, strides[2] = {10, 2};
  ByteExtent e = stridedExtent(2, sizes, strides, 4);
  EXPECT_EQ(e.first, 0);
  EXPECT_EQ(e.last, (2 * 10 + 3 * 2 + 1) * 4);
  int64_t empty[2] = {3, 0};
  EXPECT_EQ(stridedExtent(2, empty, strides, 4).last, 0);
}

//===--------------------------------------------------------------------===//
// The GPU kernels' 32-bit index math, checked on the CPU
//===--------------------------------------------------------------------===//

TEST(FastDivmod, MatchesDivision) {
  std::mt19937 rng(13);
  std::vector<uint32_t> divisors{1,     2,     3,     5,           7,
                                 10,    255,   256,   257,         641,
                                 65535, 65536, 65537, 1000000007u, 0x7fffffffu};
  for (int i = 0; i < 200; ++i)
    divisors.push_back(1 + rng() % 0x7fffffffu);
  for (uint32_t d : divisors) {
    FastDivmod f(d);
    std::vector<uint32_t> ns{0,     1,           d - 1,          d,
                             d + 1, 0x7fffffffu, 0x7fffffffu - 1};
    for (int i = 0; i < 2000; ++i)
      ns.push_back(rng() % 0x80000000u);
    for (uint32_t n : ns) {
      if (n > 0x7fffffffu)
        continue;
      uint32_t q, r;
      f.divmod(n, q, r);
      ASSERT_EQ(q, n / d) << n << " / " << d;
      ASSERT_EQ(r, n % d) << n << " % " << d;
    }
  }
}

TEST(CopyPlan32, OffsetsMatchThe64BitPlan) {
  std::mt19937 rng(17);
  for (int trial = 0; trial < 100; ++trial) {
    int nd = 1 + rng() % 4;
    std::vector<int64_t> shape(nd);
    for (int d = 0; d < nd; ++d)
      shape[d] = 1 + rng() % 9;
    int dim = rng() % nd;
    shape[dim] *= 3;
    CopyPlan plan =
        makePackPlan(nd, shape.data(), dim, 3, 2, nullptr, nullptr, rng() % 2);
    ASSERT_TRUE(fitsIn32Bits(plan));
    CopyPlan32 p32 = toPlan32(plan);
    for (int64_t u = 0; u < plan.totalUnits; ++u) {
      int64_t so, dO;
      uint32_t so32, dO32;
      planUnitOffsets(plan, u, so, dO);
      plan32UnitOffsets(p32, static_cast<uint32_t>(u), so32, dO32);
      ASSERT_EQ(so, so32);
      ASSERT_EQ(dO, dO32);
    }
    // Row offsets are the unit offsets of each row's first unit.
    for (int64_t row = 0; row < plan.numRows(); ++row) {
      int64_t so, dO, su, du;
      planRowOffsets(plan, row, so, dO);
      planUnitOffsets(plan, row * plan.runUnits(), su, du);
      ASSERT_EQ(so, su);
      ASSERT_EQ(dO, du);
    }
  }
  CopyPlan big;
  big.numDims = 1;
  big.sizes[0] = big.totalUnits = int64_t(1) << 31;
  big.srcStrides[0] = big.dstStrides[0] = 1;
  EXPECT_FALSE(fitsIn32Bits(big));
}

} // namespace
