//===- CostModelTest.cpp - The ring alpha-beta model and topology files ---===//

#include "RandomCases.h"
#include "TestUtil.h"

#include "dist/Planner/CostModel.h"

using namespace dist::planner;
using namespace dist::planner::test;
using ::testing::HasSubstr;

namespace {

class RingModelTest : public ::testing::Test {
protected:
  // x: 4 devices, alpha 1e-5, beta 1e-9; y: 2 devices, alpha 2e-5,
  // beta 5e-10; z: size 1.
  Mesh m = mesh("<[\"x\"=4, \"y\"=2, \"z\"=1]>");
  AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(m, [] {
    Topology t;
    t.axes["x"] = {1e-5, 1e-9};
    t.axes["y"] = {2e-5, 5e-10};
    t.axes["z"] = {3e-5, 1e-8};
    return t;
  }()));
  static constexpr unsigned X = 0, Y = 1, Z = 2;
  double cost(MoveKind kind, std::vector<unsigned> axes, int64_t n) {
    return model.collectiveCost(kind, axes, n);
  }
};

TEST_F(RingModelTest, SingleAxisFormulas) {
  // p = 4, n = 1000 bytes.
  EXPECT_DOUBLE_EQ(cost(MoveKind::AllGather, {X}, 1000),
                   3 * 1e-5 + 3 * 1000 * 1e-9);
  EXPECT_DOUBLE_EQ(cost(MoveKind::AllToAll, {X}, 1000),
                   3 * 1e-5 + 0.75 * 1000 * 1e-9);
  EXPECT_DOUBLE_EQ(cost(MoveKind::ReduceScatter, {X}, 1000),
                   3 * 1e-5 + 0.75 * 1000 * 1e-9);
  EXPECT_DOUBLE_EQ(cost(MoveKind::AllReduce, {X}, 1000),
                   2 * 3 * 1e-5 + 2 * 0.75 * 1000 * 1e-9);
  EXPECT_DOUBLE_EQ(cost(MoveKind::AllGather, {Y}, 1000), 2e-5 + 1000 * 5e-10);
}

TEST_F(RingModelTest, GroupsUseTheProductAndTheMaxima) {
  // {x, y}: p = 8, alpha = max = 2e-5, beta = max = 1e-9.
  EXPECT_DOUBLE_EQ(cost(MoveKind::AllGather, {X, Y}, 1000),
                   7 * 2e-5 + 7 * 1000 * 1e-9);
  EXPECT_DOUBLE_EQ(cost(MoveKind::AllReduce, {Y, X}, 800),
                   2 * 7 * 2e-5 + 2 * 7.0 / 8 * 800 * 1e-9);
  // A size-1 axis adds nothing to p but does take part in the maxima.
  EXPECT_DOUBLE_EQ(cost(MoveKind::AllGather, {Y, Z}, 1000), 3e-5 + 1000 * 1e-8);
}

TEST_F(RingModelTest, PermuteCostsOneMessageAtTheWorstAxis) {
  EXPECT_DOUBLE_EQ(cost(MoveKind::Permute, {X, Y}, 1000), 2e-5 + 1000 * 1e-9);
  EXPECT_DOUBLE_EQ(cost(MoveKind::Permute, {}, 1000), 0);
}

TEST_F(RingModelTest, LocalMovesAreFree) {
  EXPECT_EQ(model.stepCost(Move::allSlice({X}, 0), 1 << 20, 1 << 19), 0);
  EXPECT_EQ(model.stepCost(Move::replicateToPartial({X}, ReductionKind::Sum),
                           1 << 20, 0),
            0);
  EXPECT_DOUBLE_EQ(model.stepCost(Move::allGather({X}, 0), 1000, 0),
                   3 * 1e-5 + 3 * 1000 * 1e-9);
}

