// Found by fuzzing (test/fuzz): when the element type of a sharded
// tensor type does not parse, MLIR still verifies the encoding, with a null
// element type; that crashed. Now only the parse error is reported.
// RUN: not %bounded 30 2048 dist-opt %s 2>&1 | FileCheck %s
// CHECK: error: undefined symbol alias id '32'
// CHECK-NOT: Stack dump

dist.mesh @m4 = <["x"=4]>
func.func @f(%a: tensor<3x0x!32, #dist.sharding<@m4, [{}, {}]>>) {
  return
}
