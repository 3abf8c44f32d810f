// The matrix products the runtime's GEMM computes (docs/compiler.md,
// "Contractions"), each against NumPy on 2 ranks: a product with B indexed
// (n, k) (transB), a batched product in f64, a (b, s, d) x (d, f)
// projection whose b and s collapse into one m, and bf16 inputs widened
// into an f32 accumulator. The same program with --contractions loops gives
// the same results.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 --input random:11 %s --dump %t/gemm
// RUN: %check_shards %s %t/gemm --input random:11
// RUN: dist-run --np 2 --timeout 120 --input random:11 --contractions loops %s --dump %t/loops
// RUN: %check_shards %s %t/loops --input random:11
// RUN: dist-opt %s --dist-to-llvm | FileCheck %s
// CHECK-COUNT-4: llvm.call @distRtGemm
// EXPECT result0 = arg0 @ arg1.T
// EXPECT result1 = np.einsum("bmk,bkn->bmn", arg2, arg3)
// EXPECT result2 = np.einsum("bsd,df->bsf", arg4, arg5)
// EXPECT result3 = arg6 @ arg7

dist.mesh @m = <["x"=2]>

func.func @gemms(
    %a: tensor<6x10xf32, #dist.sharding<@m, [{"x"}, {}]>>,
    %bt: tensor<12x10xf32, #dist.sharding<@m, [{}, {}]>>,
    %ba: tensor<4x5x7xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>,
    %bb: tensor<4x7x3xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>,
    %x: tensor<2x6x8xf32, #dist.sharding<@m, [{}, {}, {}]>>,
    %w: tensor<8x10xf32, #dist.sharding<@m, [{}, {"x"}]>>,
    %h: tensor<6x16xbf16, #dist.sharding<@m, [{"x"}, {}]>>,
    %v: tensor<16x4xbf16, #dist.sharding<@m, [{}, {}]>>)
    -> (tensor<6x12xf32, #dist.sharding<@m, [{"x"}, {}]>>,
        tensor<4x5x3xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>,
        tensor<2x6x10xf32, #dist.sharding<@m, [{}, {}, {"x"}]>>,
        tensor<6x4xf32, #dist.sharding<@m, [{"x"}, {}]>>) {
  %zero = arith.constant 0.0 : f32
  %zero64 = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<6x12xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<6x12xf32, #dist.sharding<@m, [{"x"}, {}]>>) -> tensor<6x12xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %r0 = linalg.matmul
      indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%a, %bt : tensor<6x10xf32, #dist.sharding<@m, [{"x"}, {}]>>, tensor<12x10xf32, #dist.sharding<@m, [{}, {}]>>)
      outs(%f0 : tensor<6x12xf32, #dist.sharding<@m, [{"x"}, {}]>>) -> tensor<6x12xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %e1 = tensor.empty() : tensor<4x5x3xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>
  %f1 = linalg.fill ins(%zero64 : f64) outs(%e1 : tensor<4x5x3xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>) -> tensor<4x5x3xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>
  %r1 = linalg.batch_matmul
      ins(%ba, %bb : tensor<4x5x7xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>, tensor<4x7x3xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>)
      outs(%f1 : tensor<4x5x3xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>) -> tensor<4x5x3xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>
  %e2 = tensor.empty() : tensor<2x6x10xf32, #dist.sharding<@m, [{}, {}, {"x"}]>>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x6x10xf32, #dist.sharding<@m, [{}, {}, {"x"}]>>) -> tensor<2x6x10xf32, #dist.sharding<@m, [{}, {}, {"x"}]>>
  %r2 = linalg.generic {indexing_maps = [affine_map<(b, s, f, d) -> (b, s, d)>, affine_map<(b, s, f, d) -> (d, f)>, affine_map<(b, s, f, d) -> (b, s, f)>],
                        iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<2x6x8xf32, #dist.sharding<@m, [{}, {}, {}]>>, tensor<8x10xf32, #dist.sharding<@m, [{}, {"x"}]>>)
      outs(%f2 : tensor<2x6x10xf32, #dist.sharding<@m, [{}, {}, {"x"}]>>) {
  ^bb0(%xi: f32, %wi: f32, %acc: f32):
    %p = arith.mulf %xi, %wi : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x6x10xf32, #dist.sharding<@m, [{}, {}, {"x"}]>>
  %e3 = tensor.empty() : tensor<6x4xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<6x4xf32, #dist.sharding<@m, [{"x"}, {}]>>) -> tensor<6x4xf32, #dist.sharding<@m, [{"x"}, {}]>>
  %r3 = linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%h, %v : tensor<6x16xbf16, #dist.sharding<@m, [{"x"}, {}]>>, tensor<16x4xbf16, #dist.sharding<@m, [{}, {}]>>)
      outs(%f3 : tensor<6x4xf32, #dist.sharding<@m, [{"x"}, {}]>>) {
  ^bb0(%hi: bf16, %vi: bf16, %acc: f32):
    %he = arith.extf %hi : bf16 to f32
    %ve = arith.extf %vi : bf16 to f32
    %p = arith.mulf %he, %ve : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<6x4xf32, #dist.sharding<@m, [{"x"}, {}]>>
  return %r0, %r1, %r2, %r3 : tensor<6x12xf32, #dist.sharding<@m, [{"x"}, {}]>>, tensor<4x5x3xf64, #dist.sharding<@m, [{"x"}, {}, {}]>>, tensor<2x6x10xf32, #dist.sharding<@m, [{}, {}, {"x"}]>>, tensor<6x4xf32, #dist.sharding<@m, [{"x"}, {}]>>
}
