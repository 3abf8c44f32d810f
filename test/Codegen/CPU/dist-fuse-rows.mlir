// Blocks of several rows (tile-elements=4096), and by default one row of
// 512 at a time.
// RUN: dist-opt %s --pass-pipeline='builtin.module(func.func(dist-fuse-rows{tile-elements=4096}))' | FileCheck %s
// RUN: dist-opt %s --pass-pipeline='builtin.module(func.func(dist-fuse-rows))' | FileCheck %s --check-prefix=DEFAULT

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

// A softmax (max, exp, sum, divide over rows of 512): one loop over blocks
// of 8 rows (a tile of 4,096 elements) computes all four ops on its rows,
// each op once; nothing is left outside.
// CHECK-LABEL: func.func @softmax
// CHECK-NOT:   linalg.generic
// CHECK:       scf.for %[[R:.*]] = %c0 to %c64 step %c8
// CHECK:         %[[X:.*]] = tensor.extract_slice %arg0[%[[R]], 0] [8, 512]
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}}["parallel", "reduction"]{{.*}} ins(%[[X]] : tensor<8x512xf32>)
// CHECK:         %[[EXP:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[MAX]] :
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}}["parallel", "reduction"]{{.*}} ins(%[[EXP]] :
// CHECK:         linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] :
// CHECK:         tensor.insert_slice
// CHECK-NOT:   linalg.generic
// CHECK:       return
// DEFAULT-LABEL: func.func @softmax
// DEFAULT:       scf.for %[[R:.*]] = %c0 to %c64 step %c1
// DEFAULT:         tensor.extract_slice %arg0[%[[R]], 0] [1, 512]
// DEFAULT-LABEL: func.func @swiglu
// DEFAULT:       scf.for %{{.*}} = %c0 to %c64 step %c1
// DEFAULT:         linalg.generic {{.*}} outs(%{{.*}} : tensor<1x1024xf32>)
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

// An RMSNorm: the sum of squares of a block of rows, then their scaling, in
// one loop.
// CHECK-LABEL: func.func @rms_norm
// CHECK-NOT:   linalg.generic
// CHECK:       scf.for
// CHECK:         %[[SS:.*]] = linalg.generic {{.*}}["parallel", "reduction"]
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[SS]], %{{.*}} : tensor<8x512xf32>, tensor<8xf32>, tensor<512xf32>)
// CHECK-NOT:   linalg.generic
// CHECK:       return
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

// An elementwise op alone is tiled too (blocks of 4 rows of 1,024).
// CHECK-LABEL: func.func @swiglu
// CHECK:       scf.for %{{.*}} = %c0 to %c64 step %c4
// CHECK:         linalg.generic {{.*}} outs(%{{.*}} : tensor<4x1024xf32>)
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

// A sum that something after the chain reads too: the loop yields it whole
// besides the chain's result. The product (a GEMM candidate) stays outside.
// CHECK-LABEL: func.func @producer_read_outside
// CHECK:       %[[LOOP:.*]]:2 = scf.for
// CHECK:         linalg.generic {{.*}}["parallel", "reduction"]
// CHECK:         linalg.generic {{.*}}["parallel", "parallel"]
// CHECK:         scf.yield %{{.*}}, %{{.*}} : tensor<64x512xf32>, tensor<64xf32>
// CHECK:       linalg.matmul ins(%[[LOOP]]#0, %arg1
// CHECK:       return %{{.*}}, %[[LOOP]]#1
func.func @producer_read_outside(%x: tensor<64x512xf32>, %w: tensor<512x8xf32>, %c: tensor<64x8xf32>) -> (tensor<64x8xf32>, tensor<64xf32>) {
  %zero = arith.constant 0.000000e+00 : f32
  %e = tensor.empty() : tensor<64x512xf32>
  %er = tensor.empty() : tensor<64xf32>
  %si = linalg.fill ins(%zero : f32) outs(%er : tensor<64xf32>) -> tensor<64xf32>
  %ss = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<64x512xf32>) outs(%si : tensor<64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sq = arith.mulf %in, %in : f32
    %s = arith.addf %out, %sq : f32
    linalg.yield %s : f32
  } -> tensor<64xf32>
  %y = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%x, %ss : tensor<64x512xf32>, tensor<64xf32>) outs(%e : tensor<64x512xf32>) {
  ^bb0(%in: f32, %s: f32, %out: f32):
    %r = arith.divf %in, %s : f32
    linalg.yield %r : f32
  } -> tensor<64x512xf32>
  %p = linalg.matmul ins(%y, %w : tensor<64x512xf32>, tensor<512x8xf32>) outs(%c : tensor<64x8xf32>) -> tensor<64x8xf32>
  return %p, %ss : tensor<64x8xf32>, tensor<64xf32>
}

// A keepdim reduction (its result read at a constant index) is not tiled,
// and nothing is fused into it.
// CHECK-LABEL: func.func @keepdim_not_tiled
// CHECK-NOT:   scf.for
// CHECK:       return
func.func @keepdim_not_tiled(%x: tensor<4x32xf32>) -> tensor<4x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<4x32xf32>
  %sq = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x32xf32>) outs(%e0 : tensor<4x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.mulf %in, %in : f32
    linalg.yield %v : f32
  } -> tensor<4x32xf32>
  %e = tensor.empty() : tensor<4x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%sq : tensor<4x32xf32>) outs(%f : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}