TEST_F(RingModelTest, Bounds) {
  // Size-1 axes never communicate, so z's parameters do not count.
  EXPECT_EQ(model.minLatency(), 1e-5);
  EXPECT_EQ(model.minSecondsPerByte(), 5e-10);
  EXPECT_DOUBLE_EQ(model.axisLatencyBound(X), 3 * 1e-5);
  EXPECT_EQ(model.axisLatencyBound(Z), 0);
  EXPECT_TRUE(model.sequentialReduceScatterIsCheaper());
  EXPECT_FALSE(model.permuteCostIsUniform());
  EXPECT_FALSE(model.axesInterchangeable(X, Y));
  Mesh u = mesh("<[\"a\"=2, \"b\"=2]>");
  AlphaBetaCostModel uniform = cantFail(AlphaBetaCostModel::create(u));
  EXPECT_TRUE(uniform.permuteCostIsUniform());
  EXPECT_TRUE(uniform.axesInterchangeable(0, 1));
  Topology zero;
  zero.axes["a"] = {0, 1e-9};
  EXPECT_FALSE(cantFail(AlphaBetaCostModel::create(u, zero))
                   .sequentialReduceScatterIsCheaper());
}

TEST(CostModel, DefaultsAreTheSpecs) {
  Mesh m = mesh("<[\"x\"=2]>");
  AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(m));
  EXPECT_EQ(model.getParams(0).alpha, 1e-5);
  EXPECT_EQ(model.getParams(0).beta, 1.0 / 370e9);
}

TEST(CostModel, TopologyJSON) {
  Topology t = cantFail(Topology::parseJSON(
      R"({"axes": {"x": {"alpha": 2e-6, "beta": 2.7e-12}, "y": {"beta": 1e-11}}})"));
  EXPECT_EQ(t.axes["x"].alpha, 2e-6);
  EXPECT_EQ(t.axes["x"].beta, 2.7e-12);
  EXPECT_EQ(t.axes["y"].alpha, kDefaultAlpha);
  EXPECT_EQ(t.axes["y"].beta, 1e-11);
  Topology d = cantFail(Topology::parseJSON(
      R"({"default": {"alpha": 3e-6}, "axes": {"x": {"beta": 1e-9}}})"));
  EXPECT_EQ(d.defaults.alpha, 3e-6);
  EXPECT_EQ(d.axes["x"].alpha, 3e-6);

  EXPECT_THAT(errorOf(Topology::parseJSON("{")), HasSubstr("invalid JSON"));
  EXPECT_THAT(errorOf(Topology::parseJSON(R"({"axis": {}})")),
              HasSubstr("unknown key \"axis\""));
  EXPECT_THAT(errorOf(Topology::parseJSON(R"({"axes": {"x": {"alfa": 1}}})")),
              HasSubstr("unknown key \"alfa\" in axis \"x\""));
  EXPECT_THAT(errorOf(Topology::parseJSON(R"({"axes": {"x": {"beta": -1}}})")),
              HasSubstr("axis \"x\".beta must be finite and >= 0"));
  EXPECT_THAT(errorOf(Topology::parseJSON(R"({"axes": {"x": {"beta": "1"}}})")),
              HasSubstr("must be a number"));
  EXPECT_THAT(errorOf(Topology::parseJSON(R"([1])")),
              HasSubstr("top level must be an object"));
}

