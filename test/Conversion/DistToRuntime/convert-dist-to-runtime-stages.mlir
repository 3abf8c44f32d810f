// RUN: dist-opt %s --convert-dist-to-runtime | FileCheck %s
// Semantics §3c: a call of a stage function (dist.stage = @mesh) runs only
// on that mesh's ranks. Creating a group is collective over the world, so
// the groups the stage creates are created first, by every rank, outside
// the guard; the attribute goes, and with it the last use of the mesh.

dist.mesh @stage1 = <["tp"=2], devices = [2, 3]>

// CHECK-NOT: dist.mesh
// CHECK-LABEL: func.func private @layer
// CHECK-NOT: dist.stage
// CHECK: call @distRtGroup
// CHECK: call @distRtAllGather
func.func private @layer(%a: memref<4xf32>, %out: memref<8xf32>) attributes {dist.stage = @stage1} {
  dist.buffer.all_gather %a, %out on @stage1 axes = ["tp"] dim = 0 : memref<4xf32>, memref<8xf32>
  return
}

// CHECK-LABEL: func.func @caller
// CHECK: %[[GMESH:.*]] = call @distRtMeshCreate
// CHECK: call @distRtGroup(%[[GMESH]], %{{.*}}, %{{.*}})
// CHECK: %[[MESH:.*]] = call @distRtMeshCreate
// CHECK: %[[IN:.*]] = call @distRtMeshContains(%[[MESH]]) : (i64) -> i32
// CHECK: %[[MEMBER:.*]] = arith.cmpi ne, %[[IN]], %{{.*}} : i32
// CHECK: scf.if %[[MEMBER]] {
// CHECK-NEXT: call @layer(%{{.*}}, %{{.*}})
// CHECK-NEXT: }
// CHECK: call @plain
// CHECK-NOT: scf.if
// CHECK: return
func.func @caller(%a: memref<4xf32>, %out: memref<8xf32>) {
  call @layer(%a, %out) : (memref<4xf32>, memref<8xf32>) -> ()
  call @plain(%a, %out) : (memref<4xf32>, memref<8xf32>) -> ()
  return
}

// A function without the attribute runs everywhere.
func.func private @plain(%a: memref<4xf32>, %out: memref<8xf32>) {
  return
}
