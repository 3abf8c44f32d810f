// RUN: dist-opt %s --pass-pipeline='builtin.module(func.func(dist-fuse-elementwise))' | FileCheck %s

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// A causal mask (five ops: two indices, compare, scale, select) read by a
// row max and by the exp that follows: computed once (dist-fuse-rows puts it
// in the row tile), not recomputed in both. The exp (a math function) read
// by the sum and the division stays one op too.
// CHECK-LABEL: func.func @masked_softmax
// CHECK:       %[[MASK:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:         arith.select
// CHECK:       %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK-SAME:    ins(%[[MASK]] :
// CHECK-NOT:     arith.select
// CHECK:         arith.maxnumf
// CHECK:       %[[EXP:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK-SAME:    ins(%[[MASK]], %[[MAX]] :
// CHECK:         math.exp
// CHECK:       %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] :
// CHECK:       linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] :
// CHECK-NOT:   linalg.generic
// CHECK:       return
func.func @masked_softmax(%s: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %scale = arith.constant 0.125 : f32
  %masked = arith.constant -1.0e9 : f32
  %zero = arith.constant 0.0 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %er = tensor.empty() : tensor<16xf32>
  %m = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi ule, %j, %i : index
    %sc = arith.mulf %in, %scale : f32
    %y = arith.select %keep, %sc, %masked : f32
    linalg.yield %y : f32
  } -> tensor<16x16xf32>
  %mi = linalg.fill ins(%nan : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %max = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%m : tensor<16x16xf32>) outs(%mi : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxnumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %exp = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%m, %max : tensor<16x16xf32>, tensor<16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  %si = linalg.fill ins(%zero : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %sum = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%exp : tensor<16x16xf32>) outs(%si : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %p = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%exp, %sum : tensor<16x16xf32>, tensor<16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %sm: f32, %out: f32):
    %q = arith.divf %in, %sm : f32
    linalg.yield %q : f32
  } -> tensor<16x16xf32>
  return %p : tensor<16x16xf32>
}

// A scale alone (one op) read by the max and the exp: recomputed in both,
// never stored.
// CHECK-LABEL: func.func @scaled_softmax
// CHECK-NOT:   linalg.generic
// CHECK:       %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK:         arith.mulf
// CHECK:         arith.maxnumf
// CHECK:       linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK-SAME:    ins(%{{.*}}, %[[MAX]] :
// CHECK:         arith.mulf
// CHECK:         math.exp
func.func @scaled_softmax(%s: tensor<16x16xf32>) -> (tensor<16xf32>, tensor<16x16xf32>) {
  %scale = arith.constant 0.125 : f32
  %nan = arith.constant 0xFFC00000 : f32
  %e = tensor.empty() : tensor<16x16xf32>
  %er = tensor.empty() : tensor<16xf32>
  %m = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s : tensor<16x16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %sc = arith.mulf %in, %scale : f32
    linalg.yield %sc : f32
  } -> tensor<16x16xf32>
  %mi = linalg.fill ins(%nan : f32) outs(%er : tensor<16xf32>) -> tensor<16xf32>
  %max = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%m : tensor<16x16xf32>) outs(%mi : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maxnumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<16xf32>
  %exp = linalg.generic {indexing_maps = [#id2, #row, #id2], iterator_types = ["parallel", "parallel"]} ins(%m, %max : tensor<16x16xf32>, tensor<16xf32>) outs(%e : tensor<16x16xf32>) {
  ^bb0(%in: f32, %mx: f32, %out: f32):
    %d = arith.subf %in, %mx : f32
    %v = math.exp %d : f32
    linalg.yield %v : f32
  } -> tensor<16x16xf32>
  return %max, %exp : tensor<16xf32>, tensor<16x16xf32>
}

// The RMSNorm output feeds a projection: the projection stays a product
// of two inputs (for the runtime's GEMM); the norm is not folded into it.
// CHECK-LABEL: func.func @norm_then_projection
// CHECK:       %[[N:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK:       linalg.generic {{.*}} ins(%[[N]], %{{.*}} : tensor<8x32xf32>, tensor<32x16xf32>)
func.func @norm_then_projection(%x: tensor<8x32xf32>, %w: tensor<32x16xf32>, %c: tensor<8x16xf32>) -> tensor<8x16xf32> {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<8x32xf32>
  %n = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) {
  ^bb0(%in: f32, %out: f32):
    %y = arith.mulf %in, %two : f32
    linalg.yield %y : f32
  } -> tensor<8x32xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%n, %w : tensor<8x32xf32>, tensor<32x16xf32>) outs(%c : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  return %r : tensor<8x16xf32>
}
