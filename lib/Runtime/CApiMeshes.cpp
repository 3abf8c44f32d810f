//===- CApiMeshes.cpp - C ABI: meshes and groups --------------------------===//
//
// Creating and querying meshes (semantics §1) and the groups over their
// axes; the handles and their registration are Handles.h's.
//
//===----------------------------------------------------------------------===//

#include "Errors.h"
#include "Handles.h"
#include "State.h"

#include "dist/Runtime/DistRuntime.h"

#include <string>
#include <vector>

using namespace dist::rt;

extern "C" {

int64_t distRtMeshCreate(int64_t numAxes, const int64_t *sizes,
                         const int64_t *devices) {
  return guardValue<int64_t>("mesh_create", -1, [&] {
    requireInit();
    return registerMesh(MeshSpec::create(numAxes, sizes, devices, S.size));
  });
}

int64_t distRtMeshNumAxes(int64_t mesh) {
  return guardValue<int64_t>("mesh_num_axes", -1, [&] {
    requireInit();
    return lookupMesh(mesh).spec.numAxes();
  });
}

int64_t distRtMeshCoord(int64_t mesh, int64_t axis) {
  return guardValue<int64_t>("mesh_coord", -1, [&] {
    requireInit();
    MeshEntry &m = lookupMesh(mesh);
    if (axis < 0 || axis >= m.spec.numAxes())
      invalid("unknown mesh axis " + std::to_string(axis) + " (the mesh has " +
              std::to_string(m.spec.numAxes()) + " axes)");
    return m.coords[axis]; // 0 on a rank outside the mesh
  });
}

int32_t distRtMeshContains(int64_t mesh) {
  return guardValue<int32_t>("mesh_contains", -1, [&] {
    requireInit();
    return lookupMesh(mesh).member ? 1 : 0;
  });
}

int64_t distRtGroup(int64_t mesh, int64_t numAxes, const int64_t *axes) {
  return guardValue<int64_t>("group", -1, [&]() -> int64_t {
    requireInit();
    MeshEntry &m = lookupMesh(mesh);
    if (numAxes < 0 || numAxes > m.spec.numAxes())
      invalid("a group of " + std::to_string(numAxes) +
              " axes on a mesh with " + std::to_string(m.spec.numAxes()) +
              " axes");
    if (numAxes > 0 && !axes)
      invalid("axes is null");
    return registerGroup(mesh, m, std::vector<int64_t>(axes, axes + numAxes));
  });
}

int64_t distRtGroupSize(int64_t group) {
  return guardValue<int64_t>("group_size", -1, [&] {
    requireInit();
    return static_cast<int64_t>(lookupGroup(group).spec.members.size());
  });
}

int64_t distRtGroupRank(int64_t group) {
  return guardValue<int64_t>("group_rank", -1, [&] {
    requireInit();
    return lookupGroup(group).spec.index;
  });
}

} // extern "C"