// Semantics §3b's "ops": a kind's own alpha or beta replaces the axis's for
// that move only; a field left out stays the axis's (also one set later on
// the command line); bad kinds and values name the key.
TEST(CostModel, PerKindParameters) {
  Topology t = cantFail(Topology::parseJSON(R"({"axes": {"x": {
      "alpha": 1e-5, "beta": 1e-9,
      "ops": {"all_to_all": {"alpha": 2e-5, "beta": 4e-9},
              "redistribute": {"beta": 5e-9}}}},
      "calibration": {"backend": "mpi", "anything": [1, 2]}})"));
  ASSERT_EQ(t.axisOps["x"].size(), 2u);
  EXPECT_EQ(t.axisOps["x"][MoveKind::AllToAll].alpha, 2e-5);
  EXPECT_FALSE(t.axisOps["x"][MoveKind::Redistribute].alpha.has_value());
  cantFail(t.setFromList("x=3e-5", /*alpha=*/true));
  Mesh m = mesh("<[\"x\"=4, \"y\"=2]>");
  AlphaBetaCostModel model = cantFail(AlphaBetaCostModel::create(m, t));
  // all_gather keeps the axis's (alpha from the list), all_to_all its own.
  EXPECT_DOUBLE_EQ(model.collectiveCost(MoveKind::AllGather, {0}, 1000),
                   3 * 3e-5 + 3 * 1000 * 1e-9);
  EXPECT_DOUBLE_EQ(model.collectiveCost(MoveKind::AllToAll, {0}, 1000),
                   3 * 2e-5 + 0.75 * 1000 * 4e-9);
  // Groups take the maxima of the kind's parameters.
  EXPECT_DOUBLE_EQ(model.collectiveCost(MoveKind::AllToAll, {0, 1}, 800),
                   7 * 2e-5 + 7.0 / 8 * 800 * 4e-9);
  // Point-to-point links are redistribute's: alpha the axis's, beta its own.
  AxisCostParams link = model.pointToPointLink({0});
  EXPECT_EQ(link.alpha, 3e-5);
  EXPECT_EQ(link.beta, 5e-9);
  EXPECT_EQ(model.slowestLink().beta, 5e-9);
  // The bounds take the smallest over the kinds.
  EXPECT_EQ(model.minSecondsPerByte(), 1.0 / 370e9); // y's defaults
  EXPECT_EQ(model.axisSecondsPerByte(0), 1e-9);
  EXPECT_DOUBLE_EQ(model.axisLatencyBound(0), 3 * 2e-5);
  // The plan cache keys on every parameter.
  std::string plain, withOps;
  cantFail(AlphaBetaCostModel::create(m)).appendFingerprint(plain);
  model.appendFingerprint(withOps);
  EXPECT_EQ(plain.find("all_to_all"), std::string::npos);
  EXPECT_THAT(withOps, HasSubstr("all_to_all=2e-05,4e-09"));
  EXPECT_THAT(withOps, HasSubstr("redistribute=3e-05,5e-09"));

  auto error = [](llvm::StringRef json) {
    return errorOf(Topology::parseJSON(json));
  };
  EXPECT_THAT(error(R"({"axes": {"x": {"ops": {"all_slice": {}}}}})"),
              HasSubstr("unknown move kind \"all_slice\" in axis \"x\".ops "
                        "(expected \"all_gather\", \"all_to_all\""));
  EXPECT_THAT(error(R"({"axes": {"x": {"ops": {"allgather": {}}}}})"),
              HasSubstr("unknown move kind \"allgather\""));
  EXPECT_THAT(error(R"({"axes": {"x": {"ops": []}}})"),
              HasSubstr("axis \"x\".ops must be an object keyed by move kind"));
  EXPECT_THAT(error(R"({"axes": {"x": {"ops": {"permute": 1}}}})"),
              HasSubstr("axis \"x\".ops.permute must be an object"));
  EXPECT_THAT(error(R"({"axes": {"x": {"ops": {"permute": {"gamma": 1}}}}})"),
              HasSubstr("unknown key \"gamma\" in axis \"x\".ops.permute"));
  EXPECT_THAT(
      error(R"({"axes": {"x": {"ops": {"permute": {"beta": -1e-9}}}}})"),
      HasSubstr("axis \"x\".ops.permute.beta must be finite and >= 0"));
  EXPECT_THAT(error(R"({"default": {"ops": {}}})"),
              HasSubstr("unknown key \"ops\" in default"));
}

