// Found by the program fuzzer
// (seed 50007 of --features ci,+return-twice), minimized: two linalg.copy of
// one value into the same layout become one value returned twice, and
// dist-to-llvm crashes in bufferization's promoteBufferResultsToOutParams
// (BaseMemRefType::hasRank). The program itself returns two distinct values.
// Fixed: dist-distinct-result-buffers gives each result its own buffer.
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 --input random:8 %s --dump %t
// RUN: %check_shards %s %t --input random:8
// EXPECT result0 = (v3 := np.asarray(arg0).astype(np.int64),
// ...   v3)[-1]
// EXPECT result1 = (v3 := np.asarray(arg0).astype(np.int64),
// ...   v3)[-1]
dist.mesh @m = <["tp"=2]>

func.func @fuzz(
    %v3: tensor<1x1xi32, #dist.sharding<@m, [{}, {}], partial = min {"tp"}>>)
    -> (tensor<1x1xi32, #dist.sharding<@m, [{}, {}]>>, tensor<1x1xi32, #dist.sharding<@m, [{}, {}]>>) {
  %e1 = tensor.empty() : tensor<1x1xi32, #dist.sharding<@m, [{}, {}]>>
  %r2 = linalg.copy ins(%v3 : tensor<1x1xi32, #dist.sharding<@m, [{}, {}], partial = min {"tp"}>>) outs(%e1 : tensor<1x1xi32, #dist.sharding<@m, [{}, {}]>>) -> tensor<1x1xi32, #dist.sharding<@m, [{}, {}]>>
  %e3 = tensor.empty() : tensor<1x1xi32, #dist.sharding<@m, [{}, {}]>>
  %r4 = linalg.copy ins(%v3 : tensor<1x1xi32, #dist.sharding<@m, [{}, {}], partial = min {"tp"}>>) outs(%e3 : tensor<1x1xi32, #dist.sharding<@m, [{}, {}]>>) -> tensor<1x1xi32, #dist.sharding<@m, [{}, {}]>>
  return %r2, %r4 : tensor<1x1xi32, #dist.sharding<@m, [{}, {}]>>, tensor<1x1xi32, #dist.sharding<@m, [{}, {}]>>
}
