// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The math, rounding, integer and bitwise ops refuse the types torch refuses, with the
// op's location.

// CHECK: invalid_math.mlir:[[# @LINE + 3]]:3: error: fusion.bitwise_and: it takes integer or i1 operands, got the promoted type f32
// CHECK-NEXT: %a = fusion.bitwise_and %x, %i
func.func @f(%x: tensor<4xf32>, %i: tensor<4xi32>) {
  %a = fusion.bitwise_and %x, %i : tensor<4xf32>, tensor<4xi32> -> tensor<4xf32>
  func.return
}

// -----

// A float scalar promotes an integer tensor to f32: refused too.
// CHECK: error: fusion.bitwise_xor: it takes integer or i1 operands, got the promoted type f32
func.func @f(%i: tensor<4xi32>, %s: f32) {
  %a = fusion.bitwise_xor %i, %s : tensor<4xi32>, f32 -> tensor<4xi32>
  func.return
}

// -----

// CHECK: error: fusion.bitwise_not: it takes integer or i1 tensors, got bf16
func.func @f(%x: tensor<4xbf16>) {
  %a = fusion.bitwise_not %x : tensor<4xbf16>
  func.return
}

// -----

// CHECK: error: fusion.bitwise_left_shift: fusion.bitwise_left_shift of i1 (bool) operands is not defined; cast them first
func.func @f(%b: tensor<4xi1>) {
  %a = fusion.bitwise_left_shift %b, %b : tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.bitwise_right_shift: it takes integer operands, got the promoted type f64
func.func @f(%x: tensor<4xf64>) {
  %a = fusion.bitwise_right_shift %x, %x : tensor<4xf64>
  func.return
}

// -----

// CHECK: error: fusion.logical_right_shift: it takes integer operands, got the promoted type f16
func.func @f(%x: tensor<4xf16>, %i: tensor<4xi64>) {
  %a = fusion.logical_right_shift %i, %x : tensor<4xi64>, tensor<4xf16> -> tensor<4xf16>
  func.return
}

// -----

// CHECK: error: fusion.gcd: it takes integer operands, got the promoted type f32
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.gcd %x, %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.gcd: fusion.gcd of i1 (bool) operands is not defined; cast them first
func.func @f(%b: tensor<4xi1>) {
  %a = fusion.gcd %b, %b : tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.nextafter: it takes floating-point operands, got the promoted type i32
func.func @f(%i: tensor<4xi32>) {
  %a = fusion.nextafter %i, %i : tensor<4xi32>
  func.return
}

// -----

// CHECK: error: fusion.frac: it takes floating-point tensors, got i64
func.func @f(%i: tensor<4xi64>) {
  %a = fusion.frac %i : tensor<4xi64>
  func.return
}

// -----

// CHECK: error: fusion.round: fusion.round does not accept i1 (bool) tensors
func.func @f(%b: tensor<4xi1>) {
  %a = fusion.round %b : tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.fmod: fusion.fmod of i1 (bool) operands is not defined; cast them first
func.func @f(%b: tensor<4xi1>) {
  %a = fusion.fmod %b, %b : tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.floor_divide: fusion.floor_divide of i1 (bool) operands is not defined; cast them first
func.func @f(%b: tensor<4xi1>) {
  %a = fusion.floor_divide %b, %b : tensor<4xi1>
  func.return
}

// -----

// Math of integers is f32, not the integer type.
// CHECK: error: fusion.atan2: result #0 has type tensor<4xi32>, but the operands imply tensor<4xf32>
func.func @f(%i: tensor<4xi32>) {
  %a = fusion.atan2 %i, %i : tensor<4xi32>
  func.return
}

// -----

// CHECK: error: fusion.lgamma: result #0 has type tensor<4xi64>, but the operands imply tensor<4xf32>
func.func @f(%i: tensor<4xi64>) {
  %a = fusion.lgamma %i : tensor<4xi64>
  func.return
}

// -----

// CHECK: error: fusion.signbit: result #0 has type tensor<4xf32>, but the operands imply tensor<4xi1>
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.signbit %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.remainder: extents of dimension 0 do not broadcast (operand #0 (tensor<4xi32>): 4, operand #1 (tensor<5xi32>): 5); only static size-1 dimensions broadcast
func.func @f(%x: tensor<4xi32>, %y: tensor<5xi32>) {
  %a = fusion.remainder %x, %y : tensor<4xi32>, tensor<5xi32> -> tensor<4xi32>
  func.return
}

// -----

// CHECK: error: fusion.triu: it takes a tensor of rank 2 or more (matrices in its last two dimensions), got tensor<4xf32>
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.triu %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.tril: result #0 has type tensor<4x4xf32>, but the operands imply tensor<4x4xi32>
func.func @f(%x: tensor<4x4xi32>) {
  %a = fusion.tril %x : tensor<4x4xi32> -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.triu: 1.500000e+00 : f32 should be of base attribute integer
func.func @f(%x: tensor<4x4xf32>) {
  %a = fusion.triu %x {diagonal = 1.5 : f32} : tensor<4x4xf32>
  func.return
}