// semantics §3b "local": a step pays local.beta per byte it copies locally
// on top of its §3 cost; the file's errors name the key; the plan cache's
// key changes only when local copies are priced.
TEST(CostModel, LocalCopies) {
  auto error = [](llvm::StringRef text) {
    llvm::Expected<Topology> t = Topology::parseJSON(text);
    return t ? std::string("<success>") : llvm::toString(t.takeError());
  };
  EXPECT_THAT(error(R"({"local": 5e-11})"),
              HasSubstr("local must be an object with \"beta\""));
  EXPECT_THAT(error(R"({"local": {"alpha": 1e-6}})"),
              HasSubstr("unknown key \"alpha\" in local (expected \"beta\")"));
  EXPECT_THAT(error(R"({"local": {"beta": -1e-11}})"),
              HasSubstr("local.beta must be finite and >= 0"));
  EXPECT_THAT(error(R"({"local": {"beta": "fast"}})"),
              HasSubstr("local.beta must be a number"));

  Mesh m = mesh("<[\"x\"=4, \"y\"=2]>");
  Topology t = cantFail(Topology::parseJSON(
      R"({"axes": {"x": {"alpha": 1e-5, "beta": 1e-9}}, "local": {"beta": 2e-12}})"));
  EXPECT_EQ(t.localBeta, 2e-12);
  AlphaBetaCostModel priced = cantFail(AlphaBetaCostModel::create(m, t));
  AlphaBetaCostModel free = cantFail(AlphaBetaCostModel::create(m, Topology()));
  EXPECT_EQ(priced.localSecondsPerByte(), 2e-12);
  EXPECT_EQ(free.localSecondsPerByte(), 0);
  EXPECT_DOUBLE_EQ(priced.stepCost(Move::allSlice({0}, 0), 4000, 1000),
                   1000 * 2e-12);
  EXPECT_DOUBLE_EQ(priced.stepCost(Move::allGather({0}, 0), 1000, 4000),
                   3 * 1e-5 + 3 * 1000 * 1e-9 + 4000 * 2e-12);
  EXPECT_EQ(free.stepCost(Move::allSlice({0}, 0), 4000, 1000), 0);
  // 2e-12 <= every beta (y's is the default 2.7e-12): slices are never
  // dearer than sending (the search's pruning rules hold); above the
  // smallest beta they may be.
  EXPECT_TRUE(priced.localCopiesNeverDearerThanSending());
  t.localBeta = 1e-8;
  EXPECT_FALSE(cantFail(AlphaBetaCostModel::create(m, t))
                   .localCopiesNeverDearerThanSending());
  std::string a, b;
  priced.appendFingerprint(a);
  free.appendFingerprint(b);
  EXPECT_THAT(a, HasSubstr(";local=2e-12}"));
  EXPECT_EQ(b.find("local"), std::string::npos);
}

// With random per-kind parameters every bound the search relies on holds
// for every collective on every group (CostModel.h: cost >= minLatency +
// minSecondsPerByte * received, and >= the sum of axisLatencyBound +
// groupLatencyExcess + minSecondsPerByte * received for the four
// collectives), and the symmetry claims are true of the costs.
TEST(CostModel, PerKindBoundsHold) {
  Rng rng(97);
  for (int i = 0; i < 300; ++i) {
    Mesh m = randomMesh(rng, 3, 4, 32);
    AlphaBetaCostModel model = cantFail(
        AlphaBetaCostModel::create(m, randomTopology(rng, m, /*ops=*/true)));
    std::vector<unsigned> axes;
    for (unsigned a = 0; a < m.getNumAxes(); ++a)
      if (m.getAxisSize(a) > 1 && uniform(rng, 0, 1))
        axes.push_back(a);
    if (axes.empty())
      continue;
    double p = 1, latency = 0;
    for (unsigned a : axes) {
      p *= double(m.getAxisSize(a));
      latency += model.axisLatencyBound(a);
    }
    latency += model.groupLatencyExcess(axes);
    const int64_t n = 4096;
    const double received[] = {(p - 1) * n, (p - 1) / p * n, (p - 1) / p * n,
                               (p - 1) / p * n};
    const MoveKind kinds[] = {MoveKind::AllGather, MoveKind::AllToAll,
                              MoveKind::ReduceScatter, MoveKind::AllReduce};
    for (int k = 0; k < 4; ++k) {
      double cost = model.collectiveCost(kinds[k], axes, n);
      double beta = model.minSecondsPerByte() * received[k];
      EXPECT_GE(cost * (1 + 1e-12), model.minLatency() + beta);
      EXPECT_GE(cost * (1 + 1e-12), latency + beta);
      for (unsigned a : axes)
        EXPECT_GE(cost * (1 + 1e-12),
                  model.minLatency() + model.axisSecondsPerByte(a) *
                                           received[k] / double(axes.size()));
    }
    double permute = model.collectiveCost(MoveKind::Permute, axes, n);
    EXPECT_GE(permute * (1 + 1e-12),
              model.minLatency() + model.minSecondsPerByte() * n);
    if (model.allReducePaysLatencyTwice()) {
      double perAxis = latency - model.groupLatencyExcess(axes);
      EXPECT_GE(model.collectiveCost(MoveKind::AllReduce, axes, n) *
                    (1 + 1e-12),
                2 * perAxis);
    }
    if (model.permuteCostIsUniform() && axes.size() > 1) {
      EXPECT_DOUBLE_EQ(permute,
                       model.collectiveCost(MoveKind::Permute, {axes[0]}, n));
    }
    for (unsigned a : axes)
      for (unsigned b : axes)
        if (model.axesInterchangeable(a, b)) {
          for (MoveKind kind : kinds)
            EXPECT_EQ(model.collectiveCost(kind, {a}, n),
                      model.collectiveCost(kind, {b}, n));
        }
  }
}

