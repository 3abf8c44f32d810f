// exp on vectors (dist-approximate-vector-math: upstream's polynomial, n and
// 2^n from one fused multiply-add) against NumPy on 2.2 million inputs from
// -90 to 90 and the edges (test/e2e/Inputs/exp_accuracy.py): at most 6 ulp
// (5.5 at worst over all 2^32 inputs, next to the overflow threshold), +inf
// above FLT_MAX, NaN for NaN; and --compute loops (libm's expf) within 1.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: %python %S/../Inputs/exp_accuracy.py inputs %t/in
// RUN: dist-run --np 1 --timeout 120 --input npy:%t/in %s --dump %t/fused
// RUN: %python %S/../Inputs/exp_accuracy.py check %t/in %t/fused 6 | FileCheck %s
// RUN: dist-run --np 1 --timeout 120 --input npy:%t/in --compute loops %s --dump %t/loops
// RUN: %python %S/../Inputs/exp_accuracy.py check %t/in %t/loops 1 | FileCheck %s
// RUN: dist-opt %s --dist-reshard-pipeline --dist-localize --dist-cpu-compute | FileCheck %s --check-prefix=VECTOR
// CHECK: exp: {{[0-9]+}} normal results, largest error {{[0-9.]+}} ulp
// VECTOR: math.exp {{.*}} : vector<16xf32>
dist.mesh @m = <["x"=1]>
func.func @exp(%x: tensor<2200x1024xf32, #dist.sharding<@m, [{}, {}]>>)
    -> tensor<2200x1024xf32, #dist.sharding<@m, [{}, {}]>> {
  %e = tensor.empty() : tensor<2200x1024xf32, #dist.sharding<@m, [{}, {}]>>
  %y = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<2200x1024xf32, #dist.sharding<@m, [{}, {}]>>)
      outs(%e : tensor<2200x1024xf32, #dist.sharding<@m, [{}, {}]>>) {
  ^bb0(%in: f32, %out: f32):
    %v = math.exp %in : f32
    linalg.yield %v : f32
  } -> tensor<2200x1024xf32, #dist.sharding<@m, [{}, {}]>>
  return %y : tensor<2200x1024xf32, #dist.sharding<@m, [{}, {}]>>
}
