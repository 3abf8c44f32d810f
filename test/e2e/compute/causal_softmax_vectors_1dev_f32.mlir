// A causally masked softmax over rows of 72 (4 vectors of 16 and a
// remainder of 8) and the masked rows' max on their own, compiled with the
// default fused vector code and with --compute loops: the mask reads the
// summed loop's index inside the row max, which upstream's partial-reduction
// tiling would not offset (every tile would see indices from 0;
// docs/compiler.md, "Local compute"). The softmax alone would not show it
// (any max gives the same softmax until exp overflows): the max does.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 1 --timeout 120 --input random:3 %s --dump %t/fused
// RUN: %check_shards %s %t/fused --input random:3
// RUN: dist-run --np 1 --timeout 120 --input random:3 --compute loops %s --dump %t/loops
// RUN: %check_shards %s %t/loops --input random:3
// RUN: dist-opt %s --dist-reshard-pipeline --dist-localize --dist-cpu-compute | FileCheck %s
// CHECK: vector.multi_reduction <maxnumf>
// CHECK: math.exp {{.*}} : vector<16xf32>
// EXPECT result0 = ref.softmax(np.where(np.arange(72)[None, None, :] <= np.arange(72)[None, :, None], arg0 * 0.125, -1.0e9), axis=-1)
// EXPECT result1 = np.max(np.where(np.arange(72)[None, None, :] <= np.arange(72)[None, :, None], arg0 * 0.125, -1.0e9), axis=-1)
dist.mesh @m = <["x"=1]>
func.func @causal(%s: tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>)
    -> (tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>,
        tensor<3x72xf32, #dist.sharding<@m, [{}, {}]>>) {
  %scale = arith.constant 0.125 : f32
  %masked = arith.constant -1.0e9 : f32
  %e = tensor.empty() : tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>
  %m = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i, j)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s : tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>)
      outs(%e : tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 1 : index
    %j = linalg.index 2 : index
    %keep = arith.cmpi ule, %j, %i : index
    %sc = arith.mulf %in, %scale : f32
    %y = arith.select %keep, %sc, %masked : f32
    linalg.yield %y : f32
  } -> tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>
  %e2 = tensor.empty() : tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>
  %p = linalg.softmax dimension(2) ins(%m : tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>)
      outs(%e2 : tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>) -> tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>
  %low = arith.constant 0xFF800000 : f32
  %er = tensor.empty() : tensor<3x72xf32, #dist.sharding<@m, [{}, {}]>>
  %mi = linalg.fill ins(%low : f32) outs(%er : tensor<3x72xf32, #dist.sharding<@m, [{}, {}]>>) -> tensor<3x72xf32, #dist.sharding<@m, [{}, {}]>>
  %mx = linalg.generic {indexing_maps = [affine_map<(h, i, j) -> (h, i, j)>, affine_map<(h, i, j) -> (h, i)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%m : tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>)
      outs(%mi : tensor<3x72xf32, #dist.sharding<@m, [{}, {}]>>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  } -> tensor<3x72xf32, #dist.sharding<@m, [{}, {}]>>
  return %p, %mx : tensor<3x72x72xf32, #dist.sharding<@m, [{}, {}, {}]>>, tensor<3x72xf32, #dist.sharding<@m, [{}, {}]>>
}
