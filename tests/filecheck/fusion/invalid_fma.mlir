// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// fusion.fma refuses a promoted type that is not a float, operands that do not broadcast,
// a result type other than the promoted one, and a wrong operand count, with the op's
// location.

// An integer fma is exact: a fusion.mul and a fusion.add, not an fma.
// CHECK: invalid_fma.mlir:[[# @LINE + 2]]:3: error: fusion.fma: it takes floating-point operands, got the promoted type i32
func.func @f(%i: tensor<4xi32>) {
  %a = fusion.fma %i, %i, %i : tensor<4xi32>
  func.return
}

// -----

// CHECK: error: fusion.fma: it takes floating-point operands, got the promoted type i1
func.func @f(%b: tensor<4xi1>) {
  %a = fusion.fma %b, %b, %b : tensor<4xi1>
  func.return
}

// -----

// Integer tensors with an integer scalar: the promoted type is the tensors' (a float
// scalar would make it f32, as torch does).
// CHECK: error: fusion.fma: it takes floating-point operands, got the promoted type i32
func.func @f(%i: tensor<4xi32>, %n: i64) {
  %a = fusion.fma %i, %n, %i : tensor<4xi32>, i64, tensor<4xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: error: fusion.fma: fusion.fma does not take complex values (tensor<4xcomplex<f32>>)
func.func @f(%z: tensor<4xcomplex<f32>>) {
  %a = fusion.fma %z, %z, %z : tensor<4xcomplex<f32>>
  func.return
}

// -----

// CHECK: error: fusion.fma: extents of dimension 0 do not broadcast (operand #0 (tensor<4xf32>): 4, operand #1 (tensor<4xf32>): 4, operand #2 (tensor<5xf32>): 5); only static size-1 dimensions broadcast
func.func @f(%x: tensor<4xf32>, %y: tensor<5xf32>) {
  %a = fusion.fma %x, %x, %y : tensor<4xf32>, tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.fma: elementwise operands must have equal ranks (operand #0 (tensor<4xf32>) has rank 1, operand #1 (tensor<2x4xf32>) has rank 2, operand #2 (tensor<2x4xf32>) has rank 2); use fusion.broadcast_in_dim to add dimensions
func.func @f(%x: tensor<4xf32>, %y: tensor<2x4xf32>) {
  %a = fusion.fma %x, %y, %y : tensor<4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

// f32 with bf16 is f32: a bf16 result is not the promoted type.
// CHECK: error: fusion.fma: result #0 has type tensor<4xbf16>, but the operands imply tensor<4xf32>
func.func @f(%x: tensor<4xf32>, %h: tensor<4xbf16>) {
  %a = fusion.fma %x, %h, %h : tensor<4xf32>, tensor<4xbf16>, tensor<4xbf16> -> tensor<4xbf16>
  func.return
}

// -----

// CHECK: error: fusion.fma: expected at least one tensor operand
func.func @f(%s: f32, %t: f32) {
  %a = fusion.fma %s, %t, %s : f32, f32, f32 -> tensor<f32>
  func.return
}

// -----

// CHECK: error: fusion.fma: Expected 3 operands, but got 2
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.fma %x, %x : tensor<4xf32>
  func.return
}
