//===- Mesh.cpp - Mesh coordinates, groups, permute tables ----------------===//

#include "Mesh.h"
#include "Types.h"

#include "dist/Support/MixedRadix.h"

#include <algorithm>
#include <string>

namespace dist::rt {

namespace {
[[noreturn]] void invalid(const std::string &reason) {
  throw Error(DIST_RT_ERR_INVALID_ARGUMENT, reason);
}
} // namespace

MeshSpec MeshSpec::create(int64_t numAxes, const int64_t *sizes,
                          const int64_t *devices, int64_t worldSize) {
  if (numAxes < 1)
    invalid("a mesh needs at least one axis (got " + std::to_string(numAxes) +
            ")");
  if (numAxes > 64)
    invalid("a mesh has at most 64 axes (got " + std::to_string(numAxes) + ")");
  if (!sizes)
    invalid("axis sizes are null");
  MeshSpec m;
  int64_t n = 1;
  for (int64_t a = 0; a < numAxes; ++a) {
    if (sizes[a] < 1)
      invalid("axis " + std::to_string(a) + " has size " +
              std::to_string(sizes[a]) + " (sizes must be >= 1)");
    if (__builtin_mul_overflow(n, sizes[a], &n) || n > (int64_t(1) << 31))
      invalid("the mesh has more than 2^31 devices");
    m.sizes_.push_back(sizes[a]);
  }
  // Ranks first: in range of the job, not negative. The largest one names
  // the job size the program needs.
  int64_t maxRank = -1, maxAt = 0;
  for (int64_t l = 0; l < n; ++l) {
    int64_t r = devices ? devices[l] : l;
    if (r < 0)
      invalid("devices[" + std::to_string(l) + "] = " + std::to_string(r) +
              " is not a rank (ranks are >= 0)");
    if (r > maxRank) {
      maxRank = r;
      maxAt = l;
    }
  }
  if (worldSize >= 0 && maxRank >= worldSize) {
    std::string where = devices ? "devices[" + std::to_string(maxAt) + "]"
                                : std::to_string(n) +
                                      " devices, no device table: ranks 0.." +
                                      std::to_string(n - 1);
    invalid("the mesh names rank " + std::to_string(maxRank) + " (" + where +
            ") but the job has only " + std::to_string(worldSize) +
            " ranks; run with --np " + std::to_string(maxRank + 1) +
            " or more");
  }
  if (maxRank >= (int64_t(1) << 31))
    invalid("the mesh names rank " + std::to_string(maxRank) + " (devices[" +
            std::to_string(maxAt) + "]); ranks are below 2^31");
  m.devices_.resize(n);
  m.linearOfRank_.assign(maxRank + 1, -1);
  for (int64_t l = 0; l < n; ++l) {
    int64_t r = devices ? devices[l] : l;
    if (m.linearOfRank_[r] != -1)
      invalid("the device table names rank " + std::to_string(r) +
              " twice, at devices[" + std::to_string(m.linearOfRank_[r]) +
              "] and devices[" + std::to_string(l) + "]");
    m.devices_[l] = r;
    m.linearOfRank_[r] = l;
  }
  return m;
}

int64_t MeshSpec::linearIndex(const std::vector<int64_t> &coords) const {
  return mixed_radix::compose(
      sizes_.size(), [&](size_t a) { return coords[a]; },
      [&](size_t a) { return sizes_[a]; });
}

std::vector<int64_t> MeshSpec::coordsOfLinear(int64_t linear) const {
  std::vector<int64_t> c(sizes_.size());
  mixed_radix::decompose(
      linear, sizes_.size(), [&](size_t a) { return sizes_[a]; },
      [&](size_t a, int64_t digit) { c[a] = digit; });
  return c;
}

int64_t MeshSpec::rankOfCoords(const std::vector<int64_t> &coords) const {
  return devices_[linearIndex(coords)];
}

std::vector<int64_t> MeshSpec::coordsOfRank(int64_t rank) const {
  return coordsOfLinear(linearOfRank_[rank]);
}

GroupSpec computeGroup(const MeshSpec &mesh, const std::vector<int64_t> &axes,
                       int64_t rank) {
  const int64_t numAxes = mesh.numAxes();
  std::vector<bool> inGroup(numAxes, false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i];
    if (a < 0 || a >= numAxes)
      invalid("unknown mesh axis " + std::to_string(a) + " (the mesh has " +
              std::to_string(numAxes) + " axes, 0.." +
              std::to_string(numAxes - 1) + ")");
    if (inGroup[a])
      invalid("mesh axis " + std::to_string(a) +
              " appears twice in the group's axis list");
    inGroup[a] = true;
  }
  const std::vector<int64_t> &sizes = mesh.sizes();
  GroupSpec g;
  if (!mesh.contains(rank)) {
    // Not a device of the mesh: a group of one that collectives skip.
    g.color = -1;
    g.members = {rank};
    return g;
  }
  std::vector<int64_t> coords = mesh.coordsOfRank(rank);

