// RUN: dist-opt %s -split-input-file --dist-lower-reshard="max-peak-bytes=4096" -verify-diagnostics

// Gathering 8 KiB per device needs at least 2 KiB + 8 KiB of memory at the peak.
dist.mesh @m = <["x"=4]>
func.func @over_peak(%a: tensor<2048xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<2048xf32, #dist.sharding<@m, [{}]>> {
  // expected-error @+1 {{'dist.reshard' op cannot be lowered: target layout [{}] is unreachable from [{"x"}]: no sequence of moves keeps the peak within 4096 bytes per device}}
  %b = dist.reshard %a : tensor<2048xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<2048xf32, #dist.sharding<@m, [{}]>>
  return %b : tensor<2048xf32, #dist.sharding<@m, [{}]>>
}

// -----

dist.mesh @m = <["x"=4]>
func.func @index_elements(%a: tensor<16xindex, #dist.sharding<@m, [{"x"}]>>) -> tensor<16xindex, #dist.sharding<@m, [{}]>> {
  // expected-error @+1 {{'dist.reshard' op cannot plan a reshard of element type 'index', which has no fixed byte size}}
  %b = dist.reshard %a : tensor<16xindex, #dist.sharding<@m, [{"x"}]>> -> tensor<16xindex, #dist.sharding<@m, [{}]>>
  return %b : tensor<16xindex, #dist.sharding<@m, [{}]>>
}

// -----

dist.mesh @m = <["x"=2, "y"=2]>
func.func @partial_order(%a: tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {"x", "y"}>>) -> tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {"y", "x"}>> {
  // expected-error @+1 {{'dist.reshard' op reshards between layouts that differ only in the order of their partial axes; write the partial axes in the same order}}
  %b = dist.reshard %a : tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {"x", "y"}>> -> tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {"y", "x"}>>
  return %b : tensor<16xf32, #dist.sharding<@m, [{}], partial = sum {"y", "x"}>>
}
