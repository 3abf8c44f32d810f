// RUN: dist-opt %s --dist-partition=stop-after=normalize | FileCheck %s
// RUN: dist-opt %s --dist-partition=stop-after=normalize | dist-opt --verify-roundtrip > /dev/null
// RUN: not dist-opt %s --dist-partition=stop-after=plan 2>&1 | FileCheck %s --check-prefix=BAD
// The first step alone: the compute in the one form the rules read, with no
// layout chosen yet.

// BAD: for the --stop-after option: Cannot find option named 'plan'!

dist.mesh @m = <["x"=4]>

// Elementwise ops become linalg.generic on a fresh init; a splat constant
// becomes a fill.
// CHECK-LABEL: func @elementwise
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%arg0 : {{.*}}) outs(%[[E]] : {{.*}})
// CHECK: math.exp %{{.*}} : f32
// CHECK: %[[TWO:.*]] = linalg.fill ins(%{{.*}} : f32)
// CHECK: linalg.generic {{.*}} ins(%[[EXP]], %[[TWO]] : {{.*}})
// CHECK: arith.mulf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: dist.reshard
func.func @elementwise(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = math.exp %a : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %two = arith.constant dense<2.0> : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %m = arith.mulf %e, %two : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %m : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

// A constant fill used twice gets one copy (with its own empty) per use.
// CHECK-LABEL: func @fill_per_use
// CHECK: %[[F1:.*]] = linalg.fill
// CHECK: %[[F2:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<8xf32>)
// CHECK: linalg.map { arith.addf } ins(%arg0, %[[F2]] :
// CHECK: linalg.map { arith.mulf } ins(%{{.*}}, %[[F1]] :
func.func @fill_per_use(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%one : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %s = linalg.map { arith.addf } ins(%a, %f : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>, tensor<8xf32>) outs(%e1 : tensor<8xf32>)
  %e2 = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %p = linalg.map { arith.mulf } ins(%s, %f : tensor<8xf32>, tensor<8xf32>) outs(%e2 : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
  return %p : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

// linalg.softmax is partitioned through its decomposition: a max
// reduction, exp of the difference, a sum reduction and a division, each a
// linalg.generic the linalg model reads (so the softmax dim may be split,
// its partial max and sum reduced where needed).
// CHECK-LABEL: func @softmax
// CHECK-NOT: linalg.softmax
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: arith.maxnumf
// CHECK: %[[EXP:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[MAX]] :
// CHECK: math.exp
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%[[EXP]] :
// CHECK: arith.addf
// CHECK: linalg.generic {{.*}} ins(%[[EXP]], %[[SUM]] :
// CHECK: arith.divf
func.func @softmax(%a: tensor<4x8xf32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> tensor<4x8xf32, #dist.sharding<@m, [{}, {"x"}]>> {
  %e = tensor.empty() : tensor<4x8xf32, #dist.sharding<@m, [{}, {"x"}]>>
  %s = linalg.softmax dimension(1) ins(%a : tensor<4x8xf32, #dist.sharding<@m, [{}, {"x"}]>>)
                                   outs(%e : tensor<4x8xf32, #dist.sharding<@m, [{}, {"x"}]>>) -> tensor<4x8xf32, #dist.sharding<@m, [{}, {"x"}]>>
  return %s : tensor<4x8xf32, #dist.sharding<@m, [{}, {"x"}]>>
}

// tensor.dim of a global tensor is its global extent, a constant (after
// localization it would read the local block's).
// CHECK-LABEL: func @global_dim
// CHECK-NOT: tensor.dim
// CHECK: %[[N:.*]] = arith.constant 10 : index
// CHECK: return %[[N]]
func.func @global_dim(%a: tensor<10x4xf32, #dist.sharding<@m, [{"x"}, {}]>>) -> index {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %a, %c0 : tensor<10x4xf32, #dist.sharding<@m, [{"x"}, {}]>>
  return %n : index
}

// A tensor a linalg body reads with tensor.extract (an embedding's table)
// becomes an input of the op too (the lookup form): its map follows the
// loops that index it (here the loop itself: a plain operand), its block
// argument is unused, and the body reads the table as before.
// CHECK-LABEL: func @captured_tensor
// CHECK: linalg.generic {indexing_maps = [#[[$ID:.*]], #[[$ID]], #[[$ID]]], {{.*}}} ins(%arg0, %arg1 : {{.*}})
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %[[UNUSED:.*]]: f32, %{{.*}}: f32):
// CHECK-NOT: %[[UNUSED]]
// CHECK: tensor.extract %arg1[%{{.*}}] : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
// A read that mixes a loop position with data is not a lookup: the tensor
// is copied into a replicated one first, which dist-partition then fills by
// a reshard.
// CHECK-LABEL: func @captured_window
// CHECK: %[[REP:.*]] = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{}]>>
// CHECK: %[[COPY:.*]] = linalg.copy ins(%arg1 : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) outs(%[[REP]] :
// CHECK: linalg.generic
// CHECK: tensor.extract %[[COPY]][%{{.*}}] : tensor<8xf32, #dist.sharding<@m, [{}]>>
func.func @captured_tensor(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>,
                           %t: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) outs(%e : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %w = tensor.extract %t[%i] : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  } -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %r : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}
func.func @captured_window(%a: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>,
                           %t: tensor<8xf32, #dist.sharding<@m, [{"x"}]>>)
    -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>> {
  %e = tensor.empty() : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  %c7 = arith.constant 7 : index
  %r = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]}
      ins(%a : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) outs(%e : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>) {
  ^bb0(%v: f32, %o: f32):
    %i = linalg.index 0 : index
    %f = arith.fptosi %v : f32 to i32
    %k = arith.index_cast %f : i32 to index
    %ik = arith.addi %i, %k : index
    %j = arith.minsi %ik, %c7 : index
    %w = tensor.extract %t[%j] : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
    %s = arith.addf %v, %w : f32
    linalg.yield %s : f32
  } -> tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
  return %r : tensor<8xf32, #dist.sharding<@m, [{"x"}]>>
}

// A max along a dim computed together with its index (torch's softmax asks
// for both and reads only the max): the unread index and everything only it
// needed go, and the max alone has a combiner (its loop may be split).
// CHECK-LABEL: func @unread_argmax
// CHECK: %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%arg0 : {{.*}}) outs(%{{.*}} : tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[IN]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK: return %[[MAX]]
func.func @unread_argmax(%x: tensor<4x16xf32, #dist.sharding<@m, [{}, {"x"}]>>)
    -> tensor<4xf32> {
  %ninf = arith.constant 0xFF800000 : f32
  %c0 = arith.constant 0 : i64
  %e = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%ninf : f32) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %ei = tensor.empty() : tensor<4xi64>
  %fi = linalg.fill ins(%c0 : i64) outs(%ei : tensor<4xi64>) -> tensor<4xi64>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i)>, affine_map<(i, j) -> (i)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<4x16xf32, #dist.sharding<@m, [{}, {"x"}]>>) outs(%f, %fi : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %j = linalg.index 1 : index
    %ji = arith.index_cast %j : index to i64
    %m = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %k = arith.select %gt, %ji, %idx : i64
    linalg.yield %m, %k : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0 : tensor<4xf32>
}