  // Color: row-major index over the axes outside the group, in mesh order
  // (a group axis is a digit 0 of radix 1).
  g.color = mixed_radix::compose(
      sizes.size(), [&](size_t a) { return inGroup[a] ? 0 : coords[a]; },
      [&](size_t a) { return inGroup[a] ? int64_t(1) : sizes[a]; });
  // Index: combined index over the group's axes, in the caller's order.
  auto axisSize = [&](size_t i) { return sizes[axes[i]]; };
  g.index = mixed_radix::compose(
      axes.size(), [&](size_t i) { return coords[axes[i]]; }, axisSize);
  int64_t groupSize = 1;
  for (int64_t a : axes)
    groupSize *= sizes[a];
  g.members.resize(groupSize);
  std::vector<int64_t> c = coords;
  for (int64_t k = 0; k < groupSize; ++k) {
    mixed_radix::decompose(
        k, axes.size(), axisSize,
        [&](size_t i, int64_t digit) { c[axes[i]] = digit; });
    g.members[k] = mesh.rankOfCoords(c);
  }
  return g;
}

void validatePermuteTable(int64_t tableSize, const int64_t *srcRank,
                          const int64_t *destOffsets, const int64_t *destList) {
  if (!srcRank || !destOffsets)
    invalid("permute table: srcRank and destOffsets must not be null");
  if (destOffsets[0] != 0)
    invalid("permute table: destOffsets[0] is " +
            std::to_string(destOffsets[0]) + ", expected 0");
  for (int64_t r = 0; r < tableSize; ++r)
    if (destOffsets[r + 1] < destOffsets[r])
      invalid("permute table: destOffsets decreases at rank " +
              std::to_string(r));
  if (destOffsets[tableSize] > 0 && !destList)
    invalid("permute table: destList is null but destOffsets lists " +
            std::to_string(destOffsets[tableSize]) + " destinations");
  for (int64_t r = 0; r < tableSize; ++r)
    if (srcRank[r] < -1 || srcRank[r] >= tableSize)
      invalid("permute table: srcRank[" + std::to_string(r) + "] = " +
              std::to_string(srcRank[r]) + " is not a rank (or -1) of a " +
              std::to_string(tableSize) + "-rank table");
  // Every listed send must be the receiver's declared source; count them so
  // that, with no duplicates, every declared source is matched by a send.
  std::vector<int64_t> sendsTo(tableSize, 0);
  for (int64_t s = 0; s < tableSize; ++s) {
    for (int64_t k = destOffsets[s]; k < destOffsets[s + 1]; ++k) {
      int64_t d = destList[k];
      if (d < 0 || d >= tableSize)
        invalid("permute table: rank " + std::to_string(s) + " sends to " +
                std::to_string(d) + ", which is not a rank");
      if (srcRank[d] != s)
        invalid("permute table: rank " + std::to_string(s) + " sends to " +
                std::to_string(d) + " but srcRank[" + std::to_string(d) +
                "] = " + std::to_string(srcRank[d]));
      if (++sendsTo[d] > 1)
        invalid("permute table: rank " + std::to_string(s) + " lists " +
                std::to_string(d) + " twice");
    }
  }
  // A local copy (srcRank[r] == r) may or may not list r among r's
  // destinations; any other source must list its receiver.
  for (int64_t r = 0; r < tableSize; ++r)
    if (srcRank[r] >= 0 && srcRank[r] != r && sendsTo[r] == 0)
      invalid("permute table: srcRank[" + std::to_string(r) +
              "] = " + std::to_string(srcRank[r]) + " but rank " +
              std::to_string(srcRank[r]) + " does not list " +
              std::to_string(r) + " as a destination");
}

void validatePermuteTable(const MeshSpec &mesh, const int64_t *srcRank,
                          const int64_t *destOffsets, const int64_t *destList) {
  const int64_t size = permuteTableSize(mesh);
  validatePermuteTable(size, srcRank, destOffsets, destList);
  for (int64_t r = 0; r < size; ++r) {
    if (mesh.contains(r))
      continue;
    if (srcRank[r] != -1)
      invalid("permute table: rank " + std::to_string(r) +
              " is not a device of the mesh but srcRank[" + std::to_string(r) +
              "] = " + std::to_string(srcRank[r]) + " (expected -1)");
    if (destOffsets[r + 1] != destOffsets[r])
      invalid("permute table: rank " + std::to_string(r) +
              " is not a device of the mesh but lists destinations");
  }
}

