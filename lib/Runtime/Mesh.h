//===- Mesh.h - Mesh coordinates, groups, permute tables --------*- C++ -*-===//
//
// The pure index math behind distRtMeshCreate, distRtGroup and distRtPermute
// (semantics §1): no MPI here, so that it is unit-tested on its own and shared
// by every backend.
//
//===----------------------------------------------------------------------===//
#ifndef DIST_LIB_RUNTIME_MESH_H
#define DIST_LIB_RUNTIME_MESH_H

#include <cstdint>
#include <vector>

namespace dist::rt {

/// A validated device mesh: axis sizes and the full device table (identity
/// when the program gave none). The table lists N distinct world ranks >= 0,
/// not necessarily 0..N-1 (semantics §1): meshes of pipeline stages cover
/// disjoint sets of ranks, and a rank may belong to no mesh at all.
class MeshSpec {
public:
  /// Validates and builds a mesh; `devices` may be null (identity 0..N-1).
  /// `worldSize` >= 0 also requires every rank to be below it (-1: no
  /// bound). Throws Error(INVALID_ARGUMENT) naming the problem: no axes, a
  /// size < 1, a size product that overflows, a negative or repeated rank,
  /// a rank the job does not have ("the mesh names rank 7 ... but the job
  /// has only 4 ranks; run with --np 8 or more").
  static MeshSpec create(int64_t numAxes, const int64_t *sizes,
                         const int64_t *devices, int64_t worldSize = -1);

  int64_t numAxes() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t numDevices() const { return static_cast<int64_t>(devices_.size()); }
  const std::vector<int64_t> &sizes() const { return sizes_; }
  const std::vector<int64_t> &devices() const { return devices_; }
  /// The largest rank the mesh names (N-1 for an identity or permutation
  /// table).
  int64_t maxRank() const {
    return static_cast<int64_t>(linearOfRank_.size()) - 1;
  }
  /// Whether `rank` is a device of the mesh.
  bool contains(int64_t rank) const {
    return rank >= 0 && rank <= maxRank() && linearOfRank_[rank] >= 0;
  }
  /// Whether the mesh's ranks are exactly 0..worldSize-1 (in any order).
  bool coversWorld(int64_t worldSize) const {
    return numDevices() == worldSize && maxRank() == worldSize - 1;
  }

  /// Row-major linear index L(c) of a coordinate (axis 0 most significant).
  int64_t linearIndex(const std::vector<int64_t> &coords) const;
  /// The coordinate with linear index `linear`.
  std::vector<int64_t> coordsOfLinear(int64_t linear) const;
  /// World rank of a coordinate: devices[L(c)].
  int64_t rankOfCoords(const std::vector<int64_t> &coords) const;
  /// Coordinate of a world rank (inverse of rankOfCoords); `rank` must be a
  /// device of the mesh (contains).
  std::vector<int64_t> coordsOfRank(int64_t rank) const;

  bool operator==(const MeshSpec &other) const {
    return sizes_ == other.sizes_ && devices_ == other.devices_;
  }

private:
  std::vector<int64_t> sizes_;
  std::vector<int64_t> devices_;      // linear index -> rank
  std::vector<int64_t> linearOfRank_; // rank 0..maxRank -> linear index or -1
};

/// One process's view of the group over an ordered list of mesh axes.
struct GroupSpec {
  /// Identifies the group among all groups over the same axes: the row-major
  /// index of the coordinate restricted to the other axes. Every member
  /// computes the same color, and no two groups share one (MPI_Comm_split's
  /// color, ncclCommSplit's color).
  int64_t color = 0;
  /// This process's index in the group: its combined index over `axes`,
  /// axes[0] most significant (the split key).
  int64_t index = 0;
  /// World ranks of the members, by index.
  std::vector<int64_t> members;
};

/// Validates `axes` (in range, distinct) and computes the group of `rank`.
/// Throws Error(INVALID_ARGUMENT) for an unknown or repeated axis. For a rank
/// that is not a device of the mesh the group is that rank alone (color -1,
/// index 0, members {rank}): collectives on it do nothing.
GroupSpec computeGroup(const MeshSpec &mesh, const std::vector<int64_t> &axes,
                       int64_t rank);

/// What one rank does in a permute.
struct PermuteRole {
  int64_t source = -1;        ///< rank to receive from; -1: none
  std::vector<int64_t> dests; ///< ranks to send to (may include itself)
};

/// Checks the whole permute table against itself (see distRtPermute): ranks
/// in range, destOffsets non-decreasing from 0, no duplicate destination,
/// and every (s -> r) send matched by srcRank[r] == s and vice versa. Throws
/// Error(INVALID_ARGUMENT) describing the first inconsistency. `tableSize`
/// is the number of ranks the table has entries for (srcRank has tableSize
/// entries, destOffsets tableSize + 1).
void validatePermuteTable(int64_t tableSize, const int64_t *srcRank,
                          const int64_t *destOffsets, const int64_t *destList);

/// Number of ranks a permute table over `mesh` has entries for: one per
/// world rank 0..mesh.maxRank() (N when the mesh covers 0..N-1).
inline int64_t permuteTableSize(const MeshSpec &mesh) {
  return mesh.maxRank() + 1;
}

/// validatePermuteTable over permuteTableSize(mesh) ranks, and every rank of
/// the table that is not a device of the mesh has srcRank -1 and no
/// destinations.
void validatePermuteTable(const MeshSpec &mesh, const int64_t *srcRank,
                          const int64_t *destOffsets, const int64_t *destList);

/// The permute tables (as distRtPermute takes them) of the permute between
/// two layouts, given per tensor dim as `nSrc, srcAxes[nSrc], nDst,
/// dstAxes[nDst]` (axis indices, major to minor; distRtPermuteByLayouts).
/// Receiver r's sender keeps r's coordinate on every axis that splits no
/// dim in the source; on the source's axes of dim d it takes the
/// mixed-radix digits of r's shard index along d in the target (the
/// planner's permuteSender). Throws Error(INVALID_ARGUMENT) for a malformed
/// description: a count or an axis out of range, an axis listed twice on one
/// side, a dim whose two sides have different shard counts, or a
/// description longer or shorter than `dimAxesSize` entries.
struct PermuteTables {
  std::vector<int64_t> srcRank, destOffsets, destList;
};
PermuteTables permuteTablesFromLayouts(const MeshSpec &mesh, int64_t numDims,
                                       const int64_t *dimAxes,
                                       int64_t dimAxesSize);

/// The role of `rank` in a (validated) permute table.
PermuteRole permuteRole(int64_t rank, const int64_t *srcRank,
                        const int64_t *destOffsets, const int64_t *destList);

/// A 64-bit FNV-1a hash of the table, so that ranks can cheaply check that
/// they all execute the same permute.
uint64_t hashPermuteTable(int64_t tableSize, const int64_t *srcRank,
                          const int64_t *destOffsets, const int64_t *destList);

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_MESH_H
