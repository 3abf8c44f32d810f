// Compile time. Found by the program fuzzer (seed 160076 of --features all
// --max-ops 10: 45 s, "slow"): a matmul into a binding interleaved layout
// (segments [4, 2, 2], partial avg) on a 2x2x2 mesh, with 4-D values around
// it. The lazy pricing rounds of dist-partition passed the time limit, and
// the fallback then planned every pair of every table: 49,500 distinct
// plans of about 1.7 ms, 43 s. Past 8,192 plans the rounds now go on
// instead, pricing only the pairs their choices use (docs/partitioning.md,
// "Lazy pricing"): about 5 s, a heuristic choice 7% above the optimum.
// RUN: %bounded 30 4096 dist-opt %s --dist-partition -o /dev/null
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 8 --timeout 120 --input random:77 %s --dump %t
// RUN: %check_shards %s %t --input random:77
// EXPECT result0 = (w16 := lambda x: (np.asarray(x, np.int64) + 32768) % 65536 - 32768,
// ...   v7 := np.asarray(arg2).astype(np.int64),
// ...   t1 := np.reshape(v7, (1, 2, 2, 1)),
// ...   t2 := np.reshape(v7, (1, 2, 2, 1)),
// ...   v21 := w16((np.full((8, 2, 8), np.int64(7)) + np.transpose(np.asarray(w16(np.sum(np.broadcast_to(np.where((w16((w16((np.int64(1) * t1)) - w16(np.maximum(w16(np.asarray(((np.arange(2).reshape((1, 2, 1, 1)) * 2) + np.arange(2).reshape((1, 1, 2, 1))), np.int64)), t2)))) < np.int64(0)), w16((w16((np.int64(1) * t1)) - w16(np.maximum(w16(np.asarray(((np.arange(2).reshape((1, 2, 1, 1)) * 2) + np.arange(2).reshape((1, 1, 2, 1))), np.int64)), t2)))), np.int64(0)), (8, 2, 2, 8)), axis=(1,), dtype=np.int64))), (0, 1, 2)))),
// ...   v21)[-1]
// EXPECT result1 = (w16 := lambda x: (np.asarray(x, np.int64) + 32768) % 65536 - 32768,
// ...   v12 := np.asarray(arg4).astype(np.int64),
// ...   v3 := np.asarray(arg0).astype(np.int64),
// ...   v4 := v3,
// ...   v5 := np.asarray(arg1).astype(np.int64),
// ...   v6 := w16(np.full((2, 8), np.int64(0)) + w16(np.matmul(v4, v5))),
// ...   t1 := np.reshape(np.transpose(v6, (1, 0)), (8, 1, 2, 1)),
// ...   v7 := np.asarray(arg2).astype(np.int64),
// ...   t2 := np.reshape(np.transpose(v7, (1, 0)), (1, 2, 2, 1)),
// ...   t3 := np.reshape(np.transpose(np.full((2, 2, 8, 8), np.int64(7)), (2, 0, 1, 3)), (8, 2, 2, 8)),
// ...   v8 := np.transpose(np.asarray(np.broadcast_to(w16((w16((t2 - t1)) - t3)), (8, 2, 2, 8))), (1, 2, 0, 3)),
// ...   v10 := np.asarray(arg3).astype(np.int64),
// ...   v11 := np.broadcast_to(w16((v8 + v10)), (2, 2, 8, 8)),
// ...   v13 := (lambda x: [x := np.broadcast_to(w16(w16((x - v12))), (2, 2, 8, 8)) for _ in range(4)][-1])(v11),
// ...   v13)[-1]
dist.mesh @m = <["a"=2, "sp"=2, "y"=2]>

