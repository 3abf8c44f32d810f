// What torch-mlir writes for GPT-2's layer norm and GELU: a mean kept as a
// size-1 dim (its result read at a constant index, `(d0, d1) -> (d0, 0)`),
// which cannot be tiled and keeps scalar loops, and `x ** 3` as math.fpowi
// with a constant exponent, which becomes products and vectorizes. Both
// compute lowerings against NumPy on 2 ranks (rows split).
// REQUIRES: mpi, mlir, numpy
// RUN: rm -rf %t && dist-run --np 2 --timeout 120 --input random:5 %s --dump %t/fused
// RUN: %check_shards %s %t/fused --input random:5
// RUN: dist-run --np 2 --timeout 120 --input random:5 --compute loops %s --dump %t/loops
// RUN: %check_shards %s %t/loops --input random:5
// EXPECT result0 = (arg0 - arg0.mean(axis=1, keepdims=True)) ** 3
#id = affine_map<(d0, d1) -> (d0, d1)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
dist.mesh @tp = <["tp"=2]>
func.func @norm_cube(%x: tensor<6x40xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<6x40xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 40.0 : f32
  %c3 = arith.constant 3 : i64
  %e1 = tensor.empty() : tensor<6x1xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<6x1xf32>) -> tensor<6x1xf32>
  %sum = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<6x40xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) outs(%f1 : tensor<6x1xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<6x1xf32>
  %e2 = tensor.empty() : tensor<6x40xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %y = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<6x40xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<6x1xf32>)
      outs(%e2 : tensor<6x40xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %mean = arith.divf %s, %n : f32
    %d = arith.subf %v, %mean : f32
    %c = math.fpowi %d, %c3 : f32, i64
    linalg.yield %c : f32
  } -> tensor<6x40xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %y : tensor<6x40xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}
