//===- LayoutTest.cpp - layout syntax and block semantics -----------------===//

#include "TestUtil.h"

using namespace dist::planner;
using namespace dist::planner::test;
using ::testing::HasSubstr;

namespace {

TEST(Layout, RoundTripsSpecSyntax) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=2, \"z\"=2, \"w\"=2]>");
  for (const char *text :
       {"[{\"x\"}, {\"y\", \"z\"}, {}]", "[{}, {\"y\", \"x\"}]", "[]",
        "[{\"x\"}, {}], partial = sum {\"y\"}",
        "[{}], partial = max {\"x\", \"w\"}",
        "[{\"z\"}], partial = avg {\"y\"}"}) {
    Layout l = layout(m, text);
    EXPECT_EQ(printLayout(m, l), text);
    EXPECT_EQ(layout(m, printLayout(m, l)), l);
  }
}

TEST(Layout, PartialAxesAreCanonicallySorted) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=2]>");
  Layout l = layout(m, "[{}], partial = prod {\"y\", \"x\"}");
  EXPECT_EQ(l.partialAxes, (AxisList{0, 1}));
  EXPECT_EQ(printLayout(m, l), "[{}], partial = prod {\"x\", \"y\"}");
}

TEST(Layout, EqualityIgnoresKindWithoutPartialAxes) {
  Layout a = Layout::replicated(2), b = Layout::replicated(2);
  b.partialKind = ReductionKind::Max;
  EXPECT_EQ(a, b);
  a.partialAxes = {0};
  b.partialAxes = {0};
  EXPECT_NE(a, b);
  b.partialKind = ReductionKind::Sum;
  EXPECT_EQ(a, b);
}

TEST(Layout, Helpers) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=3, \"z\"=4]>");
  Layout l = layout(m, "[{\"z\", \"x\"}, {}], partial = sum {\"y\"}");
  EXPECT_EQ(l.dimOf(0), 0u);
  EXPECT_FALSE(l.dimOf(1));
  EXPECT_TRUE(l.isPartial(1));
  EXPECT_FALSE(l.isReplicated(1));
  EXPECT_EQ(l.shardCount(m, 0), 8);
  EXPECT_EQ(l.shardCount(m, 1), 1);
  Layout r = layout(m, "[{\"x\"}, {}]");
  EXPECT_TRUE(r.isReplicated(1));
  EXPECT_TRUE(r.isReplicated(2));
}

TEST(Layout, ParseErrorsNameTheProblem) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=2]>");
  EXPECT_THAT(errorOf(parseLayout(m, "[{\"q\"}]")),
              HasSubstr("\"q\" is not an axis of mesh"));
  EXPECT_THAT(errorOf(parseLayout(m, "[{\"x\"}, {\"x\"}]")),
              HasSubstr("\"x\" appears more than once in the layout (dim 0 "
                        "and dim 1)"));
  EXPECT_THAT(errorOf(parseLayout(m, "[{\"x\"}], partial = sum {\"x\"}")),
              HasSubstr("(dim 0 and partial)"));
  EXPECT_THAT(errorOf(parseLayout(m, "[{\"x\"}], partial = mean {\"y\"}")),
              HasSubstr("unknown reduction kind 'mean'"));
  EXPECT_THAT(errorOf(parseLayout(m, "[{\"x\"}], partial = sum {}")),
              HasSubstr("at least one axis"));
  EXPECT_THAT(errorOf(parseLayout(m, "[{\"x\"}")), HasSubstr("expected ']'"));
  EXPECT_THAT(errorOf(parseLayout(m, "[{x}]")),
              HasSubstr("expected a quoted axis name at column 3"));
  EXPECT_THAT(errorOf(parseLayout(m, "[{\"x}]")),
              HasSubstr("unterminated string"));
  EXPECT_THAT(errorOf(parseLayout(m, "[{\"x\"}], foo = 1")),
              HasSubstr("expected 'partial'"));
}

TEST(Layout, VerifyChecksRangeDuplicatesAndRank) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=2]>");
  Layout l;
  l.dimAxes = {{0}, {5}};
  EXPECT_THAT(errorOf(verifyLayout(m, l, 2)),
              HasSubstr("mesh axis #5 but the mesh has 2 axes"));
  l.dimAxes = {{0}, {1}};
  EXPECT_THAT(errorOf(verifyLayout(m, l, 3)),
              HasSubstr("layout has 2 dims but the tensor has rank 3"));
  l.partialAxes = {1};
  EXPECT_THAT(errorOf(verifyLayout(m, l, 2)),
              HasSubstr("\"y\" appears more than once"));
  l.partialAxes = {};
  EXPECT_EQ(errorOf(verifyLayout(m, l, 2)), "<success>");
}