// Semantics §3b's device: read when given, every field checked.
TEST(CostModel, TopologyDevice) {
  Topology none = cantFail(Topology::parseJSON(R"({"axes": {}})"));
  EXPECT_FALSE(none.device.has_value());
  Topology t = cantFail(Topology::parseJSON(
      R"({"device": {"flops": 1e15, "mem_bw": 3e12, "memory": 8e10}})"));
  ASSERT_TRUE(t.device.has_value());
  // One rate: every element type runs at it.
  EXPECT_EQ(t.device->flopsFor("f32"), 1e15);
  EXPECT_EQ(t.device->flopsFor("bf16"), 1e15);
  EXPECT_EQ(t.device->memBandwidth, 3e12);
  EXPECT_EQ(t.device->memory, 8e10);
  // Fields left out are the default device's (a budget alone prices
  // compute as the default device does).
  Topology partial =
      cantFail(Topology::parseJSON(R"({"device": {"memory": 1e9}})"));
  EXPECT_EQ(partial.device->memory, 1e9);
  EXPECT_EQ(partial.device->flopsFor("f32"), 4.7e13);
  EXPECT_EQ(partial.device->memBandwidth, 2.3e12);
  // Rates by element type; types left out run at the largest given, index
  // as i64.
  Topology typed = cantFail(Topology::parseJSON(
      R"({"device": {"flops": {"bf16": 6e14, "f32": 5e13, "i64": 1e13}}})"));
  EXPECT_EQ(typed.device->flopsFor("bf16"), 6e14);
  EXPECT_EQ(typed.device->flopsFor("f32"), 5e13);
  EXPECT_EQ(typed.device->flopsFor("index"), 1e13);
  EXPECT_EQ(typed.device->flopsFor("f16"), 6e14);
  EXPECT_THAT(
      errorOf(Topology::parseJSON(R"({"device": {"flops": {"f31": 1}}})")),
      HasSubstr("unknown element type \"f31\" in device.flops"));
  EXPECT_THAT(
      errorOf(Topology::parseJSON(R"({"device": {"flops": {"f32": 0}}})")),
      HasSubstr("device.flops.f32 must be > 0"));
  // Without a device key: the default device (semantics §3b).
  DeviceParams fallback = none.effectiveDevice();
  EXPECT_EQ(fallback.flopsFor("bf16"), 6.9e14);
  EXPECT_EQ(fallback.flopsFor("f16"), 6.9e14);
  EXPECT_EQ(fallback.flopsFor("f32"), 4.7e13);
  EXPECT_EQ(fallback.flopsFor("i32"), 4.7e13);
  EXPECT_EQ(fallback.flopsFor("f64"), 2.3e13);
  EXPECT_EQ(fallback.memBandwidth, 2.3e12);
  EXPECT_EQ(fallback.memory, 0);
  EXPECT_THAT(errorOf(Topology::parseJSON(R"({"device": {"flop": 1}})")),
              HasSubstr("unknown key \"flop\" in device"));
  EXPECT_THAT(errorOf(Topology::parseJSON(R"({"device": {"memory": -1}})")),
              HasSubstr("device.memory must be finite and >= 0"));
  EXPECT_THAT(errorOf(Topology::parseJSON(R"({"device": {"flops": 0}})")),
              HasSubstr("device.flops must be > 0"));
  EXPECT_THAT(errorOf(Topology::parseJSON(R"({"device": {"mem_bw": "x"}})")),
              HasSubstr("device.mem_bw must be a number"));
  EXPECT_THAT(errorOf(Topology::parseJSON(R"({"device": 3})")),
              HasSubstr("device must be an object"));
}

