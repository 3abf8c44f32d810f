// RUN: dist-opt %s --pass-pipeline='builtin.module(func.func(dist-approximate-vector-math))' | FileCheck %s

// A vector exp becomes arithmetic on the vector (a polynomial and an
// exponent shift); no libm call per lane.
// CHECK-LABEL: func.func @vector_exp
// CHECK-NOT:   math.exp
// CHECK:       arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK-NOT:   math.exp
func.func @vector_exp(%x: vector<16xf32>) -> vector<16xf32> {
  %y = math.exp %x : vector<16xf32>
  return %y : vector<16xf32>
}

// Scalars keep libm's correctly rounded results; f64 has no approximation.
// CHECK-LABEL: func.func @scalar_and_f64_stay
// CHECK:       math.exp %{{.*}} : f32
// CHECK:       math.tanh %{{.*}} : vector<8xf64>
func.func @scalar_and_f64_stay(%x: f32, %v: vector<8xf64>) -> (f32, vector<8xf64>) {
  %y = math.exp %x : f32
  %w = math.tanh %v : vector<8xf64>
  return %y, %w : f32, vector<8xf64>
}
