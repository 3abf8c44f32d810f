// The contractions issue 43 found computed wrongly by the GEMM lowering
// (rows of a broadcast output dim left zero; sums over dims only one input
// reads ignored), on 8 ranks with split operands, each against NumPy under both lowerings of
// the local products: the runtime's GEMM (which now computes them as loops
// of calls around one GEMM, docs/compiler.md, "Contractions") and loops.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 8 --timeout 120 --input random:5 %s --dump %t/gemm
// RUN: %check_shards %s %t/gemm --input random:5
// RUN: dist-run --np 8 --timeout 120 --input random:5 --contractions loops %s --dump %t/loops
// RUN: %check_shards %s %t/loops --input random:5
// RUN: dist-opt %s --dist-to-llvm -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: contraction: {{[0-9]+}} GEMM call
// EXPECT result0 = np.broadcast_to(np.einsum('ij,ji->j', arg0, arg1), (5, 6))
// EXPECT result1 = np.einsum('dcb,abc->b', arg2, arg3)
// EXPECT result2 = np.einsum('acdb,a->b', arg4, arg5)
// EXPECT result3 = np.einsum('zyx,wxz->z', arg6, arg7)
dist.mesh @m = <["x"=2, "y"=2, "z"=2]>

func.func @products(%a0: tensor<24x6xf32, #dist.sharding<@m, [{"x"}, {}]>>,
    %b0: tensor<6x24xf32, #dist.sharding<@m, [{}, {"y"}]>>,
    %a1: tensor<3x5x4xf32, #dist.sharding<@m, [{}, {"x"}, {}]>>,
    %b1: tensor<2x4x5xf32, #dist.sharding<@m, [{"y"}, {}, {"z"}]>>,
    %a2: tensor<3x2x4x5xf32, #dist.sharding<@m, [{"x"}, {}, {"y"}, {}]>>,
    %b2: tensor<3xf32, #dist.sharding<@m, [{}]>>,
    %a3: tensor<6x3x4xf32, #dist.sharding<@m, [{"y"}, {"z"}, {}]>>,
    %b3: tensor<2x4x6xf32, #dist.sharding<@m, [{}, {"x"}, {}]>>)
    -> (tensor<5x6xf32, #dist.sharding<@m, [{"z"}, {}]>>,
        tensor<4xf32, #dist.sharding<@m, [{"x"}]>>,
        tensor<5xf32, #dist.sharding<@m, [{"z", "y"}]>>,
        tensor<6xf32, #dist.sharding<@m, [{"x", "y"}]>>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<5x6xf32, #dist.sharding<@m, [{"z"}, {}]>>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<5x6xf32, #dist.sharding<@m, [{"z"}, {}]>>) -> tensor<5x6xf32, #dist.sharding<@m, [{"z"}, {}]>>
  // broadcast_dim
  %r0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d2)>],
                        iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%a0, %b0 : tensor<24x6xf32, #dist.sharding<@m, [{"x"}, {}]>>, tensor<6x24xf32, #dist.sharding<@m, [{}, {"y"}]>>) outs(%f0 : tensor<5x6xf32, #dist.sharding<@m, [{"z"}, {}]>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<5x6xf32, #dist.sharding<@m, [{"z"}, {}]>>
  %e1 = tensor.empty() : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  // sums_dcb_abc
  %r1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d1)>],
                        iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%a1, %b1 : tensor<3x5x4xf32, #dist.sharding<@m, [{}, {"x"}, {}]>>, tensor<2x4x5xf32, #dist.sharding<@m, [{"y"}, {}, {"z"}]>>) outs(%f1 : tensor<4xf32, #dist.sharding<@m, [{"x"}]>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4xf32, #dist.sharding<@m, [{"x"}]>>
  %e2 = tensor.empty() : tensor<5xf32, #dist.sharding<@m, [{"z", "y"}]>>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<5xf32, #dist.sharding<@m, [{"z", "y"}]>>) -> tensor<5xf32, #dist.sharding<@m, [{"z", "y"}]>>
  // sums_acdb_a
  %r2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d2, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0)>, affine_map<(d0, d1, d2, d3) -> (d1)>],
                        iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%a2, %b2 : tensor<3x2x4x5xf32, #dist.sharding<@m, [{"x"}, {}, {"y"}, {}]>>, tensor<3xf32, #dist.sharding<@m, [{}]>>) outs(%f2 : tensor<5xf32, #dist.sharding<@m, [{"z", "y"}]>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<5xf32, #dist.sharding<@m, [{"z", "y"}]>>
  %e3 = tensor.empty() : tensor<6xf32, #dist.sharding<@m, [{"x", "y"}]>>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<6xf32, #dist.sharding<@m, [{"x", "y"}]>>) -> tensor<6xf32, #dist.sharding<@m, [{"x", "y"}]>>
  // sums_zyx_wxz
  %r3 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d3, d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d3)>],
                        iterator_types = ["reduction", "reduction", "reduction", "parallel"]}
      ins(%a3, %b3 : tensor<6x3x4xf32, #dist.sharding<@m, [{"y"}, {"z"}, {}]>>, tensor<2x4x6xf32, #dist.sharding<@m, [{}, {"x"}, {}]>>) outs(%f3 : tensor<6xf32, #dist.sharding<@m, [{"x", "y"}]>>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<6xf32, #dist.sharding<@m, [{"x", "y"}]>>
  return %r0, %r1, %r2, %r3 : tensor<5x6xf32, #dist.sharding<@m, [{"z"}, {}]>>, tensor<4xf32, #dist.sharding<@m, [{"x"}]>>, tensor<5xf32, #dist.sharding<@m, [{"z", "y"}]>>, tensor<6xf32, #dist.sharding<@m, [{"x", "y"}]>>
}