// 60k levels of nesting overflowed the recursive JSON parser's
// stack (SIGSEGV in dist-plan, dist-opt and Python).
TEST(CostModel, DeeplyNestedTopologyIsAnError) {
  std::string deep = std::string(60000, '[') + std::string(60000, ']');
  std::string deepAxis = R"({"axes": {"x": )" + std::string(60000, '{');
  EXPECT_EXIT(
      {
        boundThisProcess(20, 1024);
        std::string a = errorOf(Topology::parseJSON(deep));
        std::string b = errorOf(Topology::parseJSON(deepAxis));
        std::fprintf(stderr, "%s\n%s\n", a.c_str(), b.c_str());
        std::exit(0);
      },
      testing::ExitedWithCode(0),
      "topology: invalid JSON: JSON nested more than 64 levels deep \\(at "
      "byte 64\\)\n.*more than 64 levels deep \\(at byte 77\\)");
  // The limit leaves every real file alone: 64 levels parse, and brackets
  // inside strings (an axis named "[[[...") do not count.
  std::string name(100, '[');
  Topology t = cantFail(
      Topology::parseJSON(R"({"axes": {")" + name + R"(": {"alpha": 1e-6}}})"));
  EXPECT_EQ(t.axes[name].alpha, 1e-6);
  std::string sixtyFour = std::string(64, '[') + std::string(64, ']');
  EXPECT_THAT(errorOf(Topology::parseJSON(sixtyFour)),
              HasSubstr("top level must be an object"));
}

TEST(CostModel, TopologyMustNameMeshAxes) {
  Mesh m = mesh("<[\"x\"=2]>");
  Topology t;
  t.axes["q"] = {};
  EXPECT_THAT(errorOf(AlphaBetaCostModel::create(m, t)),
              HasSubstr("topology names axis \"q\", which is not in mesh"));
}

TEST(CostModel, AxisLists) {
  Topology t;
  EXPECT_EQ(errorOf(t.setFromList("x=1e-5, y=2e-6", /*alpha=*/true)),
            "<success>");
  EXPECT_EQ(errorOf(t.setFromList("x=2.7e-12", /*alpha=*/false)), "<success>");
  EXPECT_EQ(t.axes["x"].alpha, 1e-5);
  EXPECT_EQ(t.axes["x"].beta, 2.7e-12);
  EXPECT_EQ(t.axes["y"].alpha, 2e-6);
  EXPECT_EQ(t.axes["y"].beta, kDefaultBeta);
  EXPECT_THAT(errorOf(t.setFromList("x", true)),
              HasSubstr("alpha entry 'x' is not NAME=VALUE"));
  EXPECT_THAT(errorOf(t.setFromList("x=fast", false)),
              HasSubstr("beta for axis \"x\" is not a number: 'fast'"));
  EXPECT_THAT(errorOf(t.setFromList("x=-1", true)),
              HasSubstr("must be finite and >= 0"));
  EXPECT_THAT(errorOf(t.setFromList("", true)), HasSubstr("empty"));
}

TEST(CostModel, FingerprintNamesEveryParameter) {
  Mesh m = mesh("<[\"x\"=2, \"y\"=2]>");
  std::string a, b;
  cantFail(AlphaBetaCostModel::create(m)).appendFingerprint(a);
  Topology t;
  t.axes["y"] = {1e-5, 1e-9};
  cantFail(AlphaBetaCostModel::create(m, t)).appendFingerprint(b);
  EXPECT_EQ(a, "alpha-beta-ring{\"x\":1e-05,2.7027027027027025e-12;\"y\":1e-05,"
               "2.7027027027027025e-12}");
  EXPECT_NE(a, b);
}

TEST(CostModel, ShortestRoundTripNumbers) {
  EXPECT_EQ(formatDouble(1.2e-05), "1.2e-05");
  EXPECT_EQ(formatDouble(0.5), "0.5");
  EXPECT_EQ(formatDouble(4096), "4096");
  EXPECT_EQ(formatDouble(0), "0");
  double third = 1.0 / 3;
  EXPECT_EQ(std::stod(formatDouble(third)), third);
}

} // namespace
