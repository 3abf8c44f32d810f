//===- MoveTest.cpp - Preconditions and effects of every move -------------===//

#include "TestUtil.h"

#include <set>

#include "dist/Planner/CostModel.h"
#include "dist/Planner/Move.h"

using namespace dist::planner;
using namespace dist::planner::test;
using ::testing::HasSubstr;

namespace {

class MoveTest : public ::testing::Test {
protected:
  Mesh m = mesh("<[\"x\"=2, \"y\"=4, \"z\"=2]>");
  static constexpr unsigned X = 0, Y = 1, Z = 2;

  /// Applies and prints the result, or returns the error message.
  std::string apply(llvm::StringRef src, const Move &move) {
    Layout l = layout(m, src);
    llvm::Expected<Layout> r = applyMove(m, l, move, l.getRank());
    if (!r)
      return llvm::toString(r.takeError());
    return printLayout(m, *r);
  }
  std::string applyShaped(llvm::StringRef src, const Move &move,
                          std::vector<int64_t> shape) {
    Layout l = layout(m, src);
    llvm::Expected<Layout> r = applyMove(m, l, move, shape);
    if (!r)
      return llvm::toString(r.takeError());
    return printLayout(m, *r);
  }
};

TEST_F(MoveTest, Names) {
  EXPECT_EQ(stringifyMoveKind(MoveKind::ReplicateToPartial),
            "replicate_to_partial");
  EXPECT_EQ(parseMoveKind("all_to_all"), MoveKind::AllToAll);
  EXPECT_FALSE(parseMoveKind("gather"));
  EXPECT_TRUE(isLocalMove(MoveKind::AllSlice));
  EXPECT_FALSE(isLocalMove(MoveKind::Permute));
}

TEST_F(MoveTest, AllGatherRemovesMinorMostAxes) {
  EXPECT_EQ(apply("[{\"x\", \"y\"}]", Move::allGather({Y}, 0)), "[{\"x\"}]");
  EXPECT_EQ(apply("[{\"x\", \"y\"}]", Move::allGather({X, Y}, 0)), "[{}]");
  EXPECT_EQ(apply("[{\"x\", \"y\"}]", Move::allGather({X}, 0)),
            "all_gather: axis \"x\" is not the minor-most axis of dim 0 (dim "
            "0 is split by {\"x\", \"y\"})");
  EXPECT_EQ(apply("[{\"x\"}, {}]", Move::allGather({X}, 1)),
            "all_gather: axis \"x\" does not split dim 1");
  EXPECT_THAT(apply("[{\"x\", \"y\"}]", Move::allGather({Y, X}, 0)),
              HasSubstr("axes {\"y\", \"x\"} are not the minor-most axes of "
                        "dim 0 in that order"));
  EXPECT_THAT(apply("[{\"x\"}]", Move::allGather({X}, 3)),
              HasSubstr("dim 3 is out of range for a tensor of rank 1"));
  EXPECT_THAT(apply("[{\"x\"}]", Move::allGather({}, 0)),
              HasSubstr("names no mesh axis"));
  EXPECT_THAT(apply("[{\"x\"}]", Move::allGather({7}, 0)),
              HasSubstr("mesh axis #7 does not exist"));
  EXPECT_THAT(apply("[{\"x\"}]", Move::allGather({X, X}, 0)),
              HasSubstr("listed twice"));
}

TEST_F(MoveTest, AllSliceAppendsReplicatedAxes) {
  EXPECT_EQ(apply("[{\"x\"}, {}]", Move::allSlice({Z, Y}, 0)),
            "[{\"x\", \"z\", \"y\"}, {}]");
  EXPECT_EQ(apply("[{\"x\"}, {}]", Move::allSlice({X}, 1)),
            "all_slice: axis \"x\" already splits dim 0");
  EXPECT_EQ(apply("[{}], partial = sum {\"y\"}", Move::allSlice({Y}, 0)),
            "all_slice: axis \"y\" is partial, not replicated");
}

TEST_F(MoveTest, AllToAllMovesTheSuffix) {
  EXPECT_EQ(apply("[{\"x\"}, {\"y\"}]", Move::allToAll({X}, 0, 1)),
            "[{}, {\"y\", \"x\"}]");
  EXPECT_EQ(apply("[{\"x\", \"y\"}, {\"z\"}]", Move::allToAll({X, Y}, 0, 1)),
            "[{}, {\"z\", \"x\", \"y\"}]");
  EXPECT_EQ(apply("[{\"x\"}, {}]", Move::allToAll({X}, 0, 0)),
            "all_to_all: dim and to_dim are both 0; an all_to_all must move "
            "axes to another dim");
  EXPECT_THAT(apply("[{\"x\"}, {}]", Move::allToAll({X}, 0, 2)),
              HasSubstr("to_dim 2 is out of range"));
  EXPECT_EQ(apply("[{\"x\", \"y\"}, {}]", Move::allToAll({X}, 0, 1)),
            "all_to_all: axis \"x\" is not the minor-most axis of dim 0 (dim 0 "
            "is split by {\"x\", \"y\"})");
}

TEST_F(MoveTest, ReduceScatterNeedsPartialAxesOfTheSameKind) {
  EXPECT_EQ(apply("[{\"x\"}, {}], partial = sum {\"y\", \"z\"}",
                  Move::reduceScatter({Z}, 1, ReductionKind::Sum)),
            "[{\"x\"}, {\"z\"}], partial = sum {\"y\"}");
  EXPECT_EQ(apply("[{}, {}], partial = max {\"y\", \"z\"}",
                  Move::reduceScatter({Z, Y}, 0, ReductionKind::Max)),
            "[{\"z\", \"y\"}, {}]");
  EXPECT_EQ(apply("[{}], partial = sum {\"y\"}",
                  Move::reduceScatter({X}, 0, ReductionKind::Sum)),
            "reduce_scatter: axis \"x\" is not partial");
  EXPECT_EQ(apply("[{}], partial = sum {\"y\"}",
                  Move::reduceScatter({Y}, 0, ReductionKind::Max)),
            "reduce_scatter: reduction max does not match the operand's "
            "partial kind sum");
}

TEST_F(MoveTest, AllReduceMakesPartialAxesReplicated) {
  EXPECT_EQ(apply("[{}], partial = avg {\"x\", \"y\"}",
                  Move::allReduce({Y}, ReductionKind::Avg)),
            "[{}], partial = avg {\"x\"}");
  EXPECT_EQ(apply("[{}], partial = avg {\"x\", \"y\"}",
                  Move::allReduce({Y, X}, ReductionKind::Avg)),
            "[{}]");
  EXPECT_EQ(apply("[{}], partial = min {\"x\"}",
                  Move::allReduce({X}, ReductionKind::Sum)),
            "all_reduce: reduction sum does not match the operand's partial "
            "kind min");
  EXPECT_EQ(apply("[{\"x\"}]", Move::allReduce({X}, ReductionKind::Sum)),
            "all_reduce: axis \"x\" is not partial");
}

TEST_F(MoveTest, ReplicateToPartial) {
  EXPECT_EQ(
      apply("[{\"x\"}]", Move::replicateToPartial({Z, Y}, ReductionKind::Prod)),
      "[{\"x\"}], partial = prod {\"y\", \"z\"}");
  EXPECT_EQ(apply("[{}], partial = max {\"x\"}",
                  Move::replicateToPartial({Y}, ReductionKind::Max)),
            "[{}], partial = max {\"x\", \"y\"}");
  EXPECT_EQ(apply("[{}], partial = max {\"x\"}",
                  Move::replicateToPartial({Y}, ReductionKind::Sum)),
            "replicate_to_partial: reduction sum does not match the existing "
            "partial kind max of the operand");
  EXPECT_EQ(
      apply("[{\"y\"}]", Move::replicateToPartial({Y}, ReductionKind::Sum)),
      "replicate_to_partial: axis \"y\" already splits dim 0");
}

TEST_F(MoveTest, PermuteKeepsShardCounts) {
  Layout src = layout(m, "[{\"x\", \"z\"}, {\"y\"}]");
  Layout dst = layout(m, "[{\"z\", \"x\"}, {\"y\"}]");
  Move p = Move::permute(m, src, dst);
  EXPECT_EQ(p.axes, (AxisList{X, Z}));
  EXPECT_EQ(apply("[{\"x\", \"z\"}, {\"y\"}]", p), "[{\"z\", \"x\"}, {\"y\"}]");

  // A mismatched axes list is rejected with the right one named.
  Move wrong = p;
  wrong.axes = {X};
  EXPECT_EQ(apply("[{\"x\", \"z\"}, {\"y\"}]", wrong),
            "permute: axes {\"x\"} are not the axes whose coordinate changes "
            "between sender and receiver, which are {\"x\", \"z\"}");

  Move bad = Move::permute(m, src, layout(m, "[{\"y\"}, {\"x\", \"z\"}]"));
  // Shard counts (4, 4) vs (4, 4) match here: y has size 4.
  EXPECT_EQ(apply("[{\"x\", \"z\"}, {\"y\"}]", bad),
            "[{\"y\"}, {\"x\", \"z\"}]");
  Move counts = Move::permute(m, src, layout(m, "[{\"y\"}, {\"x\"}]"));
  EXPECT_EQ(apply("[{\"x\", \"z\"}, {\"y\"}]", counts),
            "permute: dim 1 has 4 shards in the operand but 2 in the target; "
            "a permute keeps every dim's shard count");
  Move same = Move::permute(m, src, src);
  EXPECT_EQ(apply("[{\"x\", \"z\"}, {\"y\"}]", same),
            "permute: the target layout equals the operand layout");
  Layout ps = layout(m, "[{\"x\"}], partial = sum {\"z\"}");
  Move partial =
      Move::permute(m, ps, layout(m, "[{\"z\"}], partial = sum {\"x\"}"));
  EXPECT_THAT(apply("[{\"x\"}], partial = sum {\"z\"}", partial),
              HasSubstr("partial axes {\"z\"} of the operand differ"));
  Move kind =
      Move::permute(m, ps, layout(m, "[{\"x\"}], partial = max {\"z\"}"));
  EXPECT_THAT(apply("[{\"x\"}], partial = sum {\"z\"}", kind),
              HasSubstr("partial kind max differs"));
}

TEST_F(MoveTest, PermuteAxesAreThoseThatChangeCoordinate) {
  // Swapping which of two equal-size axes splits a dim: x -> z on dim 0.
  Layout a = layout(m, "[{\"x\"}, {}]");
  Layout b = layout(m, "[{\"z\"}, {}]");
  EXPECT_EQ(permuteAxes(m, a, b), (AxisList{X}));
  // Same axis, same dim, same stride: untouched.
  Layout c = layout(m, "[{\"x\", \"y\"}, {\"z\"}]");
  Layout d = layout(m, "[{\"z\", \"y\"}, {\"x\"}]");
  EXPECT_EQ(permuteAxes(m, c, d), (AxisList{X, Z}));
}

TEST_F(MoveTest, PermuteSenderHoldsTheReceiversBlock) {
  Layout src = layout(m, "[{\"x\", \"z\"}, {\"y\"}]");
  Layout dst = layout(m, "[{\"y\"}, {\"z\", \"x\"}]");
  std::vector<int64_t> shape = {8, 12};
  for (int64_t i = 0; i < m.getNumDevices(); ++i) {
    std::vector<int64_t> receiver = m.coordinateOf(i);
    std::vector<int64_t> sender = permuteSender(m, src, dst, receiver);
    EXPECT_EQ(deviceBlock(m, src, shape, sender),
              deviceBlock(m, dst, shape, receiver));
  }
}

// The planner and the dialect share one rule for empty axis
// lists. Only a permute may name no axes, and only where no coordinate
// changes (the layouts differ only in where size-1 axes sit).
TEST_F(MoveTest, OnlyARelabellingPermuteNamesNoAxes) {
  Mesh u = mesh("<[\"tp\"=1, \"x\"=2]>");
  auto applyOnU = [&](llvm::StringRef src, const Move &move) {
    Layout l = layout(u, src);
    llvm::Expected<Layout> r = applyMove(u, l, move, std::vector<int64_t>{8});
    return r ? printLayout(u, *r) : llvm::toString(r.takeError());
  };
  for (MoveKind kind : kAllMoveKinds)
    EXPECT_EQ(moveMayNameNoAxes(kind), kind == MoveKind::Permute)
        << stringifyMoveKind(kind).str();
  EXPECT_EQ(applyOnU("[{\"x\", \"tp\"}]", Move::allGather({}, 0)),
            "all_gather: the move names no mesh axis");

  Layout x = layout(u, "[{\"x\"}]"), tpX = layout(u, "[{\"tp\", \"x\"}]");
  Move relabel = Move::permute(u, x, tpX);
  EXPECT_TRUE(relabel.axes.empty());
  EXPECT_EQ(applyOnU("[{\"x\"}]", relabel), "[{\"tp\", \"x\"}]");
  AlphaBetaCostModel model =
      cantFail(AlphaBetaCostModel::create(u, Topology()));
  EXPECT_EQ(model.stepCost(relabel, 16, 0), 0);

  // Where a coordinate changes, naming no axes would understate the cost.
  Move swap =
      Move::permute(m, layout(m, "[{\"x\"}, {}]"), layout(m, "[{\"z\"}, {}]"));
  swap.axes.clear();
  EXPECT_EQ(apply("[{\"x\"}, {}]", swap),
            "permute: axes {} are not the axes whose coordinate changes "
            "between sender and receiver, which are {\"x\"}");
}

// A collective over size-1 axes alone is a group of one device: it applies
// like any other, and the cost of semantics §3 gives it (p - 1) = 0 of
// everything.
TEST_F(MoveTest, CollectivesOverSizeOneAxesAloneAreFree) {
  Mesh u = mesh("<[\"tp\"=1, \"x\"=2, \"pp\"=1]>");
  const unsigned TP = 0, PP = 2;
  std::vector<int64_t> shape = {8, 6};
  AlphaBetaCostModel model =
      cantFail(AlphaBetaCostModel::create(u, Topology()));
  struct Step {
    const char *from;
    Move move;
    const char *to;
  } steps[] = {
      {"[{\"x\", \"tp\"}, {}]", Move::allGather({TP}, 0), "[{\"x\"}, {}]"},
      {"[{\"x\"}, {}]", Move::allSlice({TP, PP}, 1),
       "[{\"x\"}, {\"tp\", \"pp\"}]"},
      {"[{\"x\", \"tp\"}, {}]", Move::allToAll({TP}, 0, 1),
       "[{\"x\"}, {\"tp\"}]"},
      {"[{\"x\"}, {}], partial = max {\"pp\"}",
       Move::reduceScatter({PP}, 1, ReductionKind::Max), "[{\"x\"}, {\"pp\"}]"},
      {"[{\"x\"}, {}], partial = sum {\"tp\", \"pp\"}",
       Move::allReduce({TP, PP}, ReductionKind::Sum), "[{\"x\"}, {}]"},
  };
  for (const Step &step : steps) {
    Layout from = layout(u, step.from);
    llvm::Expected<Layout> to = applyMove(u, from, step.move, shape);
    ASSERT_TRUE(bool(to)) << printMove(u, step.move) << ": "
                          << llvm::toString(to.takeError());
    EXPECT_EQ(printLayout(u, *to), step.to) << printMove(u, step.move);
    EXPECT_EQ(model.stepCost(step.move, localBytes(u, from, shape, 4), 0), 0)
        << printMove(u, step.move);
  }
}

TEST_F(MoveTest, UnevenExtentsMustNest) {
  EXPECT_TRUE(blocksNest(12, 2, 3));
  EXPECT_TRUE(blocksNest(10, 1, 3));  // from an unsplit dim: always.
  EXPECT_FALSE(blocksNest(10, 3, 3)); // blocks of 4 vs blocks of 2.
  EXPECT_TRUE(blocksNest(9, 3, 3));
  EXPECT_TRUE(blocksNest(1, 2, 2));  // everything in the first block.
  EXPECT_FALSE(blocksNest(6, 2, 2)); // blocks of 3 vs 2 * ceil(6/4) = 4.
}

TEST_F(MoveTest, ShapedApplyRejectsNonNestingSteps) {
  // dim 0 of extent 10 already split by x (blocks of 5): slicing y (4) makes
  // blocks of 2 (ceil(10/8)); 4 * 2 = 8 != 5, so device x=0,y=3 would need
  // [6, 8) which x=0 does not hold.
  EXPECT_THAT(applyShaped("[{\"x\"}]", Move::allSlice({Y}, 0), {10}),
              HasSubstr("all_slice: along dim 0 (extent 10) the 2 blocks of 5 "
                        "are not unions of the 8 blocks of 2"));
  EXPECT_EQ(applyShaped("[{\"x\"}]", Move::allSlice({Y}, 0), {16}),
            "[{\"x\", \"y\"}]");
  EXPECT_EQ(applyShaped("[{}]", Move::allSlice({Y}, 0), {10}), "[{\"y\"}]");
  EXPECT_THAT(applyShaped("[{\"x\", \"y\"}]", Move::allGather({Y}, 0), {10}),
              HasSubstr("all_gather: along dim 0"));
  EXPECT_EQ(applyShaped("[{\"x\", \"y\"}]", Move::allGather({X, Y}, 0), {10}),
            "[{}]");
}

} // namespace

