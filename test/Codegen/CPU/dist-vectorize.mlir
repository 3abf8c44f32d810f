// RUN: dist-opt %s --pass-pipeline='builtin.module(func.func(dist-vectorize),canonicalize,cse)' | FileCheck %s
// RUN: dist-opt %s --pass-pipeline='builtin.module(func.func(dist-vectorize{accumulators=1}),canonicalize,cse)' | FileCheck %s --check-prefix=ONE
// RUN: not dist-opt %s --pass-pipeline='builtin.module(func.func(dist-vectorize{accumulators=0}))' 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: dist-vectorize: accumulators must be 1 to 16, got 0

#id1 = affine_map<(d0) -> (d0)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>

// 40 f32: a loop over two vectors of 16 (64 bytes), the remainder of 8
// peeled into one vector of its own; no linalg left.
// CHECK-LABEL: func.func @elementwise_remainder
// CHECK:       scf.for %[[I:.*]] = %c0 to %c32 step %c16
// CHECK:         %[[X:.*]] = vector.transfer_read {{.*}} : tensor<16xf32>, vector<16xf32>
// CHECK:         math.exp %[[X]] : vector<16xf32>
// CHECK:       %[[R:.*]] = vector.transfer_read {{.*}} : tensor<8xf32>, vector<8xf32>
// CHECK:       math.exp %[[R]] : vector<8xf32>
// CHECK-NOT:   linalg.generic
func.func @elementwise_remainder(%x: tensor<40xf32>) -> tensor<40xf32> {
  %e = tensor.empty() : tensor<40xf32>
  %y = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<40xf32>) outs(%e : tensor<40xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<40xf32>
  return %y : tensor<40xf32>
}

