// Found by the program fuzzer
// (seed 50004 of --features ci,+index), minimized: linalg.index 3 reads a
// loop split over dp, and the localized body gets the device's local index,
// not the global one, so the mask i3 == i0 selects the wrong elements.
// Fixed: linalg.index of a split loop yields the global index.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 --input random:5 %s --dump %t
// RUN: %check_shards %s %t --input random:5
// EXPECT result0 = (rb := lambda x: ((lambda u: (u + np.uint32(32767) + ((u >> np.uint32(16)) & np.uint32(1))) & np.uint32(4294901760))(np.asarray(x, np.float32).view(np.uint32))).view(np.float32),
// ...   v4 := np.asarray(arg0).astype(np.int64),
// ...   v5 := rb(np.asarray(v4).astype(np.float32)),
// ...   t1 := np.reshape(v5, (1, 1, 1, 2)),
// ...   t2 := np.reshape(v5, (1, 1, 1, 2)),
// ...   v7 := rb(np.minimum(np.full((1, 2, 2), np.float32(0.0)), np.transpose(np.asarray(rb(np.min(np.broadcast_to(np.where((np.arange(2).reshape((1, 1, 1, 2)) == np.arange(1).reshape((1, 1, 1, 1))), rb(np.minimum(t2, t1)), np.float32(-1.0)), (1, 2, 1, 2)), axis=(0,)))), (1, 0, 2)))),
// ...   v7)[-1]
dist.mesh @m = <["dp"=2]>

func.func @fuzz(
    %v4: tensor<1x2xi32, #dist.sharding<@m, [{}, {}]>>)
    -> tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {}]>> {
  %e1 = tensor.empty() : tensor<1x2xi32>
  %cp2 = linalg.copy ins(%v4 : tensor<1x2xi32, #dist.sharding<@m, [{}, {}]>>) outs(%e1 : tensor<1x2xi32>) -> tensor<1x2xi32>
  %v5 = arith.sitofp %cp2 : tensor<1x2xi32> to tensor<1x2xbf16>
  %e3 = tensor.empty() : tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {"dp"}]>>
  %c4 = arith.constant 0.0 : bf16
  %f5 = linalg.fill ins(%c4 : bf16) outs(%e3 : tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {"dp"}]>>) -> tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {"dp"}]>>
  %v7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d2, d1, d3)>], iterator_types = ["reduction", "parallel", "parallel", "parallel"]}
      ins(%v5, %v5 : tensor<1x2xbf16>, tensor<1x2xbf16>)
      outs(%f5 : tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {"dp"}]>>) {
    ^bb0(%in0: bf16, %in1: bf16, %out: bf16):
      %b3 = linalg.index 3 : index
      %b4 = linalg.index 0 : index
      %b2 = arith.cmpi eq, %b3, %b4 : index
      %b5 = arith.minimumf %in1, %in0 : bf16
      %b6 = arith.constant -1.0 : bf16
      %b1 = arith.select %b2, %b5, %b6 : bf16
      %b7 = arith.minimumf %out, %b1 : bf16
      linalg.yield %b7 : bf16
    } -> tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {"dp"}]>>
  %e6 = tensor.empty() : tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {}]>>
  %r7 = linalg.copy ins(%v7 : tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {"dp"}]>>) outs(%e6 : tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {}]>>) -> tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {}]>>
  return %r7 : tensor<1x2x2xbf16, #dist.sharding<@m, [{}, {}, {}]>>
}
