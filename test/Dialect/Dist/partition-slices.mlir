// tensor.extract_slice / insert_slice: local where the slice is aligned
// with the blocks, a priced reshard into an aligned layout elsewhere.
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
dist.mesh @tp = <["tp"=2]>

// Segment k of an interleaved dim is every device's k-th block: no move.
// CHECK-LABEL: func @segment_slice
// CHECK-NOT: dist.reshard
// CHECK: %[[K:.*]] = tensor.extract_slice %{{.*}}[0, 16] [4, 4] [1, 1] : tensor<4x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>> to tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
// CHECK-NEXT: return %[[K]]
func.func @segment_slice(%qkv: tensor<4x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>)
    -> tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>> {
  %k = tensor.extract_slice %qkv[0, 16] [4, 4] [1, 1] : tensor<4x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>> to tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  return %k : tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
}

// Two consecutive segments (K and V) stay interleaved.
// CHECK-LABEL: func @two_segments
// CHECK-NOT: dist.reshard
// CHECK: tensor.extract_slice %{{.*}}[0, 16] [4, 8] [1, 1] : {{.*}} to tensor<4x8xf32, #dist.sharding<@tp, [{}, {"tp"} segments [4, 4]]>>
func.func @two_segments(%qkv: tensor<4x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>)
    -> tensor<4x8xf32, #dist.sharding<@tp, [{}, {"tp"} segments [4, 4]]>> {
  %kv = tensor.extract_slice %qkv[0, 16] [4, 8] [1, 1] : tensor<4x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>> to tensor<4x8xf32, #dist.sharding<@tp, [{}, {"tp"} segments [4, 4]]>>
  return %kv : tensor<4x8xf32, #dist.sharding<@tp, [{}, {"tp"} segments [4, 4]]>>
}

// A prefix with the same blocks (13 of 16 over 2: blocks of 7 and 8 do not
// match) is not aligned; 15 of 16 (blocks of 8) is.
// CHECK-LABEL: func @prefix
// CHECK-NOT: dist.reshard
// CHECK: tensor.extract_slice %{{.*}}[0] [15] [1] : tensor<16xf32, #dist.sharding<@tp, [{"tp"}]>> to tensor<15xf32, #dist.sharding<@tp, [{"tp"}]>>
func.func @prefix(%a: tensor<16xf32, #dist.sharding<@tp, [{"tp"}]>>)
    -> tensor<15xf32, #dist.sharding<@tp, [{"tp"}]>> {
  %p = tensor.extract_slice %a[0] [15] [1] : tensor<16xf32, #dist.sharding<@tp, [{"tp"}]>> to tensor<15xf32, #dist.sharding<@tp, [{"tp"}]>>
  return %p : tensor<15xf32, #dist.sharding<@tp, [{"tp"}]>>
}

// A middle slice of a contiguous split: the source is resharded into the
// layout that views the slice as a segment, and sliced there.
// CHECK-LABEL: func @middle
// CHECK: %[[V:.*]] = dist.reshard %{{.*}} -> tensor<16xf32, #dist.sharding<@tp, [{"tp"} segments [3, 8, 5]]>>
// CHECK: tensor.extract_slice %[[V]][3] [8] [1]
func.func @middle(%a: tensor<16xf32, #dist.sharding<@tp, [{"tp"}]>>)
    -> tensor<8xf32, #dist.sharding<@tp, [{"tp"}]>> {
  %p = tensor.extract_slice %a[3] [8] [1] : tensor<16xf32, #dist.sharding<@tp, [{"tp"}]>> to tensor<8xf32, #dist.sharding<@tp, [{"tp"}]>>
  return %p : tensor<8xf32, #dist.sharding<@tp, [{"tp"}]>>
}

// A dynamic offset (a layer's weights out of a stacked tensor) on a dim
// without axes is local; the slice drops that dim.
// CHECK-LABEL: func @stacked
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4x8x6xf32
// CHECK-NOT: dist.reshard
// CHECK: tensor.extract_slice %[[W]][%{{.*}}, 0, 0] [1, 8, 6] [1, 1, 1] : tensor<4x8x6xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> to tensor<8x6xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
func.func @stacked(%w: tensor<4x8x6xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>>, %layer: index)
    -> tensor<8x6xf32, #dist.sharding<@tp, [{"tp"}, {}]>> {
  %l = tensor.extract_slice %w[%layer, 0, 0] [1, 8, 6] [1, 1, 1] : tensor<4x8x6xf32, #dist.sharding<@tp, [{}, {"tp"}, {}]>> to tensor<8x6xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
  return %l : tensor<8x6xf32, #dist.sharding<@tp, [{"tp"}, {}]>>
}

// A partial value is sliced as it is.
// CHECK-LABEL: func @partial_slice
// CHECK-NOT: dist.reshard
// CHECK: tensor.extract_slice {{.*}} to tensor<2x4xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>
func.func @partial_slice(%a: tensor<4x4xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>)
    -> tensor<2x4xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>> {
  %p = tensor.extract_slice %a[1, 0] [2, 4] [1, 1] : tensor<4x4xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>> to tensor<2x4xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>
  return %p : tensor<2x4xf32, #dist.sharding<@tp, [{}, {}], partial = sum {"tp"}>>
}

// insert_slice into segment k of an interleaved destination: local.
// CHECK-LABEL: func @insert_segment
// CHECK-NOT: dist.reshard
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 16] [4, 4] [1, 1] : tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>> into tensor<4x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>
func.func @insert_segment(%k: tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                          %qkv: tensor<4x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>)
    -> tensor<4x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>> {
  %r = tensor.insert_slice %k into %qkv[0, 16] [4, 4] [1, 1] : tensor<4x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>> into tensor<4x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>
  return %r : tensor<4x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>
}

// Writing a prefix is not local even with the same blocks: device 1's block
// of the 7 inserted elements is padded where its block of the 8 holds
// element 7, which the insert would overwrite. The destination is viewed as
// segments [7, 1] instead, where the insert is segment 1's.
// CHECK-LABEL: func @insert_prefix
// CHECK: %[[D:.*]] = dist.reshard %{{.*}} -> tensor<8xf32, #dist.sharding<@tp, [{"tp"} segments [7, 1]]>>
// CHECK: tensor.insert_slice %{{.*}} into %[[D]][0] [7] [1]
func.func @insert_prefix(%p: tensor<7xf32, #dist.sharding<@tp, [{"tp"}]>>,
                         %d: tensor<8xf32, #dist.sharding<@tp, [{"tp"}]>>)
    -> tensor<8xf32, #dist.sharding<@tp, [{"tp"}]>> {
  %r = tensor.insert_slice %p into %d[0] [7] [1] : tensor<7xf32, #dist.sharding<@tp, [{"tp"}]>> into tensor<8xf32, #dist.sharding<@tp, [{"tp"}]>>
  return %r : tensor<8xf32, #dist.sharding<@tp, [{"tp"}]>>
}
