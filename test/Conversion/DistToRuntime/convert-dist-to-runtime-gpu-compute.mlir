// RUN: dist-opt %s --convert-dist-to-runtime=target=gpu -verify-diagnostics
// Partitioned compute is lowered to host loops, which cannot touch the
// device buffers of target=gpu: a located error, never a crash at run time.

func.func @compute(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'linalg.generic' op is compute on sharded data, which target=gpu does not run yet (it is lowered to host loops); use target=cpu}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}
      ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %e = math.exp %in : f32
      linalg.yield %e : f32
  }
  return
}
