// tensor.concat and tensor.pad along a split dim give interleaved results
// (segments), computed locally.
// RUN: dist-opt %s --dist-partition | FileCheck %s
// RUN: dist-opt %s --dist-partition | dist-opt --verify-roundtrip > /dev/null
dist.mesh @tp = <["tp"=2]>

// Concatenating Q, K and V weights split by columns gives the fused weight
// split per segment, with no move.
// CHECK-LABEL: func @fuse_qkv
// CHECK-NOT: dist.reshard
// CHECK: tensor.concat dim(1) {{.*}} -> tensor<8x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>
func.func @fuse_qkv(%q: tensor<8x16xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                    %k: tensor<8x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                    %v: tensor<8x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
    -> tensor<8x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>> {
  %w = tensor.concat dim(1) %q, %k, %v : (tensor<8x16xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<8x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<8x4xf32, #dist.sharding<@tp, [{}, {"tp"}]>>) -> tensor<8x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>
  return %w : tensor<8x24xf32, #dist.sharding<@tp, [{}, {"tp"} segments [16, 4, 4]]>>
}

// Concatenating along an unsplit dim is local on any layout of the others.
// CHECK-LABEL: func @concat_rows
// CHECK-NOT: dist.reshard
// CHECK: tensor.concat dim(0) {{.*}} -> tensor<12x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
func.func @concat_rows(%a: tensor<8x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>,
                       %b: tensor<4x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>)
    -> tensor<12x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>> {
  %c = tensor.concat dim(0) %a, %b : (tensor<8x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>, tensor<4x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>) -> tensor<12x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
  return %c : tensor<12x8xf32, #dist.sharding<@tp, [{}, {"tp"}]>>
}

// Padding a split dim: segments [low, N, high], local.
// CHECK-LABEL: func @pad_split
// CHECK-NOT: dist.reshard
// CHECK: tensor.pad %{{.*}} low[2] high[1]
// CHECK: } : tensor<8xf32, #dist.sharding<@tp, [{"tp"}]>> to tensor<11xf32, #dist.sharding<@tp, [{"tp"} segments [2, 8, 1]]>>
func.func @pad_split(%a: tensor<8xf32, #dist.sharding<@tp, [{"tp"}]>>)
    -> tensor<11xf32, #dist.sharding<@tp, [{"tp"} segments [2, 8, 1]]>> {
  %zero = arith.constant 0.0 : f32
  %p = tensor.pad %a low[2] high[1] {
  ^bb0(%i: index):
    tensor.yield %zero : f32
  } : tensor<8xf32, #dist.sharding<@tp, [{"tp"}]>> to tensor<11xf32, #dist.sharding<@tp, [{"tp"} segments [2, 8, 1]]>>
  return %p : tensor<11xf32, #dist.sharding<@tp, [{"tp"} segments [2, 8, 1]]>>
}

// A padding value that depends on the position runs replicated.
// CHECK-LABEL: func @pad_by_position
// CHECK: %[[G:.*]] = dist.reshard %{{.*}} -> tensor<8xi32, #dist.sharding<@tp, [{}]>>
// CHECK: tensor.pad %[[G]]
// CHECK: } : tensor<8xi32, #dist.sharding<@tp, [{}]>> to tensor<10xi32, #dist.sharding<@tp, [{}]>>
func.func @pad_by_position(%a: tensor<8xi32, #dist.sharding<@tp, [{"tp"}]>>)
    -> tensor<10xi32, #dist.sharding<@tp, [{"tp"}]>> {
  %p = tensor.pad %a low[1] high[1] {
  ^bb0(%i: index):
    %v = arith.index_cast %i : index to i32
    tensor.yield %v : i32
  } : tensor<8xi32, #dist.sharding<@tp, [{"tp"}]>> to tensor<10xi32, #dist.sharding<@tp, [{"tp"}]>>
  return %p : tensor<10xi32, #dist.sharding<@tp, [{"tp"}]>>
}
