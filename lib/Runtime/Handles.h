//===- Handles.h - Mesh and group handles -----------------------*- C++ -*-===//
//
// The C ABI names meshes and groups by int64_t handles: an index into the
// process state's tables plus a tag, so that a group handle passed as a mesh
// (or a stale integer) is caught instead of silently aliasing another
// object. Registering a mesh or a group returns the handle of an equal one
// already registered.
//
//===----------------------------------------------------------------------===//

#ifndef DIST_LIB_RUNTIME_HANDLES_H
#define DIST_LIB_RUNTIME_HANDLES_H

#include "State.h"

#include <cstdint>
#include <vector>

namespace dist::rt {

/// The entry behind a handle; Error(BAD_HANDLE) for anything else.
MeshEntry &lookupMesh(int64_t handle);
GroupEntry &lookupGroup(int64_t handle);

/// The handle of `spec`, registered on first use.
int64_t registerMesh(MeshSpec spec);

/// The handle of the group of mesh `mesh` (whose entry is `m`) over `axes`
/// (validated by the caller), created on first use: collective over the
/// world, every rank creating the same groups in the same order.
int64_t registerGroup(int64_t mesh, const MeshEntry &m,
                      const std::vector<int64_t> &axes);

} // namespace dist::rt

#endif // DIST_LIB_RUNTIME_HANDLES_H
