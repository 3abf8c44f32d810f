// RUN: dist-opt %s --convert-compute-to-gpu -split-input-file -verify-diagnostics

// The host cannot read device memory (a scalar taken out of a buffer).
func.func @scalar_read(%a: memref<4xf32>, %b: memref<f32>) {
  %c0 = arith.constant 0 : index
  // expected-error @+1 {{'memref.load' op reads or writes device memory on the host, which target=gpu cannot do (it runs only the program's parallel loops as kernels); use target=cpu}}
  %v = memref.load %a[%c0] : memref<4xf32>
  return
}

// -----

func.func @scalar_write(%a: memref<4xf32>, %v: f32) {
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{'memref.store' op reads or writes device memory on the host}}
  memref.store %v, %a[%c1] : memref<4xf32>
  return
}
