// Auto-sharding (semantics §6a): a 2-layer MLP whose layouts are all free,
// on 4 devices of a device model (1 Pflop/s, 3 TB/s, 10 us + 0.1 ns/B
// links). The optimum is known by hand in each regime:
// - memory ample: data parallel (the batch split, the weights replicated,
//   no communication);
// - a small batch under a budget the replicated weights do not fit:
//   Megatron tensor parallel (w1 by columns, w2 by rows: one reduce of the
//   small activations);
// - a large batch under such a budget: FSDP-style (the batch split, w1
//   stored split and gathered before use: moving the weight is cheaper
//   than moving the large activations);
// - a budget below what any layout needs: an error naming that least (so
//   the runs with the budget that fails the large batch exit non-zero).
// RUN: dist-opt %s -split-input-file --dist-partition="topology=%S/Inputs/device.json" -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=AMPLE
// RUN: not dist-opt %s -split-input-file --dist-partition="topology=%S/Inputs/device.json memory-budget=250000000" -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=TIGHT
// RUN: dist-opt %s -split-input-file --dist-partition="topology=%S/Inputs/device.json memory-budget=1800000000" -dist-remarks -o /dev/null 2>&1 | FileCheck %s --check-prefix=LARGE
// The function type holds the chosen layouts.
// RUN: not dist-opt %s -split-input-file --dist-partition="topology=%S/Inputs/device.json memory-budget=250000000" 2>/dev/null | FileCheck %s --check-prefix=IR

// AMPLE-LABEL: dist-partition: @small_batch: proven optimal; modelled compute 5.498e-04 s, communication 0.000e+00 s
// AMPLE: @small_batch: argument #0 takes #dist.sharding<@m, [{"x"}, {}]>
// AMPLE: @small_batch: argument #1 takes #dist.sharding<@m, [{}, {}]>
// AMPLE: @small_batch: argument #2 takes #dist.sharding<@m, [{}, {}]>
// AMPLE: @small_batch: result #0 takes #dist.sharding<@m, [{"x"}, {}]>

// TIGHT-LABEL: dist-partition: @small_batch: proven optimal; modelled compute 5.498e-04 s, communication 1.013e-02 s, peak memory 2.181e+08 B per device
// TIGHT: @small_batch: argument #0 takes #dist.sharding<@m, [{"x"}, {}]>
// TIGHT: @small_batch: argument #1 takes #dist.sharding<@m, [{}, {"x"}]>
// TIGHT: @small_batch: argument #2 takes #dist.sharding<@m, [{"x"}, {}]>
// TIGHT: @small_batch: result #0 takes #dist.sharding<@m, [{"x"}, {}]>

// IR-LABEL: func.func @small_batch
// IR-SAME: (%{{.*}}: tensor<8192x4096xbf16, #dist.sharding<@m, [{"x"}, {}]>>, %{{.*}}: tensor<4096x16384xbf16, #dist.sharding<@m, [{}, {"x"}]>>, %{{.*}}: tensor<16384x4096xbf16, #dist.sharding<@m, [{"x"}, {}]>>)
// IR-SAME: -> tensor<8192x4096xbf16, #dist.sharding<@m, [{"x"}, {}]>>
dist.mesh @m = <["x"=4]>
func.func @small_batch(%x: tensor<8192x4096xbf16>, %w1: tensor<4096x16384xbf16>, %w2: tensor<16384x4096xbf16>)
    -> tensor<8192x4096xbf16> attributes {dist.auto = @m} {
  %zero = arith.constant 0.0 : bf16
  %e1 = tensor.empty() : tensor<8192x16384xbf16>
  %f1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<8192x16384xbf16>) -> tensor<8192x16384xbf16>
  %h = linalg.matmul ins(%x, %w1 : tensor<8192x4096xbf16>, tensor<4096x16384xbf16>) outs(%f1 : tensor<8192x16384xbf16>) -> tensor<8192x16384xbf16>
  %e2 = tensor.empty() : tensor<8192x4096xbf16>
  %f2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<8192x4096xbf16>) -> tensor<8192x4096xbf16>
  %y = linalg.matmul ins(%h, %w2 : tensor<8192x16384xbf16>, tensor<16384x4096xbf16>) outs(%f2 : tensor<8192x4096xbf16>) -> tensor<8192x4096xbf16>
  return %y : tensor<8192x4096xbf16>
}

// -----

// AMPLE-LABEL: dist-partition: @large_batch: proven optimal; modelled compute 8.796e-03 s, communication 0.000e+00 s
// AMPLE: @large_batch: argument #0 takes #dist.sharding<@m, [{"x"}, {}]>
// AMPLE: @large_batch: argument #1 takes #dist.sharding<@m, [{}, {}]>
// AMPLE: @large_batch: argument #2 takes #dist.sharding<@m, [{}, {}]>

// TIGHT: error: 'func.func' op cannot be partitioned within the memory budget of 250000000 B per device: the least any choice of layouts needs is 1778384896 B

// LARGE-LABEL: dist-partition: @large_batch: proven optimal; modelled compute 8.796e-03 s, communication 1.010e-02 s, peak memory 1.778e+09 B per device
// LARGE: @large_batch: argument #0 takes #dist.sharding<@m, [{"x"}, {}]>
// w1 is stored split and gathered whole before use: any split of it is as
// good (same bytes, same gather), so either dim is accepted.
// LARGE: @large_batch: argument #1 takes #dist.sharding<@m, [{{.*}}"x"{{.*}}]> (3.355e+07 B per device)
// LARGE: @large_batch: argument #2 takes #dist.sharding<@m, [{}, {}]>
// LARGE: @large_batch: result #0 takes #dist.sharding<@m, [{"x"}, {}]>
dist.mesh @m = <["x"=4]>
func.func @large_batch(%x: tensor<131072x4096xbf16>, %w1: tensor<4096x16384xbf16>, %w2: tensor<16384x4096xbf16>)
    -> tensor<131072x4096xbf16> attributes {dist.auto = @m} {
  %zero = arith.constant 0.0 : bf16
  %e1 = tensor.empty() : tensor<131072x16384xbf16>
  %f1 = linalg.fill ins(%zero : bf16) outs(%e1 : tensor<131072x16384xbf16>) -> tensor<131072x16384xbf16>
  %h = linalg.matmul ins(%x, %w1 : tensor<131072x4096xbf16>, tensor<4096x16384xbf16>) outs(%f1 : tensor<131072x16384xbf16>) -> tensor<131072x16384xbf16>
  %e2 = tensor.empty() : tensor<131072x4096xbf16>
  %f2 = linalg.fill ins(%zero : bf16) outs(%e2 : tensor<131072x4096xbf16>) -> tensor<131072x4096xbf16>
  %y = linalg.matmul ins(%h, %w2 : tensor<131072x16384xbf16>, tensor<16384x4096xbf16>) outs(%f2 : tensor<131072x4096xbf16>) -> tensor<131072x4096xbf16>
  return %y : tensor<131072x4096xbf16>
}
