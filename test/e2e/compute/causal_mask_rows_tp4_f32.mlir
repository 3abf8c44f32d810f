// A causal mask by linalg.index on rows split over tp=4: every rank's
// linalg.index yields the global row (the bug this guards against gave the
// local one, wrong on every rank but the first).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 4 --timeout 120 %s --dump %t
// RUN: %check_shards %s %t
// EXPECT result0 = np.where(np.arange(8)[None, :] <= np.arange(8)[:, None], arg0, -1.0)

dist.mesh @tp = <["tp"=4]>

func.func @mask(%x: tensor<8x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<8x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %e = tensor.empty() : tensor<8x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<8x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
      outs(%e : tensor<8x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %keep = arith.cmpi ule, %j, %i : index
    %minus = arith.constant -1.0 : f32
    %v = arith.select %keep, %a, %minus : f32
    linalg.yield %v : f32
  } -> tensor<8x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %r : tensor<8x8xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}
