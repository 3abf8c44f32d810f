//===- ReshapeViewTest.cpp - reshape views (semantics §2a) ----------------===//
//
// A view must give every device the same local bytes: checked element by
// element on the block semantics (Layout.h), so a scrambled view fails by
// construction. Small cases are also checked complete: whenever some layout
// of the reshaped tensor holds the same bytes, the view functions find one.
//
//===----------------------------------------------------------------------===//

#include "RandomCases.h"
#include "TestUtil.h"

#include "dist/Planner/ReshapeView.h"

#include "llvm/ADT/StringExtras.h"

#include <functional>

using namespace dist::planner;
using namespace dist::planner::test;
using llvm::Expected;

namespace {

/// Expanded shape and groups for a collapsed one, e.g. {12, 8} from
/// {3, 4, 8} with groups [[0, 1], [2]].
ReshapeDims reshape(std::vector<int64_t> expanded,
                    std::vector<std::vector<unsigned>> groups) {
  ReshapeDims dims;
  dims.expandedShape = std::move(expanded);
  dims.groups = std::move(groups);
  for (const auto &group : dims.groups) {
    int64_t n = 1;
    for (unsigned d : group)
      n *= dims.expandedShape[d];
    dims.collapsedShape.push_back(n);
  }
  return dims;
}

int64_t product(const std::vector<int64_t> &v) {
  int64_t p = 1;
  for (int64_t x : v)
    p *= x;
  return p;
}

/// The global collapsed index (row-major over the collapsed shape) of every
/// position of one device's local buffer, or -1 for padding.
std::vector<int64_t> localContents(const Mesh &mesh, const Layout &layout,
                                   const std::vector<int64_t> &shape,
                                   const std::vector<int64_t> &coord) {
  std::vector<int64_t> local = localShape(mesh, layout, shape);
  std::vector<int64_t> out(product(local));
  for (int64_t q = 0; q < int64_t(out.size()); ++q) {
    std::vector<int64_t> global(shape.size());
    int64_t rest = q;
    bool padding = false;
    for (size_t d = shape.size(); d-- > 0;) {
      int64_t l = rest % local[d];
      rest /= local[d];
      global[d] = globalIndexAlong(mesh, layout, shape, d,
                                   shardIndex(mesh, layout, d, coord), l);
      padding |= global[d] < 0;
    }
    if (padding) {
      out[q] = -1;
      continue;
    }
    // Row-major flat index over the global tensor: the same number on both
    // sides of a reshape.
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d)
      flat = flat * shape[d] + global[d];
    out[q] = flat;
  }
  return out;
}

bool sameBytes(const Mesh &mesh, const Layout &expanded,
               const Layout &collapsed, const ReshapeDims &dims) {
  if (expanded.partialAxes != collapsed.partialAxes)
    return false;
  for (int64_t i = 0; i < mesh.getNumDevices(); ++i) {
    std::vector<int64_t> coord = mesh.coordinateOf(i);
    if (localContents(mesh, expanded, dims.expandedShape, coord) !=
        localContents(mesh, collapsed, dims.collapsedShape, coord))
      return false;
  }
  return true;
}

/// Whether no split dim (or segment) has fewer elements than parts.
bool everyBlockHoldsData(const Mesh &mesh, const Layout &layout,
                         const std::vector<int64_t> &shape) {
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t parts = layout.shardCount(mesh, d);
    int64_t smallest = shape[d];
    if (layout.isSegmented(d))
      for (int64_t n : layout.segments[d])
        smallest = std::min(smallest, n);
    if (smallest < parts)
      return false;
  }
  return true;
}

/// Every layout of `rank` dims (no partial axes): each axis replicated or at
/// any position of any dim; each split dim of extent N also with every
/// count K > 1 of equal segments dividing N.
std::vector<Layout> allLayouts(const Mesh &mesh,
                               const std::vector<int64_t> &shape,
                               bool withSegments) {
  std::vector<Layout> plain;
  Layout current = Layout::replicated(shape.size());
  std::function<void(unsigned)> visit = [&](unsigned axis) {
    if (axis == mesh.getNumAxes()) {
      plain.push_back(current);
      return;
    }
    visit(axis + 1);
    for (auto &axes : current.dimAxes)
      for (size_t pos = 0; pos <= axes.size(); ++pos) {
        axes.insert(axes.begin() + pos, axis);
        visit(axis + 1);
        axes.erase(axes.begin() + pos);
      }
  };
  visit(0);
  if (!withSegments)
    return plain;
  std::vector<Layout> all;
  for (const Layout &layout : plain) {
    std::vector<Layout> variants{layout};
    for (size_t d = 0; d < shape.size(); ++d) {
      if (layout.dimAxes[d].empty())
        continue;
      std::vector<Layout> more;
      for (const Layout &v : variants)
        for (int64_t k = 2; k <= shape[d]; ++k)
          if (shape[d] % k == 0) {
            Layout s = v;
            s.segments.resize(shape.size());
            s.segments[d].assign(k, shape[d] / k);
            s.canonicalize();
            more.push_back(s);
          }
      variants.insert(variants.end(), more.begin(), more.end());
    }
    all.insert(all.end(), variants.begin(), variants.end());
  }
  return all;
}

