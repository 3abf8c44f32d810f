// With the default parameters (every axis alike) the planner reduce-scatters
// over "x" and all-reduces over "y":
// RUN: dist-opt %s --dist-lower-reshard | FileCheck %s --check-prefix=FLAT
// When "x" is slow (beta 1e-9 s/B, a network link), it first reduce-scatters
// over the fast "y" so that the slow axis carries half the data, then
// gathers "y" back. The same result three ways: a topology file, per-axis
// options, and the mesh's own cost attribute.
// RUN: dist-opt %s --dist-lower-reshard="topology=%S/Inputs/slow-x.json" | FileCheck %s --check-prefix=SLOW
// RUN: dist-opt %s --dist-lower-reshard="beta=x=1e-9" | FileCheck %s --check-prefix=SLOW
// RUN: sed 's/@mesh = <\["x"=4, "y"=2\]>/@mesh = <["x"=4, "y"=2]> {cost = {x = {alpha = 1.0e-05, beta = 1.0e-09}, y = {alpha = 1.0e-05, beta = 2.7e-12}}}/' %s \
// RUN:   | dist-opt --dist-lower-reshard | FileCheck %s --check-prefix=SLOW
// Per-kind parameters (semantics §3b): only x's reductions slow is enough,
// the plan is the same.
// RUN: dist-opt %s --dist-lower-reshard="topology=%S/Inputs/slow-x-reductions.json" | FileCheck %s --check-prefix=SLOW
// Options win over the mesh attribute: making "x" fast again restores the flat plan.
// RUN: sed 's/@mesh = <\["x"=4, "y"=2\]>/@mesh = <["x"=4, "y"=2]> {cost = {x = {alpha = 1.0e-05, beta = 1.0e-09}, y = {alpha = 1.0e-05, beta = 2.7e-12}}}/' %s \
// RUN:   | dist-opt --dist-lower-reshard="beta=x=2.7e-12" | FileCheck %s --check-prefix=FLAT

dist.mesh @mesh = <["x"=4, "y"=2]>

// FLAT-LABEL: func @avoid_slow_axis
// FLAT: %[[RS:.*]] = dist.reduce_scatter %{{.*}} axes = ["x"] dim = 1 reduction = sum
// FLAT-NEXT: dist.all_reduce %[[RS]] axes = ["y"] reduction = sum
// SLOW-LABEL: func @avoid_slow_axis
// SLOW: %[[RSY:.*]] = dist.reduce_scatter %{{.*}} axes = ["y"] dim = 0 reduction = sum
// SLOW-NEXT: %[[RSX:.*]] = dist.reduce_scatter %[[RSY]] axes = ["x"] dim = 1 reduction = sum
// SLOW-NEXT: dist.all_gather %[[RSX]] axes = ["y"] dim = 0
func.func @avoid_slow_axis(%a: tensor<64x64xf32, #dist.sharding<@mesh, [{}, {}], partial = sum {"x", "y"}>>)
    -> tensor<64x64xf32, #dist.sharding<@mesh, [{}, {"x"}]>> {
  %b = dist.reshard %a : tensor<64x64xf32, #dist.sharding<@mesh, [{}, {}], partial = sum {"x", "y"}>>
                      -> tensor<64x64xf32, #dist.sharding<@mesh, [{}, {"x"}]>>
  return %b : tensor<64x64xf32, #dist.sharding<@mesh, [{}, {"x"}]>>
}