namespace {
// Helpers that take layouts must not read out of bounds when handed an
// invalid one (applyMove is where such layouts get their error message).
// MoveKinds.def is the one list of kinds: every row's word names it in plans
// and the IR, parses back to it, and is unique; the predicates read the
// same row.
TEST(MoveKinds, TableRoundTripsAndAgreesWithTheMoves) {
  std::set<std::string> words;
  for (MoveKind kind : kAllMoveKinds) {
    llvm::StringRef word = stringifyMoveKind(kind);
    EXPECT_EQ(parseMoveKind(word), kind) << word.str();
    EXPECT_TRUE(words.insert(word.str()).second) << word.str();
    // A local move needs no peer, so it never names another layout.
    if (isLocalMove(kind)) {
      EXPECT_FALSE(moveHasTarget(kind)) << word.str();
    }
    // A move that splits a dim names that dim.
    if (moveSplitsDim(kind)) {
      EXPECT_TRUE(moveHasDim(kind)) << word.str();
    }
  }
  EXPECT_EQ(words.size(), 8u);
  EXPECT_FALSE(parseMoveKind("all_gathe").has_value());
}

TEST(MoveRobustness, InvalidLayoutsDoNotCrashHelpers) {
  Mesh m = mesh("<[\"x\"=2]>");
  Layout good = layout(m, "[{\"x\"}]");
  Layout bad;
  bad.dimAxes = {{7, 0}};
  (void)permuteAxes(m, good, bad);
  (void)permuteAxes(m, bad, good);
  (void)permuteSender(m, bad, good, {1});
  Move p = Move::permute(m, good, bad);
  EXPECT_THAT(errorOf(applyMove(m, good, p, 1)),
              HasSubstr("the target layout is invalid"));
  EXPECT_THAT(printMove(m, Move::allGather({9}, 0)), HasSubstr("#9"));
}
} // namespace