TEST(ReshapeViewTest, FusedQkvRowsAreTheSegmentsOfTheExpandedHeads) {
  Mesh m = mesh(R"(<["tp"=4]>)");
  ReshapeDims dims = reshape({3, 4, 8}, {{0, 1}, {2}});
  Layout qkv = layout(m, R"([{"tp"} segments [4, 4, 4], {}])");
  Expected<Layout> expanded = expandedView(m, qkv, dims);
  ASSERT_TRUE(bool(expanded)) << errorOf(std::move(expanded));
  EXPECT_EQ(printLayout(m, *expanded), R"([{}, {"tp"}, {}])");
  EXPECT_TRUE(sameBytes(m, *expanded, qkv, dims));
  Expected<Layout> back = collapsedView(m, *expanded, dims);
  ASSERT_TRUE(bool(back)) << errorOf(std::move(back));
  EXPECT_EQ(*back, qkv);
}

TEST(ReshapeViewTest, ContiguousRowsSplitTheMajorExpandedDimFirst) {
  Mesh m = mesh(R"(<["a"=2, "b"=2]>)");
  ReshapeDims dims = reshape({2, 6, 5}, {{0, 1}, {2}});
  Layout rows = layout(m, R"([{"a", "b"}, {}])");
  Expected<Layout> expanded = expandedView(m, rows, dims);
  ASSERT_TRUE(bool(expanded)) << errorOf(std::move(expanded));
  EXPECT_EQ(printLayout(m, *expanded), R"([{"a"}, {"b"}, {}])");
  EXPECT_TRUE(sameBytes(m, *expanded, rows, dims));

  // Partial axes are carried over.
  Layout partial = layout(m, R"([{"a"}, {}], partial = sum {"b"})");
  Expected<Layout> partialExpanded = expandedView(m, partial, dims);
  ASSERT_TRUE(bool(partialExpanded)) << errorOf(std::move(partialExpanded));
  EXPECT_EQ(printLayout(m, *partialExpanded),
            R"([{"a"}, {}, {}], partial = sum {"b"})");
}

TEST(ReshapeViewTest, ReshapesThatMoveDataAreRefusedWithAReason) {
  Mesh m = mesh(R"(<["tp"=4]>)");
  // 12 rows in 4 runs of 3 are not blocks of [3, 4]: rows of the expanded
  // dims would straddle devices.
  EXPECT_THAT(errorOf(expandedView(m, layout(m, R"([{"tp"}])"),
                                   reshape({3, 4}, {{0, 1}}))),
              testing::HasSubstr("would split a reshaped dim (extent 3)"));
  // Padded blocks of 10 rows are not blocks of [2, 5].
  EXPECT_THAT(errorOf(expandedView(m, layout(m, R"([{"tp"}])"),
                                   reshape({2, 5}, {{0, 1}}))),
              testing::HasSubstr("padded blocks"));
  // ... but of [10, 1] they are.
  EXPECT_EQ(errorOf(expandedView(m, layout(m, R"([{"tp"}])"),
                                 reshape({10, 1}, {{0, 1}}))),
            "<success>");
  // Unequal segments (GQA) are not the rows of an expanded dim.
  EXPECT_THAT(
      errorOf(expandedView(m, layout(m, R"([{"tp"} segments [8, 4, 4]])"),
                           reshape({2, 8}, {{0, 1}}))),
      testing::HasSubstr("different lengths"));
  // The columns split, the rows whole: collapsing interleaves devices.
  Mesh m2 = mesh(R"(<["a"=2, "b"=2]>)");
  EXPECT_THAT(errorOf(collapsedView(m2, layout(m2, R"([{"a"}, {"b"}])"),
                                    reshape({4, 2}, {{0, 1}}))),
              testing::HasSubstr("followed by a split dim"));
  // Unsplit leading dims enumerate segments: a view.
  EXPECT_EQ(
      printLayout(m, cantFail(collapsedView(m, layout(m, R"([{}, {"tp"}, {}])"),
                                            reshape({3, 4, 2}, {{0, 1, 2}})))),
      R"([{"tp"} segments [8, 8, 8]])");
  EXPECT_THAT(
      errorOf(collapsedView(m, layout(m, R"([{}])"), reshape({3, 4}, {{0}}))),
      testing::HasSubstr("groups cover 1 of 2"));
}

