//===- BlockCoverageTest.cpp - The class walk against every device --------===//
//
// forEachBlockCoverage (lib/Planner/Moves/BlockCoverage.h) visits one device
// per class of devices holding the same blocks, with shard indices kept up
// to date digit by digit. Checked here against the plain definition: every
// device's coordinate, its shard indices (semantics §2), its blocks, and the
// ideal blocks i*N/P, computed from scratch. The visited coverages and the
// devices' coverages must be the same set, bit for bit.
//
//===----------------------------------------------------------------------===//

#include "Moves/BlockCoverage.h"
#include "RandomCases.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <set>
#include <tuple>

using namespace dist::planner;
using namespace dist::planner::test;
using detail::BlockCoverage;

namespace {
using Key = std::tuple<double, double, double, double, int64_t>;

Key keyOf(const BlockCoverage &c) {
  return {c.wanted, c.held, c.wantedIdeal, c.heldIdeal, c.sourceBlocks};
}

/// Every device's coverage, from its coordinate.
std::set<Key> perDevice(const Mesh &mesh, const Layout &source,
                        const Layout &target, llvm::ArrayRef<int64_t> shape) {
  std::set<Key> out;
  for (int64_t device = 0; device < mesh.getNumDevices(); ++device) {
    std::vector<int64_t> coord = mesh.coordinateOf(device);
    BlockCoverage c;
    for (unsigned d = 0; d < shape.size(); ++d) {
      int64_t t = shardIndex(mesh, target, d, coord);
      int64_t s = shardIndex(mesh, source, d, coord);
      DimRange want = blockPieces(mesh, target, shape, d, t)[0].global;
      DimRange have = blockPieces(mesh, source, shape, d, s)[0].global;
      c.wanted *= double(want.size());
      c.held *= double(std::max<int64_t>(
          0, std::min(want.end, have.end) - std::max(want.begin, have.begin)));
      int64_t sourceBlock = std::max<int64_t>(
          1,
          dist::mixed_radix::blockSize(shape[d], source.shardCount(mesh, d)));
      int64_t blocks = 0;
      for (int64_t b = 0; b * sourceBlock < shape[d]; ++b)
        blocks += std::min((b + 1) * sourceBlock, want.end) >
                  std::max(b * sourceBlock, want.begin);
      c.sourceBlocks *= want.size() > 0 ? blocks : 0;
      double pt = double(target.shardCount(mesh, d));
      double ps = double(source.shardCount(mesh, d));
      double n = double(shape[d]);
      double tb = double(t) * n / pt, te = double(t + 1) * n / pt;
      double sb = double(s) * n / ps, se = double(s + 1) * n / ps;
      c.wantedIdeal *= te - tb;
      c.heldIdeal *= std::max(0.0, std::min(te, se) - std::max(tb, sb));
    }
    out.insert(keyOf(c));
  }
  return out;
}
} // namespace

TEST(BlockCoverage, ClassWalkMatchesEveryDevice) {
  Rng rng(20261127);
  for (int i = 0; i < 400 * propertyScale(); ++i) {
    Mesh mesh = randomMesh(rng, 4, 4, 96);
    unsigned rank = uniform(rng, 1, 3);
    Layout source = randomLayout(rng, mesh, rank, /*allowPartial=*/true);
    Layout target = randomLayout(rng, mesh, rank, /*allowPartial=*/true);
    // Uneven extents, extents below the shard count, and empty dims.
    std::vector<int64_t> shape = randomShape(rng, rank, 40);
    if (uniform(rng, 0, 9) == 0)
      shape[uniform(rng, 0, rank - 1)] = 0;
    std::set<Key> walked;
    detail::forEachBlockCoverage(
        mesh, source, target, shape,
        [&](const BlockCoverage &c) { walked.insert(keyOf(c)); });
    ASSERT_EQ(walked, perDevice(mesh, source, target, shape))
        << "mesh " << mesh.str() << ", " << printLayout(mesh, source) << " -> "
        << printLayout(mesh, target);
  }
}

TEST(BlockCoverage, WithoutIdealLeavesTheIdealFieldsAtOne) {
  Mesh mesh = cantFail(Mesh::create({{"x", 2}, {"y", 3}}));
  Layout source = Layout::replicated(2), target = Layout::replicated(2);
  source.dimAxes[0] = {0};
  target.dimAxes[1] = {1, 0};
  std::vector<int64_t> shape = {5, 7};
  int visits = 0;
  detail::forEachBlockCoverage</*Ideal=*/false>(mesh, source, target, shape,
                                                [&](const BlockCoverage &c) {
                                                  ++visits;
                                                  EXPECT_EQ(c.wantedIdeal, 1);
                                                  EXPECT_EQ(c.heldIdeal, 1);
                                                });
  // Both axes split a dim: one visit per device.
  EXPECT_EQ(visits, 6);
}
