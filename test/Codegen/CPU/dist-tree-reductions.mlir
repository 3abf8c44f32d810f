// RUN: dist-opt %s --pass-pipeline='builtin.module(func.func(dist-tree-reductions))' | FileCheck %s

// A row's 16 partial maxima: halves combined as vectors (8, 4, 2, 1 lanes),
// then the accumulator; no lane-by-lane chain.
// CHECK-LABEL: func.func @row_max
// CHECK-SAME:    (%[[V:.*]]: vector<16xf32>, %[[ACC:.*]]: f32)
// CHECK:         %[[LO8:.*]] = vector.extract_strided_slice %[[V]] {offsets = [0], sizes = [8], strides = [1]}
// CHECK:         %[[HI8:.*]] = vector.extract_strided_slice %[[V]] {offsets = [8], sizes = [8], strides = [1]}
// CHECK:         %[[M8:.*]] = arith.maxnumf %[[LO8]], %[[HI8]] : vector<8xf32>
// CHECK:         arith.maxnumf %{{.*}} : vector<4xf32>
// CHECK:         arith.maxnumf %{{.*}} : vector<2xf32>
// CHECK:         %[[M1:.*]] = arith.maxnumf %{{.*}} : vector<1xf32>
// CHECK:         %[[E:.*]] = vector.extract %[[M1]][0] : f32 from vector<1xf32>
// CHECK:         %[[R:.*]] = arith.maxnumf %[[E]], %[[ACC]] : f32
// CHECK:         return %[[R]]
// CHECK-NOT:     vector.multi_reduction
func.func @row_max(%v: vector<16xf32>, %acc: f32) -> f32 {
  %r = vector.multi_reduction <maxnumf>, %v, %acc [0] : vector<16xf32> to f32
  return %r : f32
}

// Several rows at once (the innermost dim reduced): the same steps on
// [4 x half] vectors, the result the vector of the rows' sums.
// CHECK-LABEL: func.func @rows_sum
// CHECK:         arith.addf %{{.*}} : vector<4x8xf32>
// CHECK:         arith.addf %{{.*}} : vector<4x4xf32>
// CHECK:         arith.addf %{{.*}} : vector<4x2xf32>
// CHECK:         %[[S:.*]] = arith.addf %{{.*}} : vector<4x1xf32>
// CHECK:         %[[C:.*]] = vector.shape_cast %[[S]] : vector<4x1xf32> to vector<4xf32>
// CHECK:         arith.addf %[[C]], %{{.*}} : vector<4xf32>
func.func @rows_sum(%v: vector<4x16xf32>, %acc: vector<4xf32>) -> vector<4xf32> {
  %r = vector.multi_reduction <add>, %v, %acc [1] : vector<4x16xf32> to vector<4xf32>
  return %r : vector<4xf32>
}

// An odd width: the lane left over at 3 lanes is combined once the rest is
// one lane (12 -> 6 -> 3 -> 1, plus lane 2 of the 3).
// CHECK-LABEL: func.func @odd_width
// CHECK:         arith.addi %{{.*}} : vector<6xi32>
// CHECK:         %[[THREE:.*]] = arith.addi %{{.*}} : vector<3xi32>
// CHECK:         %[[LAST:.*]] = vector.extract_strided_slice %[[THREE]] {offsets = [2], sizes = [1], strides = [1]}
// CHECK:         %[[ONE:.*]] = arith.addi %{{.*}} : vector<1xi32>
// CHECK:         arith.addi %[[ONE]], %[[LAST]] : vector<1xi32>
func.func @odd_width(%v: vector<12xi32>, %acc: i32) -> i32 {
  %r = vector.multi_reduction <add>, %v, %acc [0] : vector<12xi32> to i32
  return %r : i32
}

// A reduction over an outer dim is elementwise already; two lanes are one
// combine already: both stay for upstream's lowering.
// CHECK-LABEL: func.func @left_alone
// CHECK:         vector.multi_reduction <add>, %{{.*}} [0] : vector<4x16xf32> to vector<16xf32>
// CHECK:         vector.multi_reduction <add>, %{{.*}} [0] : vector<2xf32> to f32
func.func @left_alone(%v: vector<4x16xf32>, %acc: vector<16xf32>, %w: vector<2xf32>, %a: f32) -> (vector<16xf32>, f32) {
  %r = vector.multi_reduction <add>, %v, %acc [0] : vector<4x16xf32> to vector<16xf32>
  %s = vector.multi_reduction <add>, %w, %a [0] : vector<2xf32> to f32
  return %r, %s : vector<16xf32>, f32
}
