//===- Handles.cpp - Mesh and group handles -------------------------------===//

#include "Handles.h"

#include "ControlPlane.h"

#include <string>
#include <utility>

namespace dist::rt {

namespace {

constexpr int64_t kTagShift = 40;
constexpr int64_t kMeshTag = int64_t(1) << kTagShift;
constexpr int64_t kGroupTag = int64_t(2) << kTagShift;
constexpr int64_t kIndexMask = (int64_t(1) << kTagShift) - 1;

} // namespace

MeshEntry &lookupMesh(int64_t handle) {
  int64_t index = handle & kIndexMask;
  if ((handle & ~kIndexMask) != kMeshTag || index >= (int64_t)S.meshes.size())
    throw Error(DIST_RT_ERR_BAD_HANDLE,
                "bad mesh handle " + std::to_string(handle));
  return S.meshes[index];
}

GroupEntry &lookupGroup(int64_t handle) {
  int64_t index = handle & kIndexMask;
  if ((handle & ~kIndexMask) != kGroupTag || index >= (int64_t)S.groups.size())
    throw Error(DIST_RT_ERR_BAD_HANDLE,
                "bad group handle " + std::to_string(handle));
  return *S.groups[index];
}

int64_t registerMesh(MeshSpec spec) {
  for (size_t i = 0; i < S.meshes.size(); ++i)
    if (S.meshes[i].spec == spec)
      return kMeshTag | static_cast<int64_t>(i);
  MeshEntry m;
  m.member = spec.contains(S.rank);
  m.coords = m.member ? spec.coordsOfRank(S.rank)
                      : std::vector<int64_t>(spec.numAxes(), 0);
  m.spec = std::move(spec);
  S.meshes.push_back(std::move(m));
  return kMeshTag | static_cast<int64_t>(S.meshes.size() - 1);
}

int64_t registerGroup(int64_t mesh, const MeshEntry &m,
                      const std::vector<int64_t> &axes) {
  auto key = std::make_pair(mesh, axes);
  auto it = S.groupCache.find(key);
  if (it != S.groupCache.end())
    return it->second;

  auto g = std::make_unique<GroupEntry>();
  g->mesh = mesh;
  g->axes = axes;
  g->spec = computeGroup(m.spec, axes, S.rank);
  g->member = m.member;
  splitGroupComm(*g);
  // A rank outside the mesh takes its part in the backend's world-collective
  // setup too, and gets no backend state.
  g->backendComm =
      g->member
          ? S.backend->createComm(g->comm, static_cast<int>(g->spec.color),
                                  static_cast<int>(g->spec.index))
          : S.backend->createComm(MPI_COMM_NULL, -1, 0);
  S.groups.push_back(std::move(g));
  int64_t handle = kGroupTag | static_cast<int64_t>(S.groups.size() - 1);
  S.groupCache.emplace(std::move(key), handle);
  return handle;
}

} // namespace dist::rt
