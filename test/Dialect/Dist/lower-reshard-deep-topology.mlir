// A topology file nested 60k levels deep overflowed the recursive
// JSON parser's stack (SIGSEGV); it is now a located pass error.
// RUN: python3 -c "print('[' * 60000 + ']' * 60000)" > %t.json
// RUN: not %bounded 30 2048 dist-opt %s --dist-lower-reshard="topology=%t.json" 2>&1 | FileCheck %s
// CHECK: error: dist-lower-reshard: topology file '{{.*}}.json': topology: invalid JSON: JSON nested more than 64 levels deep (at byte 64)

dist.mesh @m = <["x"=4]>
func.func @f(%a: tensor<64xf32, #dist.sharding<@m, [{"x"}]>>) -> tensor<64xf32, #dist.sharding<@m, [{}]>> {
  %b = dist.reshard %a : tensor<64xf32, #dist.sharding<@m, [{"x"}]>> -> tensor<64xf32, #dist.sharding<@m, [{}]>>
  return %b : tensor<64xf32, #dist.sharding<@m, [{}]>>
}
