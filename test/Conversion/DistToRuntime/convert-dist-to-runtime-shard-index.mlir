// RUN: dist-opt %s --convert-dist-to-runtime | FileCheck %s
// dist.local.shard_index is this device's group index over the axes, from
// its mesh coordinates: local, no communication.

dist.mesh @m = <["x"=2, "y"=3]>

// CHECK-LABEL: func @index
// CHECK: %[[MESH:.*]] = call @distRtMeshCreate
// CHECK: %[[X:.*]] = call @distRtMeshCoord(%[[MESH]], %{{.*}})
// CHECK: %[[Y:.*]] = call @distRtMeshCoord(%[[MESH]], %{{.*}})
// CHECK: %[[YI:.*]] = arith.index_cast %[[Y]] : i64 to index
// CHECK: %[[S:.*]] = arith.addi %{{.*}}, %[[YI]] : index
// CHECK: return %[[S]] : index
// CHECK-NOT: dist.local.shard_index
func.func @index() -> index {
  %s = dist.local.shard_index on @m axes = ["x", "y"] : index
  return %s : index
}
