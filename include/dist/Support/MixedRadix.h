//===- MixedRadix.h - mesh coordinates, shard indices, blocks ---*- C++ -*-===//
//
// The arithmetic of semantics §1-§2 in one place, shared by the planner and
// the runtime: header-only and free of LLVM, MLIR and MPI, so that the
// runtime (which depends on nothing of ours at link time) can include it.
//
//  - a device's linear index is its coordinate read as a mixed-radix number,
//    axis 0 most significant (§1);
//  - its shard index along a dim is its coordinates on the dim's axes read
//    the same way, the first axis most significant (§2);
//  - a dim of N elements over P shards has blocks of ceil(N / P) elements,
//    shard s holding [s * B, min((s + 1) * B, N)); a segmented dim has one
//    such block per segment (§2 `segments`);
//  - a permute's receiver gets its buffer from the device whose digits on
//    the source's axes of each dim are the receiver's shard index along that
//    dim in the target, read in the source's radices (§3 `permute`).
//
// Digits and radices are passed as functions of the position (0 = most
// significant), so that the planner (axis records) and the runtime (plain
// arrays) read them from their own containers without copies.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_SUPPORT_MIXEDRADIX_H
#define DIST_SUPPORT_MIXEDRADIX_H

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace dist::mixed_radix {

/// ceil(n / d) for n >= 0 and d >= 1; a non-positive d (an invalid layout
/// the caller has not rejected yet) leaves n unchanged rather than dividing
/// by zero.
constexpr int64_t ceilDiv(int64_t n, int64_t d) {
  return d <= 0 ? n : (n + d - 1) / d;
}

/// The number whose `count` digits are digit(0..count-1) in radices
/// radix(0..count-1), digit 0 most significant.
template <typename DigitAt, typename RadixAt>
int64_t compose(size_t count, DigitAt digit, RadixAt radix) {
  int64_t number = 0;
  for (size_t i = 0; i < count; ++i)
    number = number * radix(i) + digit(i);
  return number;
}

/// The inverse of compose: calls setDigit(i, digit) for i = count-1 down to
/// 0. Radices must be >= 1.
template <typename RadixAt, typename SetDigit>
void decompose(int64_t number, size_t count, RadixAt radix, SetDigit setDigit) {
  for (size_t i = count; i-- > 0;) {
    int64_t r = radix(i);
    setDigit(i, number % r);
    number /= r;
  }
}

/// Elements per block when `extent` elements are cut into `parts` blocks.
constexpr int64_t blockSize(int64_t extent, int64_t parts) {
  return ceilDiv(extent, parts);
}

/// The first global index of block `shard`.
constexpr int64_t blockStart(int64_t shard, int64_t extent, int64_t parts) {
  return shard * blockSize(extent, parts);
}

/// How many real (not padding) elements block `shard` holds: 0 for a block
/// entirely past the end.
constexpr int64_t blockExtent(int64_t shard, int64_t extent, int64_t parts) {
  int64_t start = blockStart(shard, extent, parts);
  return std::max<int64_t>(
      0, std::min(start + blockSize(extent, parts), extent) - start);
}

/// The local extent of a dim holding one block of each of `count` segments
/// of lengths segment(0..count-1), each cut into `parts` blocks.
template <typename SegmentAt>
int64_t segmentedBlockSize(size_t count, SegmentAt segment, int64_t parts) {
  int64_t total = 0;
  for (size_t i = 0; i < count; ++i)
    total += blockSize(segment(i), parts);
  return total;
}

/// The permute sender rule: given a receiver's coordinate in `coord`
/// (overwritten with the sender's), for each of `numDims` dims the digits on
/// srcAxes(d) become the receiver's shard index along d over dstAxes(d).
/// srcAxes(d) and dstAxes(d) return containers of axis indices, major
/// first; size(axis) gives an axis's size. Axes no source dim lists keep the
/// receiver's coordinate.
template <typename Coord, typename SrcAxesOf, typename DstAxesOf,
          typename SizeOf>
void permuteSenderInPlace(Coord &coord, size_t numDims, SrcAxesOf srcAxes,
                          DstAxesOf dstAxes, SizeOf size) {
  Coord receiver = coord;
  for (size_t d = 0; d < numDims; ++d) {
    const auto &dst = dstAxes(d);
    const auto &src = srcAxes(d);
    int64_t shard = compose(
        dst.size(), [&](size_t i) { return receiver[dst[i]]; },
        [&](size_t i) { return size(dst[i]); });
    decompose(
        shard, src.size(), [&](size_t i) { return size(src[i]); },
        [&](size_t i, int64_t digit) { coord[src[i]] = digit; });
  }
}

} // namespace dist::mixed_radix

#endif // DIST_SUPPORT_MIXEDRADIX_H
