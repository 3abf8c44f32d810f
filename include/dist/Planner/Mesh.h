//===- Mesh.h - Device mesh of semantics §1 ---------------------*- C++ -*-===//
//
// A mesh is an ordered list of named axes plus an optional device-id table.
// A device is addressed by its coordinate (one entry per axis); its linear
// index is row-major with axis 0 most significant, and its rank is
// devices[linear index] (the identity when no table is given).
//
//===----------------------------------------------------------------------===//
#ifndef DIST_PLANNER_MESH_H
#define DIST_PLANNER_MESH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace dist::planner {

/// Meshes have at most this many axes; the search packs one byte per axis.
constexpr unsigned kMaxMeshAxes = 8;
/// Upper bound on the number of devices, so that ranks fit in 32 bits.
constexpr int64_t kMaxMeshDevices = int64_t(1) << 31;

struct MeshAxis {
  std::string name;
  int64_t size;
};

class Mesh {
public:
  /// Validates 1..8 axes, unique non-empty names, sizes >= 1, at most 2^31
  /// devices, and `devices` either empty (identity) or N distinct world
  /// ranks in 0..2^31-1 (not necessarily 0..N-1: pipeline stages use
  /// disjoint sets). Error messages name the offending axis or value.
  static llvm::Expected<Mesh> create(std::vector<MeshAxis> axes,
                                     std::vector<int64_t> devices = {});
  /// Parses the text of semantics §1 `<["x"=2, "y"=4], devices = [3, 2, 1,
  /// 0]>`; the angle brackets are optional.
  static llvm::Expected<Mesh> parse(llvm::StringRef text);
  /// Prints in the syntax `parse` accepts, angle brackets included.
  std::string str() const;

  unsigned getNumAxes() const { return axes.size(); }
  const MeshAxis &getAxis(unsigned i) const { return axes[i]; }
  llvm::ArrayRef<MeshAxis> getAxes() const { return axes; }
  int64_t getAxisSize(unsigned i) const { return axes[i].size; }
  std::optional<unsigned> findAxis(llvm::StringRef name) const;

  int64_t getNumDevices() const { return numDevices; }
  /// The device-id table; empty when it is the identity.
  llvm::ArrayRef<int64_t> getDevices() const { return devices; }
  /// The world rank of the device with row-major linear index `index`.
  int64_t rankOfIndex(int64_t index) const {
    return devices.empty() ? index : devices[index];
  }
  /// The largest world rank the mesh names (N - 1 for the identity); a job
  /// needs more ranks than this.
  int64_t getMaxRank() const { return maxRank; }

  /// Coordinate of the device with the given row-major linear index.
  std::vector<int64_t> coordinateOf(int64_t linearIndex) const;
  /// Row-major linear index L(c) = sum_i c_i * prod_{j>i} size_j.
  int64_t linearIndexOf(llvm::ArrayRef<int64_t> coord) const;
  /// The device id devices[L(c)]; -1 when `coord` is not a coordinate of
  /// this mesh.
  int64_t rankOf(llvm::ArrayRef<int64_t> coord) const;
  /// Inverse of rankOf; empty when `rank` is not a device of this mesh.
  std::vector<int64_t> coordinateOfRank(int64_t rank) const;

  bool operator==(const Mesh &other) const {
    return numDevices == other.numDevices && devices == other.devices &&
           axes.size() == other.axes.size() &&
           std::equal(axes.begin(), axes.end(), other.axes.begin(),
                      [](const MeshAxis &a, const MeshAxis &b) {
                        return a.name == b.name && a.size == b.size;
                      });
  }
  bool operator!=(const Mesh &other) const { return !(*this == other); }

private:
  Mesh() = default;
  std::vector<MeshAxis> axes;
  std::vector<int64_t> devices; // empty: identity
  /// (rank, linear index) sorted by rank; empty: identity.
  std::vector<std::pair<int64_t, int64_t>> rankToIndex;
  int64_t numDevices = 1;
  int64_t maxRank = 0;
};

} // namespace dist::planner

#endif // DIST_PLANNER_MESH_H
