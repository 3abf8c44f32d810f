//===- SenderAgreementTests.cpp - planner and runtime pick one sender -----===//
//
// A permute is lowered two ways: dist-localize writes the senders the
// planner computes (planner::permuteSender) into a table, and on large
// meshes the runtime computes them from the two layouts itself
// (rt::permuteTablesFromLayouts). Both must name the same sender for every
// receiver, or the two lowerings of one program would move different data.
// Both read the rule from dist/Support/MixedRadix.h; this property test
// checks the two callers on random meshes (with device permutations) and
// random layout pairs of equal shard counts.
//
//===----------------------------------------------------------------------===//

#include "../../lib/Runtime/Mesh.h"
#include "dist/Planner/Layout.h"
#include "dist/Planner/Mesh.h"
#include "dist/Planner/Move.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace dist;

namespace {

struct RandomMesh {
  std::vector<int64_t> sizes, devices;
};

RandomMesh randomMesh(std::mt19937 &rng) {
  RandomMesh m;
  int numAxes = std::uniform_int_distribution<int>(1, 4)(rng);
  int64_t devices = 1;
  for (int a = 0; a < numAxes; ++a) {
    m.sizes.push_back(std::uniform_int_distribution<int64_t>(1, 4)(rng));
    devices *= m.sizes.back();
  }
  m.devices.resize(devices);
  std::iota(m.devices.begin(), m.devices.end(), 0);
  if (rng() % 2)
    std::shuffle(m.devices.begin(), m.devices.end(), rng);
  return m;
}

/// Every axis goes to one of `rank` dims or replicates, in a random order.
planner::Layout randomLayout(std::mt19937 &rng, size_t numAxes, size_t rank) {
  planner::Layout layout;
  layout.dimAxes.resize(rank);
  std::vector<unsigned> axes(numAxes);
  std::iota(axes.begin(), axes.end(), 0u);
  std::shuffle(axes.begin(), axes.end(), rng);
  for (unsigned axis : axes) {
    size_t slot = std::uniform_int_distribution<size_t>(0, rank)(rng);
    if (slot < rank)
      layout.dimAxes[slot].push_back(axis);
  }
  return layout;
}

std::vector<int64_t> shardCounts(const planner::Layout &layout,
                                 const std::vector<int64_t> &sizes) {
  std::vector<int64_t> counts;
  for (const planner::AxisList &axes : layout.dimAxes) {
    int64_t parts = 1;
    for (unsigned axis : axes)
      parts *= sizes[axis];
    counts.push_back(parts);
  }
  return counts;
}

} // namespace

TEST(SenderAgreement, PlannerAndRuntimeNameTheSameSender) {
  std::mt19937 rng(20261125);
  int checked = 0;
  for (int trial = 0; trial < 400; ++trial) {
    RandomMesh m = randomMesh(rng);
    size_t rank = std::uniform_int_distribution<size_t>(1, 3)(rng);
    planner::Layout src = randomLayout(rng, m.sizes.size(), rank), dst;
    // A target with the same shard count per dim (a permute's precondition).
    bool found = false;
    for (int attempt = 0; attempt < 200 && !found; ++attempt) {
      dst = randomLayout(rng, m.sizes.size(), rank);
      found = shardCounts(dst, m.sizes) == shardCounts(src, m.sizes);
    }
    if (!found)
      continue;

    std::vector<planner::MeshAxis> axes;
    for (size_t a = 0; a < m.sizes.size(); ++a)
      axes.push_back({"a" + std::to_string(a), m.sizes[a]});
    llvm::Expected<planner::Mesh> plannerMesh =
        planner::Mesh::create(axes, m.devices);
    ASSERT_TRUE(static_cast<bool>(plannerMesh))
        << llvm::toString(plannerMesh.takeError());
    rt::MeshSpec runtimeMesh = rt::MeshSpec::create(
        static_cast<int64_t>(m.sizes.size()), m.sizes.data(), m.devices.data());

    std::vector<int64_t> description;
    for (size_t d = 0; d < rank; ++d) {
      description.push_back(static_cast<int64_t>(src.dimAxes[d].size()));
      description.insert(description.end(), src.dimAxes[d].begin(),
                         src.dimAxes[d].end());
      description.push_back(static_cast<int64_t>(dst.dimAxes[d].size()));
      description.insert(description.end(), dst.dimAxes[d].begin(),
                         dst.dimAxes[d].end());
    }
    rt::PermuteTables tables = rt::permuteTablesFromLayouts(
        runtimeMesh, static_cast<int64_t>(rank), description.data(),
        static_cast<int64_t>(description.size()));

    for (int64_t linear = 0; linear < plannerMesh->getNumDevices(); ++linear) {
      std::vector<int64_t> receiver = plannerMesh->coordinateOf(linear);
      int64_t receiverRank = plannerMesh->rankOf(receiver);
      int64_t sender = plannerMesh->rankOf(
          planner::permuteSender(*plannerMesh, src, dst, receiver));
      ASSERT_EQ(tables.srcRank[receiverRank], sender)
          << "mesh " << plannerMesh->str() << ", receiver rank " << receiverRank
          << ", trial " << trial;
    }
    ++checked;
  }
  // Most random pairs have a matching target; the test must not pass by
  // skipping them all.
  EXPECT_GT(checked, 200);
}
