// The local compute pipeline of target=cpu (dist-cpu-compute: elementwise
// fusion, row fusion, vectorization) on a softmax, an RMSNorm and a SwiGLU:
// each becomes one loop nest over rows whose ops are vector code.
// RUN: dist-opt %s --dist-cpu-compute | FileCheck %s

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// CHECK-LABEL: func.func @softmax
// CHECK-NOT:   linalg.
// CHECK:       %[[LOOP:.*]] = scf.for
// CHECK:         vector.multi_reduction <maxnumf>
// CHECK:         math.exp %{{.*}} : vector<16xf32>
// CHECK:         vector.multi_reduction <add>
// CHECK:         arith.divf %{{.*}} : vector<16xf32>
// CHECK-NOT:   linalg.
// CHECK:       return %[[LOOP]]
func.func @softmax(%x: tensor<64x512xf32>) -> tensor<64x512xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %e = tensor.empty() : tensor<64x512xf32>
  %er = tensor.empty() : tensor<64xf32>
  %mi = linalg.fill ins(%nan : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %max = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x512xf32>) outs(%mi : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maxnumf %in, %out : f32
    linalg.yield %m : f32
  } -> tensor<64xf32>
  %exp = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %max : tensor<64x512xf32>, tensor<64xf32>) outs(%e : tensor<64x512xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<64x512xf32>
  %si = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<64x512xf32>) outs(%si : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %p = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<64x512xf32>, tensor<64xf32>) outs(%e : tensor<64x512xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %q = arith.divf %in, %s : f32
    linalg.yield %q : f32
  } -> tensor<64x512xf32>
  return %p : tensor<64x512xf32>
}

// CHECK-LABEL: func.func @rms_norm
// CHECK-NOT:   linalg.
// CHECK:       %[[LOOP:.*]] = scf.for
// CHECK:         arith.mulf %{{.*}} : vector<64xf32>
// CHECK:         vector.multi_reduction <add>
// CHECK:         math.rsqrt %{{.*}} : vector<16xf32>
// CHECK-NOT:   linalg.
// CHECK:       return %[[LOOP]]
func.func @rms_norm(%x: tensor<64x512xf32>, %g: tensor<512xf32>) -> tensor<64x512xf32> {
  %zero = arith.constant 0.000000e+00 : f32
  %inv = arith.constant 1.953125e-03 : f32
  %eps = arith.constant 1.0e-05 : f32
  %e = tensor.empty() : tensor<64x512xf32>
  %er = tensor.empty() : tensor<64xf32>
  %si = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %ss = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x512xf32>) outs(%si : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %out, %sq : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #col, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %ss, %g : tensor<64x512xf32>, tensor<64xf32>, tensor<512xf32>) outs(%e : tensor<64x512xf32>) {
  ^bb0(%in: f32, %s: f32, %gi: f32, %out: f32):
    %ms = arith.mulf %s, %inv : f32
    %v = arith.addf %ms, %eps : f32
    %rs = math.rsqrt %v : f32
    %n = arith.mulf %in, %rs : f32
    %r = arith.mulf %n, %gi : f32
    linalg.yield %r : f32
  } -> tensor<64x512xf32>
  return %y : tensor<64x512xf32>
}

// CHECK-LABEL: func.func @swiglu
// CHECK-NOT:   linalg.
// CHECK:       %[[LOOP:.*]] = scf.for
// CHECK:         math.exp %{{.*}} : vector<16xf32>
// CHECK:         arith.divf %{{.*}} : vector<16xf32>
// CHECK-NOT:   linalg.
// CHECK:       return %[[LOOP]]
func.func @swiglu(%gate: tensor<64x1024xf32>, %up: tensor<64x1024xf32>) -> tensor<64x1024xf32> {
  %one = arith.constant 1.000000e+00 : f32
  %e = tensor.empty() : tensor<64x1024xf32>
  %y = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%gate, %up : tensor<64x1024xf32>, tensor<64x1024xf32>) outs(%e : tensor<64x1024xf32>) {
  ^bb0(%g: f32, %u: f32, %out: f32):
    %ng = arith.negf %g : f32
    %ex = math.exp %ng : f32
    %den = arith.addf %one, %ex : f32
    %sg = arith.divf %g, %den : f32
    %r = arith.mulf %sg, %u : f32
    linalg.yield %r : f32
  } -> tensor<64x1024xf32>
  return %y : tensor<64x1024xf32>
}
