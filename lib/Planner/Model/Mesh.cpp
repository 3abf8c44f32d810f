//===- Mesh.cpp - Device mesh of semantics §1 -----------------------------===//

#include "dist/Planner/Mesh.h"
#include "Model/Syntax.h"
#include "dist/Support/MixedRadix.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace dist::planner;
using llvm::createStringError;
using llvm::Error;
using llvm::Expected;
using llvm::inconvertibleErrorCode;

std::string dist::planner::detail::quoteName(llvm::StringRef name) {
  std::string out = "\"";
  for (char c : name) {
    if (c == '"' || c == '\\')
      out.push_back('\\');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

Expected<Mesh> Mesh::create(std::vector<MeshAxis> axes,
                            std::vector<int64_t> devices) {
  auto fail = [](const llvm::Twine &msg) -> Error {
    return createStringError(inconvertibleErrorCode(), msg);
  };
  if (axes.empty())
    return fail("a mesh needs at least one axis");
  if (axes.size() > kMaxMeshAxes)
    return fail("a mesh has at most " + llvm::Twine(kMaxMeshAxes) +
                " axes, got " + llvm::Twine(axes.size()));
  llvm::StringSet<> seen;
  int64_t numDevices = 1;
  for (const MeshAxis &axis : axes) {
    if (axis.name.empty())
      return fail("mesh axis names must not be empty");
    // Plans name axes in JSON, which must be UTF-8 (found by fuzzing: a
    // plan's JSON did not read back).
    if (!llvm::json::isUTF8(axis.name))
      return fail("mesh axis names must be valid UTF-8, got " +
                  detail::quoteName(axis.name));
    if (!seen.insert(axis.name).second)
      return fail("mesh axis " + detail::quoteName(axis.name) +
                  " appears more than once");
    if (axis.size < 1)
      return fail("mesh axis " + detail::quoteName(axis.name) + " has size " +
                  llvm::Twine(axis.size) + "; sizes must be at least 1");
    if (llvm::MulOverflow(numDevices, axis.size, numDevices) ||
        numDevices > kMaxMeshDevices)
      return fail("mesh has more than 2^31 devices (at axis " +
                  detail::quoteName(axis.name) + ")");
  }
  Mesh mesh;
  if (!devices.empty()) {
    if (int64_t(devices.size()) != numDevices)
      return fail("mesh devices list has " + llvm::Twine(devices.size()) +
                  " entries but the mesh has " + llvm::Twine(numDevices) +
                  " devices");
    // Ranks are world ranks (semantics §1): any distinct ranks >= 0, so that
    // pipeline stages can live on disjoint sets of ranks.
    std::vector<std::pair<int64_t, int64_t>> inverse;
    inverse.reserve(devices.size());
    for (size_t i = 0; i < devices.size(); ++i) {
      int64_t id = devices[i];
      if (id < 0 || id >= kMaxMeshDevices)
        return fail("mesh device id " + llvm::Twine(id) + " (entry " +
                    llvm::Twine(i) + ") is not a rank in 0..2^31-1");
      inverse.push_back({id, int64_t(i)});
    }
    std::sort(inverse.begin(), inverse.end());
    for (size_t i = 1; i < inverse.size(); ++i)
      if (inverse[i].first == inverse[i - 1].first)
        return fail("mesh device id " + llvm::Twine(inverse[i].first) +
                    " appears more than once; devices must be distinct ranks");
    // An identity table carries no information; drop it so that equal
    // meshes compare (and hash, in the plan cache) equal.
    bool identity = true;
    for (size_t i = 0; i < devices.size() && identity; ++i)
      identity = devices[i] == int64_t(i);
    if (!identity) {
      mesh.maxRank = inverse.back().first;
      mesh.devices = std::move(devices);
      mesh.rankToIndex = std::move(inverse);
    }
  }
  mesh.axes = std::move(axes);
  mesh.numDevices = numDevices;
  if (mesh.devices.empty())
    mesh.maxRank = numDevices - 1;
  return mesh;
}

Expected<Mesh> Mesh::parse(llvm::StringRef text) {
  detail::Cursor cur(text, "mesh");
  bool angle = cur.tryConsume('<');
  if (Error e = cur.expect('['))
    return std::move(e);
  std::vector<MeshAxis> axes;
  if (!cur.tryConsume(']')) {
    do {
      MeshAxis axis;
      if (Error e = cur.parseString(axis.name))
        return std::move(e);
      if (Error e = cur.expect('='))
        return std::move(e);
      if (Error e = cur.parseInt(axis.size))
        return std::move(e);
      axes.push_back(std::move(axis));
    } while (cur.tryConsume(','));
    if (Error e = cur.expect(']'))
      return std::move(e);
  }
  std::vector<int64_t> devices;
  if (cur.tryConsume(',')) {
    if (!cur.tryKeyword("devices"))
      return cur.error("expected 'devices'");
    if (Error e = cur.expect('='))
      return std::move(e);
    if (Error e = cur.expect('['))
      return std::move(e);
    if (!cur.tryConsume(']')) {
      do {
        int64_t id;
        if (Error e = cur.parseInt(id))
          return std::move(e);
        devices.push_back(id);
      } while (cur.tryConsume(','));
      if (Error e = cur.expect(']'))
        return std::move(e);
    }
    if (devices.empty())
      return cur.error("the devices list is empty");
  }
  if (angle)
    if (Error e = cur.expect('>'))
      return std::move(e);
  if (Error e = cur.expectEnd())
    return std::move(e);
  return create(std::move(axes), std::move(devices));
}

std::string Mesh::str() const {
  std::string out = "<[";
  for (size_t i = 0; i < axes.size(); ++i) {
    if (i)
      out += ", ";
    out += detail::quoteName(axes[i].name) + "=" + std::to_string(axes[i].size);
  }
  out += "]";
  if (!devices.empty()) {
    out += ", devices = [";
    for (size_t i = 0; i < devices.size(); ++i) {
      if (i)
        out += ", ";
      out += std::to_string(devices[i]);
    }
    out += "]";
  }
  out += ">";
  return out;
}

std::optional<unsigned> Mesh::findAxis(llvm::StringRef name) const {
  for (unsigned i = 0; i < axes.size(); ++i)
    if (axes[i].name == name)
      return i;
  return std::nullopt;
}

std::vector<int64_t> Mesh::coordinateOf(int64_t linearIndex) const {
  std::vector<int64_t> coord(axes.size(), 0);
  dist::mixed_radix::decompose(
      linearIndex, axes.size(), [&](size_t i) { return axes[i].size; },
      [&](size_t i, int64_t digit) { coord[i] = digit; });
  return coord;
}

int64_t Mesh::linearIndexOf(llvm::ArrayRef<int64_t> coord) const {
  return dist::mixed_radix::compose(
      axes.size(), [&](size_t i) { return i < coord.size() ? coord[i] : 0; },
      [&](size_t i) { return axes[i].size; });
}

int64_t Mesh::rankOf(llvm::ArrayRef<int64_t> coord) const {
  if (coord.size() != axes.size())
    return -1;
  for (size_t i = 0; i < axes.size(); ++i)
    if (coord[i] < 0 || coord[i] >= axes[i].size)
      return -1;
  int64_t index = linearIndexOf(coord);
  return devices.empty() ? index : devices[index];
}

std::vector<int64_t> Mesh::coordinateOfRank(int64_t rank) const {
  if (rankToIndex.empty())
    return rank >= 0 && rank < numDevices ? coordinateOf(rank)
                                          : std::vector<int64_t>();
  auto it = std::lower_bound(rankToIndex.begin(), rankToIndex.end(),
                             std::pair<int64_t, int64_t>(rank, -1));
  if (it == rankToIndex.end() || it->first != rank)
    return {};
  return coordinateOf(it->second);
}
