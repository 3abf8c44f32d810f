//===- StridedGeometryTests.cpp - Boxes of the strided all-to-all ---------===//
//
// The geometry behind distRtAllToAllStrided (lib/Runtime/StridedGeometry.h):
// the box a side describes, its extent and contiguity, the overlap check of
// recv boxes, and the staging copies, against addresses enumerated here.
//
//===----------------------------------------------------------------------===//

#include "ErrorCapture.h"

#include "../../lib/Runtime/StridedGeometry.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace dist::rt;
using dist::rt::test::errorReport;

namespace {

/// Element offsets of every element of the side's box, chunk-major and
/// row-major inside a chunk (the order of a plain all-to-all buffer).
std::vector<int64_t> elementOffsets(const StridedSide &side) {
  std::vector<int64_t> out;
  std::vector<int64_t> idx(side.numDims, 0);
  int64_t total = 1;
  for (int d = 0; d < side.numDims; ++d)
    total *= side.sizes[d];
  for (int64_t k = 0; k < total; ++k) {
    int64_t off = 0;
    for (int d = 0; d < side.numDims; ++d)
      off += idx[d] * side.strides[d];
    out.push_back(off);
    for (int d = side.numDims - 1; d >= 0; --d) {
      if (++idx[d] < side.sizes[d])
        break;
      idx[d] = 0;
    }
  }
  return out;
}

} // namespace

TEST(StridedGeometry, ShapeElementsOrNegative) {
  int64_t shape[3] = {2, 3, 4};
  EXPECT_EQ(shapeElementsOrNegative(3, shape), 24);
  EXPECT_EQ(shapeElementsOrNegative(0, nullptr), 1);
  int64_t negative[2] = {2, -1};
  EXPECT_EQ(shapeElementsOrNegative(2, negative), -1);
  int64_t huge[3] = {int64_t(1) << 40, int64_t(1) << 40, 2};
  EXPECT_EQ(shapeElementsOrNegative(3, huge), -1);
  int64_t empty[2] = {0, 5};
  EXPECT_EQ(shapeElementsOrNegative(2, empty), 0);
}

// S(0) -> S(1) on 2 ranks of a 4 x 6 f32 tensor: the send side reads column
// blocks of the rows, the recv side writes whole row blocks.
TEST(StridedGeometry, ColumnBlocksAndRowBlocks) {
  std::vector<float> tensor(24);
  int64_t chunk[2] = {4, 3};
  int64_t rowMajor[2] = {6, 1};
  StridedSide send = stridedSide(2, 2, chunk, rowMajor, /*chunkStride=*/3,
                                 tensor.data(), DType::F32, "send");
  EXPECT_EQ(send.numDims, 3);
  EXPECT_EQ(send.sizes[0], 2);
  EXPECT_EQ(send.strides[0], 3);
  EXPECT_EQ(send.sizes[1], 4);
  EXPECT_EQ(send.strides[2], 1);
  EXPECT_EQ(send.elemBytes, 4u);
  EXPECT_FALSE(send.contiguous);
  EXPECT_EQ(send.extentBytes(), 24u * 4);
  EXPECT_EQ(send.begin(), reinterpret_cast<const char *>(tensor.data()));
  EXPECT_TRUE(boxIsInjective(send));

  int64_t packed[2] = {3, 1};
  StridedSide recv = stridedSide(2, 2, chunk, packed, /*chunkStride=*/12,
                                 tensor.data(), DType::F32, "recv");
  EXPECT_TRUE(recv.contiguous);
  EXPECT_EQ(recv.extentBytes(), 24u * 4);

  ChunkBoxes boxes = chunkBoxes(send);
  EXPECT_EQ(boxes.numDims, 2);
  EXPECT_EQ(boxes.chunkStride, 3);
  EXPECT_EQ(boxes.sizes, send.sizes + 1);
  EXPECT_EQ(boxes.strides, send.strides + 1);
}

TEST(StridedGeometry, ContiguityIgnoresSizeOneDims) {
  int64_t chunk[3] = {1, 5, 1};
  int64_t strides[3] = {1000, 1, 77};
  StridedSide side = stridedSide(3, 3, chunk, strides, /*chunkStride=*/5,
                                 nullptr, DType::I16, "send");
  EXPECT_TRUE(side.contiguous);
  EXPECT_EQ(side.extentBytes(), 15u * 2);
  side = stridedSide(3, 3, chunk, strides, /*chunkStride=*/6, nullptr,
                     DType::I16, "send");
  EXPECT_FALSE(side.contiguous);
}

TEST(StridedGeometry, NegativeStrideNamesTheSide) {
  int64_t chunk[2] = {2, 2};
  int64_t strides[2] = {2, -1};
  EXPECT_EQ(errorReport([&] {
              stridedSide(2, 2, chunk, strides, 4, nullptr, DType::F32, "recv");
            }),
            std::to_string(DIST_RT_ERR_INVALID_ARGUMENT) +
                ": recv stride 2 is negative (-1)");
  int64_t fine[2] = {2, 1};
  EXPECT_EQ(errorReport([&] {
              stridedSide(2, 2, chunk, fine, -4, nullptr, DType::F32, "send");
            }),
            std::to_string(DIST_RT_ERR_INVALID_ARGUMENT) +
                ": send stride 0 is negative (-4)");
}

