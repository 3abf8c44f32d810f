// REQUIRES: mlir, cuda-toolkit
// RUN: dist-opt %s --dist-to-llvm="target=gpu" | FileCheck %s
// RUN: rm -rf %t && dist-run --np 2 --backend mpi --target gpu --compile-only %t %s > /dev/null
// RUN: nm -D %t/program.so | FileCheck %s --check-prefix=SO

// target=gpu, the whole pipeline on a program as a user writes it (an
// RMS-normalised row, a matmul, a SiLU): the matmul becomes the runtime's
// GEMM (cuBLAS on a GPU), the rest GPU kernels, compiled by the CUDA
// toolkit into a fatbin embedded in the module (its magic, 0xBA55ED50, is
// the first bytes of the object), launched through the runtime's mgpu*
// entry points. No GPU is needed to compile: this runs in CI.

// The fill and the sum of squares, the normalisation and the matmul's
// initial fill are kernels, then the GEMM, then the SiLU kernel.
// CHECK-COUNT-4: gpu.launch_func
// CHECK: llvm.call @distRtGemm
// CHECK: gpu.launch_func
// CHECK-COUNT-5: gpu.binary @{{[a-z_0-9]+}} [#gpu.object<#nvvm.target<O = 3, chip = "sm_80">, properties = {{.*}}, "P\EDU\BA

// The shared object dist-run builds of it loads its kernels and launches
// them through the runtime, beside its GEMM.
// SO-DAG: U distRtGemm
// SO-DAG: U mgpuLaunchKernel
// SO-DAG: U mgpuModuleGetFunction
// SO-DAG: U mgpuModuleLoad
// SO-DAG: T _dist_run_packed_block

dist.mesh @m = <["x"=2]>

func.func @block(%x: tensor<8x16xf32, #dist.sharding<@m, [{"x"}, {}]>>,
                 %w: tensor<16x32xf32, #dist.sharding<@m, [{}, {}]>>)
    -> tensor<8x32xf32, #dist.sharding<@m, [{"x"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %n = arith.constant 16.0 : f32
  %e0 = tensor.empty() : tensor<8xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8xf32>) -> tensor<8xf32>
  %ss = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>],
                        iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<8x16xf32, #dist.sharding<@m, [{"x"}, {}]>>) outs(%f0 : tensor<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %s = arith.addf %acc, %sq : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8x16xf32>
  %xn = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i, j)>],
                        iterator_types = ["parallel", "parallel"]}
      ins(%x, %ss : tensor<8x16xf32, #dist.sharding<@m, [{"x"}, {}]>>, tensor<8xf32>) outs(%e1 : tensor<8x16xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %mean = arith.divf %s, %n : f32
    %r = math.rsqrt %mean : f32
    %y = arith.mulf %v, %r : f32
    linalg.yield %y : f32
  } -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<8x32xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%xn, %w : tensor<8x16xf32>, tensor<16x32xf32, #dist.sharding<@m, [{}, {}]>>)
                     outs(%f2 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e3 = tensor.empty() : tensor<8x32xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %act = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<8x32xf32>) outs(%e3 : tensor<8x32xf32, #dist.sharding<@m, [{"x"}, {}]>>) {
  ^bb0(%v: f32, %o: f32):
    %neg = arith.negf %v : f32
    %ex = math.exp %neg : f32
    %den = arith.addf %one, %ex : f32
    %y = arith.divf %v, %den : f32
    linalg.yield %y : f32
  } -> tensor<8x32xf32, #dist.sharding<@m, [{"x"}, {}]>>
  return %act : tensor<8x32xf32, #dist.sharding<@m, [{"x"}, {}]>>
}
