// RUN: not dist-opt %s --dist-partition="chooser=best" 2>&1 | FileCheck %s --check-prefix=CHOOSER
// RUN: not dist-opt %s --dist-partition="strategy=fastest" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not dist-opt %s --dist-partition="moves=p2p" 2>&1 | FileCheck %s --check-prefix=MOVES
// RUN: not dist-opt %s --dist-partition="alpha=q=1e-5" 2>&1 | FileCheck %s --check-prefix=UNKNOWN-AXIS
// RUN: not dist-opt %s --dist-partition="time-limit=-1" 2>&1 | FileCheck %s --check-prefix=TIME-LIMIT
// RUN: not dist-opt %s --dist-partition="memory-budget=lots" 2>&1 | FileCheck %s --check-prefix=BUDGET
// RUN: echo '{"device": {"flops": 0}}' > %t.device.json
// RUN: not dist-opt %s --dist-partition="topology=%t.device.json" 2>&1 | FileCheck %s --check-prefix=DEVICE
// The baselines and the optimal chooser on a program where they differ (the
// transformer block of docs/tutorial-transformer.md): deciding op by op
// costs two more collectives. (`joint` and `per-op`, the older names of
// optimal and greedy, are still taken: ALIAS.)
// The summary remarks are one line each: the module they are about is not
// printed after them, so no flag is needed to read them.
// RUN: dist-opt %S/Inputs/transformer-block.mlir --dist-partition="chooser=optimal" -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=JOINT --implicit-check-not=module --implicit-check-not=note: --implicit-check-not=linalg
// RUN: dist-opt %S/Inputs/transformer-block.mlir --dist-partition="chooser=greedy" -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=PEROP --implicit-check-not=module --implicit-check-not=note: --implicit-check-not=linalg
// RUN: dist-opt %S/Inputs/transformer-block.mlir --dist-partition="chooser=per-op" -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALIAS
// RUN: dist-opt %S/Inputs/transformer-block.mlir --dist-partition="chooser=joint" -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=JOINT
// ALIAS: 15 ops partitioned (chooser greedy), 6 reshards inserted, modelled cost 1.800e-04 s
// RUN: dist-opt %S/Inputs/transformer-block.mlir --dist-partition="chooser=keep-larger" -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=LARGER --implicit-check-not=module --implicit-check-not=note: --implicit-check-not=linalg
// The summary is printed also when nothing needs planning. (Each reshard's
// remark is about its op, which MLIR shows after it; the module is not.)
// RUN: dist-opt %s --dist-reshard-pipeline -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE --implicit-check-not=module --implicit-check-not=dist.mesh --implicit-check-not=func.func

// CHOOSER: for the --chooser option: Cannot find option named 'best'!
// STRATEGY: for the --strategy option: Cannot find option named 'fastest'!
// MOVES: for the --moves option: Cannot find option named 'p2p'!
// UNKNOWN-AXIS: dist-partition: option 'alpha' names axis "q", which no mesh in this module has
// TIME-LIMIT: error: dist-partition: time-limit must be a finite number of seconds >= 0, got -1
// BUDGET: for the --memory-budget option: 'lots' value invalid for
// DEVICE: error: dist-partition: {{.*}}device.flops must be > 0

// JOINT: transformer-block.mlir:0:0: remark: dist-partition: @transformer: proven optimal; modelled compute 2.287e-08 s, communication 1.200e-04 s, peak memory {{.*}} B per device
// JOINT: transformer-block.mlir:0:0: remark: dist-partition: 15 ops partitioned (chooser optimal), 6 reshards inserted, modelled cost 1.200e-04 s
// PEROP: remark: dist-partition: @transformer: chosen by greedy; modelled compute 2.287e-08 s, communication 1.800e-04 s
// PEROP: remark: dist-partition: 15 ops partitioned (chooser greedy), 6 reshards inserted, modelled cost 1.800e-04 s
// LARGER: remark: dist-partition: @transformer: chosen by keep-larger; modelled compute 2.287e-08 s, communication 1.800e-04 s
// LARGER: remark: dist-partition: 15 ops partitioned (chooser keep-larger), 6 reshards inserted, modelled cost 1.800e-04 s
// PIPELINE: remark: dist-partition: @megatron_mlp: proven optimal
// PIPELINE: remark: dist-partition: 3 ops partitioned (chooser optimal), 3 reshards inserted, modelled cost 6.002e-05 s
// PIPELINE: remark: dist-lower-reshard: 3 reshards lowered, {{.*}} modelled cost 6.002e-05 s

dist.mesh @tp = <["tp"=4]>
func.func @megatron_mlp(%x: tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>,
                        %w1: tensor<64x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                        %w2: tensor<256x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<16x256xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>, tensor<64x256xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
                     outs(%f1 : tensor<16x256xf32>) -> tensor<16x256xf32>
  %zeros = arith.constant dense<0.0> : tensor<16x256xf32>
  %r = arith.maximumf %h, %zeros : tensor<16x256xf32>
  %e2 = tensor.empty() : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) -> tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  %y = linalg.matmul ins(%r, %w2 : tensor<16x256xf32>, tensor<256x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
                     outs(%f2 : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>) -> tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %y : tensor<16x64xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}