/// Random reshapes: every view found holds the same bytes, and the view of
/// the view is the layout started from (up to bytes).
TEST(ReshapeViewTest, RandomViewsHoldTheSameBytes) {
  Rng rng(20261123);
  int found = 0, cases = 400 * propertyScale();
  for (int c = 0; c < cases; ++c) {
    Mesh m = randomMesh(rng, 3, 3, 16);
    unsigned rank = uniform(rng, 1, 4);
    std::vector<int64_t> expandedShape = randomShape(rng, rank, 6);
    std::vector<std::vector<unsigned>> groups;
    for (unsigned d = 0; d < rank; ++d)
      if (groups.empty() || uniform(rng, 0, 1))
        groups.push_back({d});
      else
        groups.back().push_back(d);
    ReshapeDims dims = reshape(expandedShape, groups);
    Layout expanded = randomLayout(rng, m, rank, true);
    Expected<Layout> collapsed = collapsedView(m, expanded, dims);
    if (!collapsed) {
      llvm::consumeError(collapsed.takeError());
      continue;
    }
    ++found;
    ASSERT_TRUE(sameBytes(m, expanded, *collapsed, dims))
        << m.str() << " " << printLayout(m, expanded) << " on "
        << llvm::join(
               llvm::map_range(expandedShape,
                               [](int64_t x) { return std::to_string(x); }),
               "x")
        << " -> " << printLayout(m, *collapsed);
    Expected<Layout> again = expandedView(m, *collapsed, dims);
    ASSERT_TRUE(bool(again)) << errorOf(std::move(again));
    ASSERT_TRUE(sameBytes(m, *again, *collapsed, dims))
        << printLayout(m, *collapsed) << " -> " << printLayout(m, *again);
  }
  EXPECT_GT(found, cases / 4);
  std::printf("[ reshape views ] %d of %d random reshapes were views\n", found,
              cases);
}

/// Small reshapes, every pair of layouts: when some collapsed layout holds
/// an expanded layout's bytes, collapsedView finds one; likewise for
/// expandedView.
TEST(ReshapeViewTest, ViewsAreFoundWheneverTheyExist) {
  Rng rng(7);
  int pairs = 0;
  for (int c = 0; c < 60; ++c) {
    std::vector<MeshAxis> axes;
    unsigned numAxes = uniform(rng, 1, 2);
    for (unsigned a = 0; a < numAxes; ++a)
      axes.push_back({std::string(1, char('a' + a)), uniform(rng, 2, 3)});
    Mesh m = cantFail(Mesh::create(axes));
    unsigned rank = uniform(rng, 2, 3);
    std::vector<int64_t> expandedShape = randomShape(rng, rank, 6);
    std::vector<std::vector<unsigned>> groups{{0}};
    for (unsigned d = 1; d < rank; ++d)
      if (uniform(rng, 0, 1))
        groups.push_back({d});
      else
        groups.back().push_back(d);
    ReshapeDims dims = reshape(expandedShape, groups);
    std::vector<Layout> expandedLayouts = allLayouts(m, expandedShape, false);
    std::vector<Layout> collapsedLayouts =
        allLayouts(m, dims.collapsedShape, true);
    for (const Layout &e : expandedLayouts)
      for (const Layout &col : collapsedLayouts) {
        // Splits into more parts than elements leave devices holding only
        // padding, which many unrelated layouts share; such degenerate
        // splits are not asked for.
        if (!everyBlockHoldsData(m, e, expandedShape) ||
            !everyBlockHoldsData(m, col, dims.collapsedShape) ||
            !sameBytes(m, e, col, dims))
          continue;
        ++pairs;
        Expected<Layout> viewOfE = collapsedView(m, e, dims);
        ASSERT_TRUE(bool(viewOfE))
            << printLayout(m, e) << " has the view " << printLayout(m, col)
            << ": " << errorOf(std::move(viewOfE));
        ASSERT_TRUE(sameBytes(m, e, *viewOfE, dims));
        Expected<Layout> viewOfC = expandedView(m, col, dims);
        ASSERT_TRUE(bool(viewOfC))
            << printLayout(m, col) << " has the view " << printLayout(m, e)
            << ": " << errorOf(std::move(viewOfC));
        ASSERT_TRUE(sameBytes(m, *viewOfC, col, dims));
      }
  }
  EXPECT_GT(pairs, 100);
}

} // namespace