func.func @fuzz(
    %v3: tensor<2x2xi16, #dist.sharding<@m, [{}, {"a"}], partial = avg {"y"}>>,
    %v5: tensor<2x8xi16, #dist.sharding<@m, [{"a"}, {"y"}], partial = sum {"sp"}>>,
    %v7: tensor<2x2xi16, #dist.sharding<@m, [{}, {}], partial = sum {"a"}>>,
    %v10: tensor<2x2x8x8xi16, #dist.sharding<@m, [{}, {}, {}, {}]>>,
    %v12: tensor<2x2x8x8xi16, #dist.sharding<@m, [{}, {"sp"}, {}, {}]>>)
    -> (tensor<8x2x8xi16, #dist.sharding<@m, [{}, {"sp"}, {"y"}]>>, tensor<2x2x8x8xi16, #dist.sharding<@m, [{}, {"a", "sp"} segments [1, 1], {}, {}]>>) {
  %e1 = tensor.empty() : tensor<2x2xi16, #dist.sharding<@m, [{"sp"}, {"a"}]>>
  %v4 = linalg.copy ins(%v3 : tensor<2x2xi16, #dist.sharding<@m, [{}, {"a"}], partial = avg {"y"}>>) outs(%e1 : tensor<2x2xi16, #dist.sharding<@m, [{"sp"}, {"a"}]>>) -> tensor<2x2xi16, #dist.sharding<@m, [{"sp"}, {"a"}]>>
  %e2 = tensor.empty() : tensor<2x8xi16, #dist.sharding<@m, [{}, {"y"} segments [4, 2, 2]], partial = avg {"a"}>>
  %c3 = arith.constant 0 : i16
  %f4 = linalg.fill ins(%c3 : i16) outs(%e2 : tensor<2x8xi16, #dist.sharding<@m, [{}, {"y"} segments [4, 2, 2]], partial = avg {"a"}>>) -> tensor<2x8xi16, #dist.sharding<@m, [{}, {"y"} segments [4, 2, 2]], partial = avg {"a"}>>
  %v6 = linalg.matmul ins(%v4, %v5 : tensor<2x2xi16, #dist.sharding<@m, [{"sp"}, {"a"}]>>, tensor<2x8xi16, #dist.sharding<@m, [{"a"}, {"y"}], partial = sum {"sp"}>>) outs(%f4 : tensor<2x8xi16, #dist.sharding<@m, [{}, {"y"} segments [4, 2, 2]], partial = avg {"a"}>>) -> tensor<2x8xi16, #dist.sharding<@m, [{}, {"y"} segments [4, 2, 2]], partial = avg {"a"}>>
  %e5 = tensor.empty() : tensor<2x2x8x8xi16>
  %c6 = arith.constant 7 : i16
  %f7 = linalg.fill ins(%c6 : i16) outs(%e5 : tensor<2x2x8x8xi16>) -> tensor<2x2x8x8xi16>
  %v8 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d2, d0)>, affine_map<(d0, d1, d2, d3) -> (d2, d1)>, affine_map<(d0, d1, d2, d3) -> (d1, d2, d0, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%v6, %v7 : tensor<2x8xi16, #dist.sharding<@m, [{}, {"y"} segments [4, 2, 2]], partial = avg {"a"}>>, tensor<2x2xi16, #dist.sharding<@m, [{}, {}], partial = sum {"a"}>>)
      outs(%f7 : tensor<2x2x8x8xi16>) {
    ^bb0(%in0: i16, %in1: i16, %out: i16):
      %b2 = arith.subi %in1, %in0 : i16
      %b1 = arith.subi %b2, %out : i16
      linalg.yield %b1 : i16
    } -> tensor<2x2x8x8xi16>
  %e8 = tensor.empty() : tensor<2x2x8x8xi16>
  %v11 = linalg.map { arith.addi } ins(%v8, %v10 : tensor<2x2x8x8xi16>, tensor<2x2x8x8xi16, #dist.sharding<@m, [{}, {}, {}, {}]>>) outs(%e8 : tensor<2x2x8x8xi16>)
  %lo9 = arith.constant 0 : index
  %one10 = arith.constant 1 : index
  %hi11 = arith.constant 4 : index
  %v13 = scf.for %iv13 = %lo9 to %hi11 step %one10 iter_args(%h12 = %v11) -> (tensor<2x2x8x8xi16>) {
    %e14 = tensor.empty() : tensor<2x2x8x8xi16>
    %m15 = linalg.map { arith.subi } ins(%h12, %v12 : tensor<2x2x8x8xi16>, tensor<2x2x8x8xi16, #dist.sharding<@m, [{}, {"sp"}, {}, {}]>>) outs(%e14 : tensor<2x2x8x8xi16>)
    scf.yield %m15 : tensor<2x2x8x8xi16>
  }
  %e16 = tensor.empty() : tensor<8x2x8xi16>
  %c17 = arith.constant 7 : i16
  %f18 = linalg.fill ins(%c17 : i16) outs(%e16 : tensor<8x2x8xi16>) -> tensor<8x2x8xi16>
  %v21 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d1, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>], iterator_types = ["parallel", "reduction", "parallel", "parallel"]}
      ins(%v7, %v7 : tensor<2x2xi16, #dist.sharding<@m, [{}, {}], partial = sum {"a"}>>, tensor<2x2xi16, #dist.sharding<@m, [{}, {}], partial = sum {"a"}>>)
      outs(%f18 : tensor<8x2x8xi16>) {
    ^bb0(%in0: i16, %in1: i16, %out: i16):
      %b5 = arith.constant 1 : i16
      %b4 = arith.muli %b5, %in0 : i16
      %b10 = linalg.index 1 : index
      %b11 = arith.constant 2 : index
      %b9 = arith.muli %b10, %b11 : index
      %b12 = linalg.index 2 : index
      %b8 = arith.addi %b9, %b12 : index
      %b7 = arith.index_cast %b8 : index to i16
      %b6 = arith.maxsi %b7, %in1 : i16
      %b3 = arith.subi %b4, %b6 : i16
      %b13 = arith.constant 0 : i16
      %b2 = arith.cmpi slt, %b3, %b13 : i16
      %b1 = arith.select %b2, %b3, %b13 : i16
      %b14 = arith.addi %out, %b1 : i16
      linalg.yield %b14 : i16
    } -> tensor<8x2x8xi16>
  %e19 = tensor.empty() : tensor<8x2x8xi16, #dist.sharding<@m, [{}, {"sp"}, {"y"}]>>
  %r20 = linalg.copy ins(%v21 : tensor<8x2x8xi16>) outs(%e19 : tensor<8x2x8xi16, #dist.sharding<@m, [{}, {"sp"}, {"y"}]>>) -> tensor<8x2x8xi16, #dist.sharding<@m, [{}, {"sp"}, {"y"}]>>
  %e21 = tensor.empty() : tensor<2x2x8x8xi16, #dist.sharding<@m, [{}, {"a", "sp"} segments [1, 1], {}, {}]>>
  %r22 = linalg.copy ins(%v13 : tensor<2x2x8x8xi16>) outs(%e21 : tensor<2x2x8x8xi16, #dist.sharding<@m, [{}, {"a", "sp"} segments [1, 1], {}, {}]>>) -> tensor<2x2x8x8xi16, #dist.sharding<@m, [{}, {"a", "sp"} segments [1, 1], {}, {}]>>
  return %r20, %r22 : tensor<8x2x8xi16, #dist.sharding<@m, [{}, {"sp"}, {"y"}]>>, tensor<2x2x8x8xi16, #dist.sharding<@m, [{}, {"a", "sp"} segments [1, 1], {}, {}]>>
}
