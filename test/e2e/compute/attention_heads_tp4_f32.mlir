// Attention with heads split over 4 tp ranks: scores q k^T, a numerically
// stable softmax (max, exp, sum, divide) and the context p v, all in the
// global view. Every op splits the head loop: nothing moves.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 --input random:7 %s --dump %t
// RUN: %check_shards %s %t --input random:7
// RUN: dist-opt %s --dist-reshard-pipeline | FileCheck %s
// CHECK-NOT: dist.all_
// CHECK-NOT: dist.reduce_scatter
// CHECK-NOT: dist.permute
// EXPECT result0 = (np.exp(np.einsum("hid,hjd->hij", arg0, arg1)
// ...   - np.einsum("hid,hjd->hij", arg0, arg1).max(axis=2, keepdims=True))
// ...   / np.exp(np.einsum("hid,hjd->hij", arg0, arg1)
// ...   - np.einsum("hid,hjd->hij", arg0, arg1).max(axis=2, keepdims=True))
// ...   .sum(axis=2, keepdims=True)) @ arg2

dist.mesh @tp = <["tp"=4]>

#qk_q = affine_map<(h, i, j, d) -> (h, i, d)>
#qk_k = affine_map<(h, i, j, d) -> (h, j, d)>
#qk_s = affine_map<(h, i, j, d) -> (h, i, j)>
#sm_in = affine_map<(h, i, j) -> (h, i, j)>
#sm_row = affine_map<(h, i, j) -> (h, i)>

func.func @attention(%q: tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>,
                     %k: tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>,
                     %v: tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>)
    -> tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %se = tensor.empty() : tensor<4x8x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>, tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>)
      outs(%sf : tensor<4x8x8xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %p = arith.mulf %a, %b : f32
      %r = arith.addf %acc, %p : f32
      linalg.yield %r : f32
  } -> tensor<4x8x8xf32>
  %me = tensor.empty() : tensor<4x8xf32>
  %mf = linalg.fill ins(%ninf : f32) outs(%me : tensor<4x8xf32>) -> tensor<4x8xf32>
  %m = linalg.reduce ins(%s : tensor<4x8x8xf32>) outs(%mf : tensor<4x8xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.maximumf %in, %acc : f32
      linalg.yield %r : f32
    }
  %ee = tensor.empty() : tensor<4x8x8xf32>
  %e = linalg.generic {indexing_maps = [#sm_in, #sm_row, #sm_in], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %m : tensor<4x8x8xf32>, tensor<4x8xf32>) outs(%ee : tensor<4x8x8xf32>) {
    ^bb0(%x: f32, %mx: f32, %out: f32):
      %d = arith.subf %x, %mx : f32
      %r = math.exp %d : f32
      linalg.yield %r : f32
  } -> tensor<4x8x8xf32>
  %ze = tensor.empty() : tensor<4x8xf32>
  %zf = linalg.fill ins(%zero : f32) outs(%ze : tensor<4x8xf32>) -> tensor<4x8xf32>
  %z = linalg.reduce ins(%e : tensor<4x8x8xf32>) outs(%zf : tensor<4x8xf32>) dimensions = [2]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %pe = tensor.empty() : tensor<4x8x8xf32>
  %p = linalg.generic {indexing_maps = [#sm_in, #sm_row, #sm_in], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%e, %z : tensor<4x8x8xf32>, tensor<4x8xf32>) outs(%pe : tensor<4x8x8xf32>) {
    ^bb0(%x: f32, %sum: f32, %out: f32):
      %r = arith.divf %x, %sum : f32
      linalg.yield %r : f32
  } -> tensor<4x8x8xf32>
  %ce = tensor.empty() : tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>
  %cf = linalg.fill ins(%zero : f32) outs(%ce : tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>) -> tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>
  %ctx = linalg.batch_matmul ins(%p, %v : tensor<4x8x8xf32>, tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>)
                             outs(%cf : tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>) -> tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>
  return %ctx : tensor<4x8x4xf32, #dist.sharding<@tp, [{"tp"}, {}, {}]>>
}
