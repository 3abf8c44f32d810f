// Four pipeline stages on 8 ranks, two ranks each, in one function
// (semantics §3c): a heads-split attention (tp=2 on ranks 0-1), then three
// stages whose hand-offs change the layout: tokens over dp (ranks 2-3), the
// head dim over x (ranks 4-5) for a sum over heads, and the model dim over y
// (ranks 6-7). dist-partition cuts it into four stage functions, each rank
// runs only its own, and the result on ranks 6-7 equals NumPy's.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 8 --timeout 120 --input random:11 %s --dump %t
// RUN: %check_shards %s %t --input random:11
// RUN: dist-opt %s --dist-partition -dist-remarks -o /dev/null 2>&1 | FileCheck %s
// CHECK: remark: dist-partition: @four_stages: 4 stages: @four_stages_stage0 on @s0 ({{[0-9]+}} ops), @four_stages_stage1 on @s1 ({{[0-9]+}} ops), @four_stages_stage2 on @s2 ({{[0-9]+}} ops), @four_stages_stage3 on @s3 ({{[0-9]+}} ops)
// EXPECT result0 = 2.0 * np.maximum((np.exp(np.einsum("hid,hjd->hij", arg0, arg1)
// ...   - np.einsum("hid,hjd->hij", arg0, arg1).max(axis=2, keepdims=True))
// ...   / np.exp(np.einsum("hid,hjd->hij", arg0, arg1)
// ...   - np.einsum("hid,hjd->hij", arg0, arg1).max(axis=2, keepdims=True))
// ...   .sum(axis=2, keepdims=True)) @ arg2, 0).sum(axis=0)

dist.mesh @s0 = <["tp"=2], devices = [0, 1]>
dist.mesh @s1 = <["dp"=2], devices = [2, 3]>
dist.mesh @s2 = <["x"=2], devices = [4, 5]>
dist.mesh @s3 = <["y"=2], devices = [6, 7]>

#qk_q = affine_map<(h, i, j, d) -> (h, i, d)>
#qk_k = affine_map<(h, i, j, d) -> (h, j, d)>
#qk_s = affine_map<(h, i, j, d) -> (h, i, j)>
#sm_in = affine_map<(h, i, j) -> (h, i, j)>
#sm_row = affine_map<(h, i, j) -> (h, i)>

func.func @four_stages(%q: tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>,
                     %k: tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>,
                     %v: tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>)
    -> tensor<8x4xf32, #dist.sharding<@s3, [{}, {"y"}]>> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant 0xFF800000 : f32
  %se = tensor.empty() : tensor<4x8x8xf32>
  %sf = linalg.fill ins(%zero : f32) outs(%se : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %s = linalg.generic {indexing_maps = [#qk_q, #qk_k, #qk_s],
                       iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%q, %k : tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>, tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>)
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
  %ce = tensor.empty() : tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>
  %cf = linalg.fill ins(%zero : f32) outs(%ce : tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>) -> tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>
  %ctx = linalg.batch_matmul ins(%p, %v : tensor<4x8x8xf32>, tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>)
                             outs(%cf : tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>) -> tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>>
  %to1 = dist.reshard %ctx : tensor<4x8x4xf32, #dist.sharding<@s0, [{"tp"}, {}, {}]>> -> tensor<4x8x4xf32, #dist.sharding<@s1, [{}, {"dp"}, {}]>>
  %z1 = arith.constant dense<0.0> : tensor<4x8x4xf32, #dist.sharding<@s1, [{}, {"dp"}, {}]>>
  %relu = arith.maximumf %to1, %z1 : tensor<4x8x4xf32, #dist.sharding<@s1, [{}, {"dp"}, {}]>>
  %to2 = dist.reshard %relu : tensor<4x8x4xf32, #dist.sharding<@s1, [{}, {"dp"}, {}]>> -> tensor<4x8x4xf32, #dist.sharding<@s2, [{"x"}, {}, {}]>>
  %he = tensor.empty() : tensor<8x4xf32>
  %hf = linalg.fill ins(%zero : f32) outs(%he : tensor<8x4xf32>) -> tensor<8x4xf32>
  %heads = linalg.reduce ins(%to2 : tensor<4x8x4xf32, #dist.sharding<@s2, [{"x"}, {}, {}]>>) outs(%hf : tensor<8x4xf32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  %se2 = tensor.empty() : tensor<8x4xf32, #dist.sharding<@s2, [{}, {}]>>
  %summed = linalg.copy ins(%heads : tensor<8x4xf32>) outs(%se2 : tensor<8x4xf32, #dist.sharding<@s2, [{}, {}]>>) -> tensor<8x4xf32, #dist.sharding<@s2, [{}, {}]>>
  %to3 = dist.reshard %summed : tensor<8x4xf32, #dist.sharding<@s2, [{}, {}]>> -> tensor<8x4xf32, #dist.sharding<@s3, [{}, {"y"}]>>
  %two = arith.constant dense<2.0> : tensor<8x4xf32, #dist.sharding<@s3, [{}, {"y"}]>>
  %out = arith.mulf %to3, %two : tensor<8x4xf32, #dist.sharding<@s3, [{}, {"y"}]>>
  return %out : tensor<8x4xf32, #dist.sharding<@s3, [{}, {"y"}]>>
}