TEST(Layout, LocalShapeIsCeilOfEachDim) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=3]>");
  Layout l = layout(m, "[{\"x\", \"y\"}, {}]");
  EXPECT_EQ(localShape(m, l, {10, 7}), (std::vector<int64_t>{2, 7}));
  EXPECT_EQ(localShape(m, l, {13, 7}), (std::vector<int64_t>{3, 7}));
  EXPECT_EQ(localBytes(m, l, {13, 7}, 4), 3 * 7 * 4);
  Layout r = layout(m, "[{}, {\"y\"}]");
  EXPECT_EQ(localShape(m, r, {5, 7}), (std::vector<int64_t>{5, 3}));
}

TEST(Layout, DeviceBlocksFollowShardIndices) {
  // dim 0 split by x (major) then y (minor): s = 3 * c_x + c_y, B = 2.
  Mesh m = mesh("<[\"x\"=2, \"y\"=3]>");
  Layout l = layout(m, "[{\"x\", \"y\"}, {}]");
  EXPECT_EQ(shardIndex(m, l, 0, {1, 2}), 5);
  EXPECT_EQ(shardIndex(m, l, 1, {1, 2}), 0);
  std::vector<DimRange> block = deviceBlock(m, l, {12, 5}, {1, 0});
  EXPECT_EQ(block[0], (DimRange{6, 8}));
  EXPECT_EQ(block[1], (DimRange{0, 5}));
  // Minor-major order matters: y major, x minor gives s = 2 * c_y + c_x.
  Layout swapped = layout(m, "[{\"y\", \"x\"}, {}]");
  EXPECT_EQ(deviceBlock(m, swapped, {12, 5}, {1, 0})[0], (DimRange{2, 4}));
}

TEST(Layout, UnevenBlocksAreClippedAndMayBeEmpty) {
  // N = 5 over 4 shards: B = 2, blocks [0,2) [2,4) [4,5) [5,5).
  Mesh m = mesh("<[\"x\"=4]>");
  Layout l = layout(m, "[{\"x\"}]");
  std::vector<DimRange> expected = {{0, 2}, {2, 4}, {4, 5}, {5, 5}};
  for (int64_t c = 0; c < 4; ++c)
    EXPECT_EQ(deviceBlock(m, l, {5}, {c})[0], expected[c]) << "c=" << c;
  EXPECT_EQ(localShape(m, l, {5}), (std::vector<int64_t>{2}));
  // N = 1 over 4: only the first device holds data; B = 1.
  EXPECT_EQ(deviceBlock(m, l, {1}, {3})[0], (DimRange{1, 1}));
  EXPECT_EQ(deviceBlock(m, l, {1}, {0})[0], (DimRange{0, 1}));
}

TEST(Layout, BlocksOfDeviceIdsGoThroughTheTable) {
  // Device ids reversed: rank 0 sits at coordinate (1, 1).
  Mesh m = mesh("<[\"x\"=2, \"y\"=2], devices = [3, 2, 1, 0]>");
  Layout l = layout(m, "[{\"x\"}, {\"y\"}]");
  std::vector<DimRange> block =
      deviceBlock(m, l, {4, 6}, m.coordinateOfRank(0));
  EXPECT_EQ(block[0], (DimRange{2, 4}));
  EXPECT_EQ(block[1], (DimRange{3, 6}));
  block = deviceBlock(m, l, {4, 6}, m.coordinateOfRank(2));
  EXPECT_EQ(block[0], (DimRange{0, 2}));
  EXPECT_EQ(block[1], (DimRange{3, 6}));
}

TEST(Layout, VerifyShape) {
  EXPECT_EQ(errorOf(verifyShape({4, 0, 3}, 4)), "<success>");
  EXPECT_THAT(errorOf(verifyShape({4, -1})), HasSubstr("dim 1 has negative"));
  EXPECT_THAT(errorOf(verifyShape({int64_t(1) << 40, int64_t(1) << 30})),
              HasSubstr("too large: the planner takes at most 2^53 bytes"));
  // The limit, not 64 bits, decides; a zero extent does not hide a
  // huge dim; the element size counts.
  EXPECT_EQ(errorOf(verifyShape({kMaxTensorBytes})), "<success>");
  EXPECT_EQ(errorOf(verifyShape({kMaxTensorBytes / 8}, 8)), "<success>");
  EXPECT_THAT(errorOf(verifyShape({kMaxTensorBytes + 1})),
              HasSubstr("too large"));
  EXPECT_THAT(errorOf(verifyShape({kMaxTensorBytes / 8 + 1}, 8)),
              HasSubstr("too large"));
  EXPECT_THAT(errorOf(verifyShape({0, INT64_MAX})), HasSubstr("too large"));
  EXPECT_THAT(errorOf(verifyShape({INT64_MAX, INT64_MAX, 0})),
              HasSubstr("too large"));
  EXPECT_THAT(errorOf(verifyShape({2}, INT64_MAX)), HasSubstr("too large"));
}

} // namespace
