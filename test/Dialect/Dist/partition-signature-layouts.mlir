// RUN: dist-opt %s -split-input-file --dist-partition | FileCheck %s
// RUN: dist-opt %s -split-input-file --dist-reshard-pipeline -dist-remarks -mlir-print-op-on-diagnostic=false -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK

// Layouts written on the signature alone ({dist.sharding = ...}), as a front
// door writes them into an exporter's output whose body has plain types: the
// arguments' types take them (every use sees them), the result is copied into
// a tensor of its layout. The Megatron MLP then needs exactly the one
// reduce-scatter of its row-parallel product (and the free init of it).

// CHECK-LABEL: func.func @mlp
// CHECK-SAME: (%{{.*}}: tensor<8x16xf32, #dist.sharding<@tp, [{}, {}]>>,
// CHECK-SAME:  %{{.*}}: tensor<16x32xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
// CHECK-SAME:  %{{.*}}: tensor<32x16xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
// CHECK-SAME: -> tensor<8x16xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
// CHECK-NOT: dist.sharding =
// REMARK: dist-partition: 3 ops partitioned (chooser optimal), 2 reshards inserted
// REMARK: remark: planned {{.*}}: [replicate_to_partial {"tp"} sum, 0.000e+00 s]
// REMARK: remark: planned {{.*}}: [reduce_scatter {"tp"} dim 0 sum
dist.mesh @tp = <["tp"=2]>
func.func @mlp(%x: tensor<8x16xf32> {dist.sharding = #dist.sharding<@tp, [{}, {}]>},
               %w1: tensor<16x32xf32> {dist.sharding = #dist.sharding<@tp, [{}, {"tp"}]>},
               %w2: tensor<32x16xf32> {dist.sharding = #dist.sharding<@tp, [{"tp"}, {}]>})
    -> (tensor<8x16xf32> {dist.sharding = #dist.sharding<@tp, [{"tp"}, {}]>}) {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul ins(%h, %w2 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// With dist.auto, the arguments without one stay free.
// CHECK-LABEL: func.func @auto_keeps_the_rest_free
// CHECK-SAME: tensor<16x32xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
dist.mesh @tp = <["tp"=2]>
func.func @auto_keeps_the_rest_free(%x: tensor<8x16xf32>,
    %w1: tensor<16x32xf32> {dist.sharding = #dist.sharding<@tp, [{}, {"tp"}]>})
    -> tensor<8x32xf32> attributes {dist.auto = @tp} {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %h : tensor<8x32xf32>
}

// -----

// The same attribute on an op gives its result the layout, as a JAX sharding
// constraint says (the JAX front door writes it on a copy): a copy into a
// tensor.empty takes it into its type (binding there, free elsewhere), and an
// op whose init other ops share gets a copy into the layout after it, read by
// every use but the inits.
// CHECK-LABEL: func.func @op_layouts
// CHECK: %[[C:.*]] = linalg.copy ins(%{{.*}} : tensor<8x32xf32, {{.*}}>) outs(%{{.*}} : tensor<8x32xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
// CHECK: %[[M:.*]] = linalg.matmul ins(%[[C]], %{{.*}})
// CHECK-SAME: -> tensor<8x16xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>
// CHECK: dist.reshard %[[M]] {{.*}} -> tensor<8x16xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
// REMARK: dist-partition: @op_layouts: proven optimal
dist.mesh @tp = <["tp"=2]>
func.func @op_layouts(%x: tensor<8x16xf32>, %w1: tensor<16x32xf32>,
                      %w2: tensor<32x16xf32>) -> tensor<8x16xf32>
    attributes {dist.auto = @tp} {
  %zero = arith.constant 0.0 : f32
  %e1 = tensor.empty() : tensor<8x32xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %h = linalg.matmul ins(%x, %w1 : tensor<8x16xf32>, tensor<16x32xf32>) outs(%f1 : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e = tensor.empty() : tensor<8x32xf32>
  %c = linalg.copy {dist.sharding = #dist.sharding<@tp, [{}, {"tp"}]>} ins(%h : tensor<8x32xf32>) outs(%e : tensor<8x32xf32>) -> tensor<8x32xf32>
  %e2 = tensor.empty() : tensor<8x16xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %y = linalg.matmul {dist.sharding = #dist.sharding<@tp, [{"tp"}, {}]>} ins(%c, %w2 : tensor<8x32xf32>, tensor<32x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  %z = linalg.add ins(%y, %f2 : tensor<8x16xf32>, tensor<8x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
  return %z : tensor<8x16xf32>
}

// -----

// A signature layout on an argument that starts a loop's carry: the loop
// reads a free copy of it, so the carry's layout is dist's choice.
// CHECK-LABEL: func.func @carried
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
// CHECK: scf.for
// REMARK: dist-partition: @carried: proven optimal
dist.mesh @tp = <["tp"=2]>
func.func @carried(%x: tensor<8x4xf32> {dist.sharding = #dist.sharding<@tp, [{"tp"}, {}]>},
                   %w: tensor<3x4x4xf32>) -> tensor<8x4xf32> attributes {dist.auto = @tp} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %zero = arith.constant 0.0 : f32
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%h = %x) -> (tensor<8x4xf32>) {
    %wi = tensor.extract_slice %w[%i, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<3x4x4xf32> to tensor<4x4xf32>
    %e = tensor.empty() : tensor<8x4xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4xf32>) -> tensor<8x4xf32>
    %m = linalg.matmul ins(%h, %wi : tensor<8x4xf32>, tensor<4x4xf32>) outs(%f : tensor<8x4xf32>) -> tensor<8x4xf32>
    scf.yield %m : tensor<8x4xf32>
  }
  return %r : tensor<8x4xf32>
}
