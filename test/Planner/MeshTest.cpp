//===- MeshTest.cpp - Mesh parsing, validation and coordinates ------------===//

#include "TestUtil.h"

using namespace dist::planner;
using namespace dist::planner::test;
using ::testing::HasSubstr;

namespace {

TEST(Mesh, ParsesAndPrintsSpecSyntax) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=4]>");
  EXPECT_EQ(m.getNumAxes(), 2u);
  EXPECT_EQ(m.getAxis(1).name, "y");
  EXPECT_EQ(m.getAxis(1).size, 4);
  EXPECT_EQ(m.getNumDevices(), 8);
  EXPECT_TRUE(m.getDevices().empty());
  EXPECT_EQ(m.str(), "<[\"x\"=2, \"y\"=4]>");

  Mesh d = mesh("<[\"x\"=2, \"y\"=2], devices = [3, 2, 1, 0]>");
  EXPECT_EQ(d.str(), "<[\"x\"=2, \"y\"=2], devices = [3, 2, 1, 0]>");
  // Angle brackets are optional and whitespace is free.
  Mesh bare = mesh("  [ \"a\" = 3 ]  ");
  EXPECT_EQ(bare.str(), "<[\"a\"=3]>");
}

TEST(Mesh, IdentityDeviceTableIsDropped) {
  Mesh m = mesh("<[\"x\"=2], devices = [0, 1]>");
  EXPECT_TRUE(m.getDevices().empty());
  EXPECT_EQ(m, mesh("<[\"x\"=2]>"));
}

TEST(Mesh, RejectsBadMeshesWithNamedCause) {
  EXPECT_THAT(errorOf(Mesh::parse("<[]>")), HasSubstr("at least one axis"));
  EXPECT_THAT(errorOf(Mesh::parse("<[\"x\"=2, \"x\"=2]>")),
              HasSubstr("\"x\" appears more than once"));
  EXPECT_THAT(errorOf(Mesh::parse("<[\"x\"=0]>")),
              HasSubstr("\"x\" has size 0"));
  EXPECT_THAT(errorOf(Mesh::parse("<[\"\"=2]>")), HasSubstr("empty"));
  // Found by fuzzing: a name that is not UTF-8 made plan JSON unreadable.
  EXPECT_THAT(errorOf(Mesh::parse("<[\"dp\xed\"=2]>")),
              HasSubstr("axis names must be valid UTF-8"));
  EXPECT_EQ(errorOf(Mesh::parse("<[\"\xce\xb1\"=2]>")), "<success>");
  EXPECT_THAT(errorOf(Mesh::parse("<[\"x\"=2], devices = [0, 0]>")),
              HasSubstr("device id 0 appears more than once"));
  EXPECT_THAT(errorOf(Mesh::parse("<[\"x\"=2], devices = [0, -2]>")),
              HasSubstr("device id -2"));
  EXPECT_THAT(errorOf(Mesh::parse("<[\"x\"=2], devices = [0]>")),
              HasSubstr("1 entries but the mesh has 2 devices"));
  EXPECT_THAT(errorOf(Mesh::parse("<[\"x\"=2]")), HasSubstr("expected '>'"));
  EXPECT_THAT(errorOf(Mesh::parse("<[\"x\"=2]> junk")),
              HasSubstr("trailing text at column"));
  EXPECT_THAT(errorOf(Mesh::parse("<[\"x\"=99999999999999999999]>")),
              HasSubstr("too large"));
  EXPECT_THAT(errorOf(Mesh::parse("<[\"a\"=1, \"b\"=1, \"c\"=1, \"d\"=1, "
                                  "\"e\"=1, \"f\"=1, \"g\"=1, \"h\"=1, "
                                  "\"i\"=1]>")),
              HasSubstr("at most 8 axes"));
  EXPECT_THAT(errorOf(Mesh::parse("<[\"a\"=65536, \"b\"=65536]>")),
              HasSubstr("more than 2^31 devices"));
}

TEST(Mesh, CoordinatesAreRowMajor) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=3]>");
  EXPECT_EQ(m.linearIndexOf({1, 2}), 5);
  EXPECT_EQ(m.linearIndexOf({0, 1}), 1);
  EXPECT_EQ(m.coordinateOf(4), (std::vector<int64_t>{1, 1}));
  for (int64_t i = 0; i < m.getNumDevices(); ++i)
    EXPECT_EQ(m.linearIndexOf(m.coordinateOf(i)), i);
}

TEST(Mesh, RanksFollowTheDeviceTable) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=2], devices = [3, 2, 1, 0]>");
  EXPECT_EQ(m.rankOf({0, 0}), 3);
  EXPECT_EQ(m.rankOf({0, 1}), 2);
  EXPECT_EQ(m.rankOf({1, 1}), 0);
  EXPECT_EQ(m.coordinateOfRank(2), (std::vector<int64_t>{0, 1}));
  for (int64_t r = 0; r < 4; ++r)
    EXPECT_EQ(m.rankOf(m.coordinateOfRank(r)), r);
  // Out-of-range queries answer "none" instead of reading out of bounds.
  EXPECT_EQ(m.rankOf({2, 0}), -1);
  EXPECT_EQ(m.rankOf({0}), -1);
  EXPECT_TRUE(m.coordinateOfRank(4).empty());
}

TEST(Mesh, DevicesAreAnyDistinctWorldRanks) {
  // A pipeline stage on ranks 4..7 (semantics §1).
  Mesh m = mesh("<[\"dp\"=2, \"tp\"=2], devices = [4, 5, 6, 7]>");
  EXPECT_EQ(m.str(), "<[\"dp\"=2, \"tp\"=2], devices = [4, 5, 6, 7]>");
  EXPECT_EQ(m.getMaxRank(), 7);
  EXPECT_EQ(m.rankOf({1, 0}), 6);
  EXPECT_EQ(m.coordinateOfRank(5), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(m.coordinateOfRank(0).empty());
  EXPECT_TRUE(m.coordinateOfRank(8).empty());
  Mesh sparse = mesh("<[\"x\"=3], devices = [9, 2, 40]>");
  EXPECT_EQ(sparse.getMaxRank(), 40);
  EXPECT_EQ(sparse.coordinateOfRank(40), (std::vector<int64_t>{2}));
  EXPECT_EQ(mesh("<[\"x\"=3]>").getMaxRank(), 2);
}

TEST(Mesh, FindsAxes) {
  Mesh m = mesh("<[\"dp\"=2, \"tp\"=4]>");
  EXPECT_EQ(m.findAxis("tp"), 1u);
  EXPECT_FALSE(m.findAxis("pp"));
}

} // namespace
