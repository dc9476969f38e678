// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// fusion.fma: a * b + c rounded once. Three operands, tensors or scalars, broadcasting
// together (static size-1 dims); the result is their promoted type, a float
// (tests/test_fma.py runs it).

// CHECK-LABEL: func.func @fma
func.func @fma(%x: tensor<?x4xf32>, %row: tensor<1x4xf32>, %h: tensor<8xbf16>, %f: tensor<8xf16>, %d: tensor<f64>, %i: tensor<8xi32>, %s: f32, %n: i64) {
  // One type for all: the short form.
  // CHECK-NEXT: %same = fusion.fma %x, %x, %x : tensor<?x4xf32>
  %same = fusion.fma %x, %x, %x : tensor<?x4xf32>
  // A static size-1 dim broadcasts.
  // CHECK-NEXT: %bcast = fusion.fma %x, %row, %x : tensor<?x4xf32>, tensor<1x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %bcast = fusion.fma %x, %row, %x : tensor<?x4xf32>, tensor<1x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  // A float scalar never widens a tensor's float type; an integer one never turns it integer.
  // CHECK-NEXT: %half = fusion.fma %h, %s, %h : tensor<8xbf16>, f32, tensor<8xbf16> -> tensor<8xbf16>
  %half = fusion.fma %h, %s, %h : tensor<8xbf16>, f32, tensor<8xbf16> -> tensor<8xbf16>
  // CHECK-NEXT: %scalar_int = fusion.fma %n, %x, %s : i64, tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  %scalar_int = fusion.fma %n, %x, %s : i64, tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  // f16 with bf16 promotes to f32; an integer tensor with a float one to the float.
  // CHECK-NEXT: %mixed = fusion.fma %h, %f, %i : tensor<8xbf16>, tensor<8xf16>, tensor<8xi32> -> tensor<8xf32>
  %mixed = fusion.fma %h, %f, %i : tensor<8xbf16>, tensor<8xf16>, tensor<8xi32> -> tensor<8xf32>
  // CHECK-NEXT: %int_float = fusion.fma %i, %i, %f : tensor<8xi32>, tensor<8xi32>, tensor<8xf16> -> tensor<8xf16>
  %int_float = fusion.fma %i, %i, %f : tensor<8xi32>, tensor<8xi32>, tensor<8xf16> -> tensor<8xf16>
  // A float scalar makes integer tensors f32, as torch does.
  // CHECK-NEXT: %int_scalar_float = fusion.fma %i, %s, %i : tensor<8xi32>, f32, tensor<8xi32> -> tensor<8xf32>
  %int_scalar_float = fusion.fma %i, %s, %i : tensor<8xi32>, f32, tensor<8xi32> -> tensor<8xf32>
  // CHECK-NEXT: %rank0 = fusion.fma %d, %d, %d : tensor<f64>
  %rank0 = fusion.fma %d, %d, %d : tensor<f64>
  // CHECK-NEXT: func.return
  func.return
}
