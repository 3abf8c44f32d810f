// Collectives on interleaved dims (SPEC §2 segments) run the plain local
// collective on a buffer packed into one chunk per group member, chunk j
// holding member j's block of every segment.
// RUN: dist-opt %s --dist-localize | FileCheck %s
// RUN: dist-opt %s --dist-localize | dist-opt --verify-roundtrip > /dev/null

dist.mesh @tp = <["tp"=2]>

// Rank r holds [Q_r (4 rows); K_r (2 rows)]. The gather delivers [Q_0 K_0 |
// Q_1 K_1], regrouped into [Q_0 Q_1 | K_0 K_1].
// CHECK-LABEL: func @gather
// CHECK-SAME: (%[[X:.*]]: tensor<6x3xf32>) -> tensor<12x3xf32>
// CHECK: %[[G:.*]] = dist.local.all_gather %[[X]] on @tp axes = ["tp"] dim = 0 : tensor<6x3xf32> -> tensor<12x3xf32>
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: %[[Q0:.*]] = tensor.extract_slice %[[G]][0, 0] [4, 3]
// CHECK: %[[R0:.*]] = tensor.insert_slice %[[Q0]] into %[[Z]][0, 0] [4, 3]
// CHECK: %[[Q1:.*]] = tensor.extract_slice %[[G]][6, 0] [4, 3]
// CHECK: %[[R1:.*]] = tensor.insert_slice %[[Q1]] into %[[R0]][4, 0] [4, 3]
// CHECK: %[[K0:.*]] = tensor.extract_slice %[[G]][4, 0] [2, 3]
// CHECK: %[[R2:.*]] = tensor.insert_slice %[[K0]] into %[[R1]][8, 0] [2, 3]
// CHECK: %[[K1:.*]] = tensor.extract_slice %[[G]][10, 0] [2, 3]
// CHECK: %[[R3:.*]] = tensor.insert_slice %[[K1]] into %[[R2]][10, 0] [2, 3]
// CHECK: return %[[R3]]
func.func @gather(%x: tensor<12x3xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>>)
    -> tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>> {
  %0 = dist.all_gather %x axes = ["tp"] dim = 0 : tensor<12x3xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>> -> tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>>
  return %0 : tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>>
}

// The partial sums are packed as [Q[0:4] K[0:2] | Q[4:8] K[2:4]] and
// reduce-scattered: rank r receives the sums of [Q_r; K_r].
// CHECK-LABEL: func @reduce_scatter
// CHECK-SAME: (%[[P:.*]]: tensor<12x3xf32>) -> tensor<6x3xf32>
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: tensor.extract_slice %[[P]][0, 0] [4, 3]
// CHECK: tensor.insert_slice {{.*}}[0, 0] [4, 3]
// CHECK: tensor.extract_slice %[[P]][4, 0] [4, 3]
// CHECK: tensor.insert_slice {{.*}}[6, 0] [4, 3]
// CHECK: tensor.extract_slice %[[P]][8, 0] [2, 3]
// CHECK: tensor.insert_slice {{.*}}[4, 0] [2, 3]
// CHECK: tensor.extract_slice %[[P]][10, 0] [2, 3]
// CHECK: %[[PACKED:.*]] = tensor.insert_slice {{.*}}[10, 0] [2, 3]
// CHECK: dist.local.reduce_scatter %[[PACKED]] on @tp axes = ["tp"] dim = 0 reduction = sum : tensor<12x3xf32> -> tensor<6x3xf32>
func.func @reduce_scatter(%p: tensor<12x3xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>)
    -> tensor<12x3xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>> {
  %0 = dist.reduce_scatter %p axes = ["tp"] dim = 0 reduction = sum : tensor<12x3xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>> -> tensor<12x3xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>>
  return %0 : tensor<12x3xf32, #dist.sharding<@tp, [{"tp"} segments [8, 4], {}]>>
}

// Contiguous collectives are untouched.
// CHECK-LABEL: func @contiguous
// CHECK-NEXT: dist.local.all_gather
// CHECK-NEXT: return
func.func @contiguous(%x: tensor<12x3xf32, #dist.sharding<@tp, [{"tp"}, {}]>>)
    -> tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>> {
  %0 = dist.all_gather %x axes = ["tp"] dim = 0 : tensor<12x3xf32, #dist.sharding<@tp, [{"tp"}, {}]>> -> tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>>
  return %0 : tensor<12x3xf32, #dist.sharding<@tp, [{}, {}]>>
}
