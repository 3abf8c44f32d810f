// Meshes of 2^25..2^31 devices took tens of seconds and gigabytes
// to lower, or ran out of memory. Collectives over mesh axes lower in the
// same time and size whatever the mesh (no per-device tables), and so do
// permutes, which carry their layouts past 4096 devices; a redistribute,
// which becomes a table with an entry per device, is a located error past
// 2^20 devices; planning is an error past 2^24 devices. Each case must answer
// in seconds within 2 GiB.
// RUN: %bounded 60 2048 dist-opt %s --dist-to-llvm -split-input-file -verify-diagnostics

// An all_gather on 2^31 devices lowers (to a runtime call over the axis).
dist.mesh @m = <["x"=32768, "y"=65536]>
func.func @gather(%a: tensor<65536x8xf32, #dist.sharding<@m, [{"x"}, {}]>>) -> tensor<65536x8xf32, #dist.sharding<@m, [{}, {}]>> {
  %0 = dist.all_gather %a axes = ["x"] dim = 0 : tensor<65536x8xf32, #dist.sharding<@m, [{"x"}, {}]>> -> tensor<65536x8xf32, #dist.sharding<@m, [{}, {}]>>
  return %0 : tensor<65536x8xf32, #dist.sharding<@m, [{}, {}]>>
}

// -----

dist.mesh @m = <["x"=32768, "y"=64]>
// A permute on 2^21 devices carries its two layouts; the runtime computes
// the senders (no table, no error).
func.func @permute(%a: tensor<65536xf32, #dist.sharding<@m, [{"x", "y"}]>>) -> tensor<65536xf32, #dist.sharding<@m, [{"y", "x"}]>> {
  %0 = dist.reshard %a : tensor<65536xf32, #dist.sharding<@m, [{"x", "y"}]>> -> tensor<65536xf32, #dist.sharding<@m, [{"y", "x"}]>>
  return %0 : tensor<65536xf32, #dist.sharding<@m, [{"y", "x"}]>>
}

// -----

dist.mesh @m = <["x"=32768, "y"=64]>
func.func @redistribute(%a: tensor<65536xf32, #dist.sharding<@m, [{"x", "y"}]>>) -> tensor<65536xf32, #dist.sharding<@m, [{"y", "x"}]>> {
  // expected-error @+1 {{cannot be lowered: a redistribute on mesh <["x"=32768, "y"=64]> of 2097152 devices; dist lowers redistributes on meshes of at most 2^20 (1048576) devices, as their tables hold an entry per device}}
  %0 = dist.redistribute %a : tensor<65536xf32, #dist.sharding<@m, [{"x", "y"}]>> -> tensor<65536xf32, #dist.sharding<@m, [{"y", "x"}]>>
  return %0 : tensor<65536xf32, #dist.sharding<@m, [{"y", "x"}]>>
}

// -----

dist.mesh @m = <["x"=32768, "y"=65536]>
func.func @plan(%a: tensor<65536xf32, #dist.sharding<@m, [{"x", "y"}]>>) -> tensor<65536xf32, #dist.sharding<@m, [{"y", "x"}]>> {
  // expected-error @+1 {{has 2147483648 devices; the planner plans on meshes of at most 2^24 (16777216) devices}}
  %0 = dist.reshard %a : tensor<65536xf32, #dist.sharding<@m, [{"x", "y"}]>> -> tensor<65536xf32, #dist.sharding<@m, [{"y", "x"}]>>
  return %0 : tensor<65536xf32, #dist.sharding<@m, [{"y", "x"}]>>
}