// A row sum: each row summed into 4 vectors of 16 partial sums (64 lanes:
// four independent chains of adds; the accumulator a fill of 0, now a
// vector write), merged after the loop.
// CHECK-LABEL: func.func @row_sums
// CHECK:       scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK:         %[[ACC:.*]] = vector.transfer_write %{{.*}} : vector<64xf32>, tensor<1x64xf32>
// CHECK:         %[[PARTIAL:.*]] = scf.for %{{.*}} = %c0 to %c256 step %c64 iter_args(%{{.*}} = %[[ACC]])
// CHECK:           arith.addf {{.*}} : vector<64xf32>
// CHECK:         vector.multi_reduction <add>, {{.*}} [1] : vector<1x64xf32> to vector<1xf32>
// CHECK-NOT:   linalg.generic
// With one accumulator, one vector of 16 partial sums.
// ONE-LABEL:   func.func @row_sums
// ONE:           scf.for %{{.*}} = %c0 to %c256 step %c16
// ONE:             arith.addf {{.*}} : vector<16xf32>
func.func @row_sums(%x: tensor<4x256xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x256xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// A row of 40: as many vectors of partial sums as it fills (2 of 16), the
// remainder of 8 peeled.
// CHECK-LABEL: func.func @short_row_sums
// CHECK:         arith.addf {{.*}} : vector<32xf32>
// CHECK:         arith.addf {{.*}} : vector<8xf32>
func.func @short_row_sums(%x: tensor<4x40xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x40xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// The body reads the summed loop's index: each tile of 64 goes into the
// vectors of partial maxima like any reduction, with the index of each lane
// the tile's offset plus the lane (upstream's partial-reduction tiling
// leaves the offset out; dist-vectorize adds it).
// CHECK-LABEL: func.func @masked_row_max
// CHECK:       scf.for %[[J:.*]] = %c0 to %c256 step %c64 iter_args(%{{.*}} = %{{.*}}) -> (tensor<1x64xf32>)
// CHECK:         %[[STEP:.*]] = vector.step : vector<64xindex>
// CHECK:         %[[BASE:.*]] = vector.broadcast %[[J]] : index to vector<64xindex>
// CHECK:         %[[IDX:.*]] = arith.addi %[[BASE]], %[[STEP]] : vector<64xindex>
// CHECK:         arith.cmpi ult, %[[IDX]]
// CHECK:         arith.maxnumf {{.*}} : vector<64xf32>
// CHECK:       vector.multi_reduction <maxnumf>, {{.*}} [1] : vector<1x64xf32> to vector<1xf32>
func.func @masked_row_max(%x: tensor<4x256xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %c10 = arith.constant 10 : index
  %low = arith.constant -1.0e9 : f32
  %s = linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x256xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %j = linalg.index 1 : index
    %keep = arith.cmpi ult, %j, %c10 : index
    %v = arith.select %keep, %in, %low : f32
    %r = arith.maxnumf %v, %out : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %s : tensor<4xf32>
}

// bf16 keeps its scalar loops (no vector arithmetic for it here).
// CHECK-LABEL: func.func @bf16_stays
// CHECK:       linalg.generic
// CHECK-NOT:   vector.
func.func @bf16_stays(%x: tensor<64xbf16>) -> tensor<64xbf16> {
  %e = tensor.empty() : tensor<64xbf16>
  %y = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<64xbf16>) outs(%e : tensor<64xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    %v = arith.negf %in : bf16
    linalg.yield %v : bf16
  } -> tensor<64xbf16>
  return %y : tensor<64xbf16>
}

// A product the runtime's GEMM takes is left alone.
// CHECK-LABEL: func.func @gemm_stays
// CHECK:       linalg.matmul
// CHECK-NOT:   vector.
func.func @gemm_stays(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<64x64xf32>, tensor<64x64xf32>) outs(%c : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// Integer products have no BLAS routine: vectorized like any reduction
// (a row of 32: two vectors of partial sums).
// CHECK-LABEL: func.func @integer_product
// CHECK:       arith.muli {{.*}} : vector<32xi32>
// CHECK:       vector.multi_reduction <add>
func.func @integer_product(%a: tensor<4x32xi32>, %b: tensor<32x4xi32>, %c: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x32xi32>, tensor<32x4xi32>) outs(%c : tensor<4x4xi32>) -> tensor<4x4xi32>
  return %r : tensor<4x4xi32>
}

// x ** 3 with a constant exponent (torch's GELU): products, vectorized.
// CHECK-LABEL: func.func @constant_power
// CHECK:       vector.transfer_read {{.*}} vector<16xf32>
// CHECK:       arith.mulf {{.*}} : vector<16xf32>
// CHECK-NOT:   math.fpowi
func.func @constant_power(%x: tensor<16xf32>) -> tensor<16xf32> {
  %c3 = arith.constant 3 : i64
  %e = tensor.empty() : tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#id1, #id1], iterator_types = ["parallel"]} ins(%x : tensor<16xf32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.fpowi %in, %c3 : f32, i64
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// A power whose exponent is data has no vector form (LLVM's powi takes one
// scalar exponent): scalar loops.
// CHECK-LABEL: func.func @data_power
// CHECK:       linalg.generic
// CHECK:       math.fpowi %{{.*}}, %{{.*}} : f32, i32
// CHECK-NOT:   vector
func.func @data_power(%x: tensor<16xf32>, %n: tensor<16xi32>) -> tensor<16xf32> {
  %e = tensor.empty() : tensor<16xf32>
  %y = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%x, %n : tensor<16xf32>, tensor<16xi32>) outs(%e : tensor<16xf32>) {
  ^bb0(%in: f32, %k: i32, %out: f32):
    %v = math.fpowi %in, %k : f32, i32
    linalg.yield %v : f32
  } -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// A keepdim reduction (torch-mlir's layer norm mean: the result read at a
// constant index) cannot be tiled: scalar loops, no error.
// CHECK-LABEL: func.func @keepdim_sum
// CHECK:       linalg.generic
// CHECK-NOT:   vector
func.func @keepdim_sum(%x: tensor<4x32xf32>) -> tensor<4x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x1xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x1xf32>) -> tensor<4x1xf32>
  %y = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> (d0, 0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x32xf32>) outs(%f : tensor<4x1xf32>) {
  ^bb0(%in: f32, %out: f32):
    %v = arith.addf %in, %out : f32
    linalg.yield %v : f32
  } -> tensor<4x1xf32>
  return %y : tensor<4x1xf32>
}