TEST(StridedGeometry, OverlappingChunksAreCaught) {
  int64_t chunk[1] = {4};
  int64_t unit[1] = {1};
  // Chunks of 4 elements 3 apart share an element.
  StridedSide side =
      stridedSide(3, 1, chunk, unit, 3, nullptr, DType::F32, "recv");
  EXPECT_FALSE(boxIsInjective(side));
  side = stridedSide(3, 1, chunk, unit, 4, nullptr, DType::F32, "recv");
  EXPECT_TRUE(boxIsInjective(side));
  // Interleaved chunks (stride 3 inside, chunk stride 1) do not collide.
  int64_t spread[1] = {3};
  side = stridedSide(3, 1, chunk, spread, 1, nullptr, DType::F32, "recv");
  EXPECT_TRUE(boxIsInjective(side));
  // An empty box overlaps nothing, whatever its strides.
  int64_t empty[1] = {0};
  side = stridedSide(3, 1, empty, unit, 0, nullptr, DType::F32, "recv");
  EXPECT_TRUE(boxIsInjective(side));
}

// Whatever boxIsInjective accepts has distinct addresses; sub-boxes of
// row-major tensors, what the compiler emits, are all accepted.
TEST(StridedGeometry, InjectivityAgainstEnumeration) {
  std::mt19937 rng(23);
  std::uniform_int_distribution<int64_t> size(1, 4), stride(0, 12);
  int accepted = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    int64_t nd = 1 + trial % 3;
    int64_t chunk[3], strides[3];
    for (int64_t d = 0; d < nd; ++d) {
      chunk[d] = size(rng);
      strides[d] = stride(rng);
    }
    int64_t p = size(rng);
    StridedSide side = stridedSide(p, nd, chunk, strides, stride(rng), nullptr,
                                   DType::I8, "recv");
    std::vector<int64_t> offsets = elementOffsets(side);
    std::set<int64_t> distinct(offsets.begin(), offsets.end());
    if (boxIsInjective(side)) {
      ++accepted;
      EXPECT_EQ(distinct.size(), offsets.size()) << "trial " << trial;
    }

    // p chunks of a row-major tensor of shape [p * chunk[0], chunk[1..]]
    // (split on dim 0) or [chunk[0], p * chunk[1], ...] (split on dim 1).
    int64_t full[4];
    int split = nd > 1 && trial % 2 ? 1 : 0;
    for (int64_t d = 0; d < nd; ++d)
      full[d] = chunk[d] * (d == split ? p : 1);
    int64_t rowMajor[3];
    int64_t s = 1;
    for (int64_t d = nd - 1; d >= 0; --d) {
      rowMajor[d] = s;
      s *= full[d];
    }
    StridedSide sub =
        stridedSide(p, nd, chunk, rowMajor, chunk[split] * rowMajor[split],
                    nullptr, DType::I8, "recv");
    EXPECT_TRUE(boxIsInjective(sub)) << "trial " << trial;
  }
  EXPECT_GT(accepted, 100);
}

// Staging into a contiguous buffer lays the chunks out in plain all-to-all
// order; staging back out restores the side.
TEST(StridedGeometry, StagingRoundTrip) {
  // 3 chunks, each a 2 x 3 block of a 6 x 4 i32 tensor (split on dim 0
  // with a column offset of 1: the chunk stride steps two rows).
  std::vector<int32_t> tensor(24);
  for (int i = 0; i < 24; ++i)
    tensor[i] = 100 + i;
  int64_t chunk[2] = {2, 3};
  int64_t strides[2] = {4, 1};
  StridedSide side = stridedSide(3, 2, chunk, strides, 8, tensor.data() + 1,
                                 DType::I32, "send");
  ASSERT_FALSE(side.contiguous);
  std::vector<int32_t> stage(18, -1);
  copyCpu(stagePlan(side, /*toStage=*/true, stage.data()), side.base,
          stage.data());
  std::vector<int64_t> offsets = elementOffsets(side);
  ASSERT_EQ(offsets.size(), stage.size());
  for (size_t k = 0; k < offsets.size(); ++k)
    EXPECT_EQ(stage[k], tensor[1 + offsets[k]]) << k;

  std::vector<int32_t> out(24, 0);
  StridedSide outSide =
      stridedSide(3, 2, chunk, strides, 8, out.data() + 1, DType::I32, "recv");
  copyCpu(stagePlan(outSide, /*toStage=*/false, stage.data()), stage.data(),
          out.data() + 1);
  for (int i = 0; i < 24; ++i) {
    bool inBox = i >= 1 && (i - 1) % 4 < 3;
    EXPECT_EQ(out[i], inBox ? tensor[i] : 0) << i;
  }
}
