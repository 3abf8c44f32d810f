// RUN: dist-opt %s --convert-dist-to-runtime --split-input-file -verify-diagnostics
// RUN: not dist-opt %s --split-input-file --convert-dist-to-runtime="target=tpu" 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: for the --target option: Cannot find option named 'tpu'!

dist.mesh @m = <["x"=2]>
func.func @not_bufferized(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'dist.local.all_reduce' op must be bufferized before convert-dist-to-runtime (run dist-localize and one-shot-bufferize first)}}
  %0 = dist.local.all_reduce %a on @m axes = ["x"] reduction = sum : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

dist.mesh @m = <["x"=2]>
func.func @no_runtime_type(%a: memref<4xf8E4M3FN>, %b: memref<4xf8E4M3FN>) {
  // expected-error @+1 {{'dist.buffer.all_reduce' op element type 'f8E4M3FN' has no runtime equivalent}}
  dist.buffer.all_reduce %a, %b on @m axes = ["x"] reduction = sum : memref<4xf8E4M3FN>, memref<4xf8E4M3FN>
  return
}
