// Bad pass options are reported before anything is planned, with exit status 1.
// An enum option's unknown word is refused by the option parser, naming the
// option.
// RUN: not dist-opt %s --dist-lower-reshard="strategy=fastest" 2>&1 | FileCheck %s --check-prefix=STRATEGY
// RUN: not dist-opt %s --dist-lower-reshard="moves=p2p" 2>&1 | FileCheck %s --check-prefix=MOVES
// RUN: not dist-opt %s --dist-lower-reshard="alpha=x" 2>&1 | FileCheck %s --check-prefix=ALPHA
// RUN: not dist-opt %s --dist-lower-reshard="beta=x=-1" 2>&1 | FileCheck %s --check-prefix=BETA
// RUN: not dist-opt %s --dist-lower-reshard="alpha=q=1e-5" 2>&1 | FileCheck %s --check-prefix=UNKNOWN-AXIS
// RUN: not dist-opt %s --dist-lower-reshard="topology=%t.missing.json" 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: echo '{"axes": {"x": {"alpha": "fast"}}}' > %t.bad.json
// RUN: not dist-opt %s --dist-lower-reshard="topology=%t.bad.json" 2>&1 | FileCheck %s --check-prefix=BAD-JSON
// RUN: echo '{"axes": {"w": {"alpha": 1e-5, "beta": 1e-12}}}' > %t.other.json
// RUN: not dist-opt %s --dist-lower-reshard="topology=%t.other.json" 2>&1 | FileCheck %s --check-prefix=TOPOLOGY-AXIS
// RUN: not dist-opt %s --dist-lower-reshard="max-peak-bytes=-5" 2>&1 | FileCheck %s --check-prefix=PEAK

// STRATEGY: for the --strategy option: Cannot find option named 'fastest'!
// MOVES: for the --moves option: Cannot find option named 'p2p'!
// ALPHA: error: dist-lower-reshard: bad alpha entry 'x' (expected AXIS=VALUE with a finite VALUE >= 0)
// BETA: error: dist-lower-reshard: bad beta entry 'x=-1' (expected AXIS=VALUE with a finite VALUE >= 0)
// UNKNOWN-AXIS: error: dist-lower-reshard: option 'alpha' names axis "q", which no mesh in this module has
// MISSING: error: dist-lower-reshard: cannot read topology file '{{.*}}.missing.json': No such file or directory
// BAD-JSON: error: dist-lower-reshard: topology file '{{.*}}.bad.json':
// TOPOLOGY-AXIS: error: dist-lower-reshard: the topology file names axis "w", which no mesh in this module has
// PEAK: error: dist-lower-reshard: max-peak-bytes must be >= 0

dist.mesh @m = <["x"=4]>
func.func @f(%a: tensor<64xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<64xf32, #dist.sharding<@m, [{}]>> {
  %b = dist.reshard %a : tensor<64xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<64xf32, #dist.sharding<@m, [{}]>>
  return %b : tensor<64xf32, #dist.sharding<@m, [{}]>>
}