PermuteTables permuteTablesFromLayouts(const MeshSpec &mesh, int64_t numDims,
                                       const int64_t *dimAxes,
                                       int64_t dimAxesSize) {
  if (numDims < 0 || numDims > 64)
    invalid("permute layouts: " + std::to_string(numDims) +
            " dims (expected 0..64)");
  if (dimAxesSize < 0 || (dimAxesSize > 0 && !dimAxes))
    invalid("permute layouts: the dim description is null or has a negative "
            "size");
  // Per dim: the source's and the target's axes, validated.
  struct Dim {
    std::vector<int64_t> src, dst;
  };
  std::vector<Dim> dims(numDims);
  int64_t at = 0;
  std::vector<bool> seenSrc(mesh.numAxes(), false),
      seenDst(mesh.numAxes(), false);
  auto read = [&](int64_t d) {
    if (at >= dimAxesSize)
      invalid("permute layouts: the description ends inside dim " +
              std::to_string(d) + " (" + std::to_string(dimAxesSize) +
              " entries)");
    return dimAxes[at++];
  };
  auto readAxes = [&](int64_t d, const char *side, std::vector<bool> &seen,
                      std::vector<int64_t> &out) {
    int64_t count = read(d);
    if (count < 0 || count > mesh.numAxes())
      invalid("permute layouts: dim " + std::to_string(d) + " lists " +
              std::to_string(count) + " " + side + " axes");
    for (int64_t k = 0; k < count; ++k) {
      int64_t axis = read(d);
      if (axis < 0 || axis >= mesh.numAxes())
        invalid("permute layouts: dim " + std::to_string(d) + " names " + side +
                " axis " + std::to_string(axis) + " of a mesh with " +
                std::to_string(mesh.numAxes()) + " axes");
      if (seen[axis])
        invalid("permute layouts: " + std::string(side) + " axis " +
                std::to_string(axis) + " is listed twice");
      seen[axis] = true;
      out.push_back(axis);
    }
  };
  for (int64_t d = 0; d < numDims; ++d) {
    readAxes(d, "source", seenSrc, dims[d].src);
    readAxes(d, "target", seenDst, dims[d].dst);
    int64_t srcParts = 1, dstParts = 1;
    for (int64_t axis : dims[d].src)
      srcParts *= mesh.sizes()[axis];
    for (int64_t axis : dims[d].dst)
      dstParts *= mesh.sizes()[axis];
    if (srcParts != dstParts)
      invalid("permute layouts: dim " + std::to_string(d) + " has " +
              std::to_string(srcParts) + " shards in the source but " +
              std::to_string(dstParts) + " in the target");
  }
  if (at != dimAxesSize)
    invalid("permute layouts: " + std::to_string(dimAxesSize - at) +
            " entries left after " + std::to_string(numDims) + " dims");

  PermuteTables t;
  const int64_t size = permuteTableSize(mesh);
  t.srcRank.assign(size, -1);
  for (int64_t linear = 0; linear < mesh.numDevices(); ++linear) {
    std::vector<int64_t> receiver = mesh.coordsOfLinear(linear);
    std::vector<int64_t> sender = receiver;
    // The planner's rule (planner::permuteSender), from the one definition.
    mixed_radix::permuteSenderInPlace(
        sender, dims.size(),
        [&](size_t d) -> const std::vector<int64_t> & { return dims[d].src; },
        [&](size_t d) -> const std::vector<int64_t> & { return dims[d].dst; },
        [&](int64_t axis) { return mesh.sizes()[axis]; });
    t.srcRank[mesh.devices()[linear]] = mesh.rankOfCoords(sender);
  }
  // Each sender's receivers, in rank order (itself excluded: a local copy).
  std::vector<int64_t> counts(size, 0);
  for (int64_t r = 0; r < size; ++r)
    if (t.srcRank[r] >= 0 && t.srcRank[r] != r)
      ++counts[t.srcRank[r]];
  t.destOffsets.assign(size + 1, 0);
  for (int64_t r = 0; r < size; ++r)
    t.destOffsets[r + 1] = t.destOffsets[r] + counts[r];
  t.destList.assign(std::max<int64_t>(t.destOffsets[size], 1), -1);
  std::vector<int64_t> next(t.destOffsets.begin(), t.destOffsets.end() - 1);
  for (int64_t r = 0; r < size; ++r)
    if (t.srcRank[r] >= 0 && t.srcRank[r] != r)
      t.destList[next[t.srcRank[r]]++] = r;
  return t;
}

PermuteRole permuteRole(int64_t rank, const int64_t *srcRank,
                        const int64_t *destOffsets, const int64_t *destList) {
  PermuteRole role;
  role.source = srcRank[rank];
  for (int64_t k = destOffsets[rank]; k < destOffsets[rank + 1]; ++k)
    role.dests.push_back(destList[k]);
  return role;
}

uint64_t hashPermuteTable(int64_t tableSize, const int64_t *srcRank,
                          const int64_t *destOffsets, const int64_t *destList) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xffu;
      h *= 1099511628211ull;
    }
  };
  for (int64_t r = 0; r < tableSize; ++r)
    mix(srcRank[r]);
  for (int64_t r = 0; r <= tableSize; ++r)
    mix(destOffsets[r]);
  for (int64_t k = 0; k < destOffsets[tableSize]; ++k)
    mix(destList[k]);
  return h;
}

} // namespace dist::rt
