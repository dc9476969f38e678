// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Elementwise ops (unary, binary, predicates, where), cast and set.

// CHECK: error: fusion.add: extents of dimension 0 do not broadcast (operand #0 (tensor<4xf32>): 4, operand #1 (tensor<5xf32>): 5); only static size-1 dimensions broadcast
func.func @f(%x: tensor<4xf32>, %y: tensor<5xf32>) {
  %a = fusion.add %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.mul: extents of dimension 1 do not broadcast (operand #0 (tensor<?x4xf32>): 4, operand #1 (tensor<2x3xf32>): 3); only static size-1 dimensions broadcast
func.func @f(%x: tensor<?x4xf32>, %y: tensor<2x3xf32>) {
  %a = fusion.mul %x, %y : tensor<?x4xf32>, tensor<2x3xf32> -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.add: elementwise operands must have equal ranks (operand #0 (tensor<4xf32>) has rank 1, operand #1 (tensor<2x4xf32>) has rank 2); use fusion.broadcast_in_dim to add dimensions
func.func @f(%x: tensor<4xf32>, %y: tensor<2x4xf32>) {
  %a = fusion.add %x, %y : tensor<4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.sub: elementwise operands must have equal ranks (operand #0 (tensor<f32>) has rank 0, operand #1 (tensor<1xf32>) has rank 1); use fusion.broadcast_in_dim to add dimensions
func.func @f(%x: tensor<f32>, %y: tensor<1xf32>) {
  %a = fusion.sub %x, %y : tensor<f32>, tensor<1xf32> -> tensor<1xf32>
  func.return
}

// -----

// CHECK: error: fusion.add: expected at least one tensor operand
func.func @f(%s: f32) {
  %a = fusion.add %s, %s : f32, f32 -> tensor<f32>
  func.return
}

// -----

// CHECK: error: fusion.add: result #0 has type tensor<4xbf16>, but the operands imply tensor<4xf32>
func.func @f(%x: tensor<4xbf16>, %y: tensor<4xf16>) {
  %a = fusion.add %x, %y : tensor<4xbf16>, tensor<4xf16> -> tensor<4xbf16>
  func.return
}

// -----

// CHECK: error: fusion.mul: result #0 has type tensor<4xi32>, but the operands imply tensor<4xf32>
func.func @f(%x: tensor<4xi32>, %s: f32) {
  %a = fusion.mul %x, %s : tensor<4xi32>, f32 -> tensor<4xi32>
  func.return
}

// -----

// CHECK: error: fusion.mul: result #0 has type tensor<4xf64>, but the operands imply tensor<4xf16>
func.func @f(%x: tensor<4xf16>, %s: f64) {
  %a = fusion.mul %x, %s : tensor<4xf16>, f64 -> tensor<4xf64>
  func.return
}

// -----

// CHECK: error: fusion.add: result #0 has type tensor<1x4xf32>, but the operands imply tensor<?x4xf32>
func.func @f(%x: tensor<?x4xf32>, %r: tensor<1x4xf32>) {
  %a = fusion.add %x, %r : tensor<?x4xf32>, tensor<1x4xf32> -> tensor<1x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.add: result #0 has type tensor<?x4xf32>, but the operands imply tensor<8x4xf32>
func.func @f(%x: tensor<?x4xf32>, %y: tensor<8x4xf32>) {
  %a = fusion.add %x, %y : tensor<?x4xf32>, tensor<8x4xf32> -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.neg: fusion.neg does not accept i1 (bool) tensors
func.func @f(%x: tensor<4xi1>) {
  %a = fusion.neg %x : tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.abs: fusion.abs does not accept i1 (bool) tensors
func.func @f(%x: tensor<4xi1>) {
  %a = fusion.abs %x : tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.relu: fusion.relu does not accept i1 (bool) tensors
func.func @f(%x: tensor<4xi1>) {
  %a = fusion.relu %x : tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.sub: fusion.sub of i1 (bool) operands is not defined; cast them first
func.func @f(%x: tensor<4xi1>) {
  %a = fusion.sub %x, %x : tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.div: fusion.div of i1 (bool) operands is not defined; cast them first
func.func @f(%x: tensor<4xi1>, %s: i1) {
  %a = fusion.div %x, %s : tensor<4xi1>, i1 -> tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.pow: fusion.pow of i1 (bool) operands is not defined; cast them first
func.func @f(%x: tensor<4xi1>) {
  %a = fusion.pow %x, %x : tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.exp: result #0 has type tensor<4xi32>, but the operands imply tensor<4xf32>
func.func @f(%x: tensor<4xi32>) {
  %a = fusion.exp %x : tensor<4xi32>
  func.return
}

// -----

// CHECK: error: fusion.sqrt: result #0 has type tensor<4xf32>, but the operands imply tensor<4xf16>
func.func @f(%x: tensor<4xf16>) {
  %a = fusion.sqrt %x : tensor<4xf16> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.logical_not: result #0 has type tensor<4xf32>, but the operands imply tensor<4xi1>
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.logical_not %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.lt: result #0 has type tensor<4xf32>, but the operands imply tensor<4xi1>
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %a = fusion.lt %x, %y : tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.logical_and: result #0 has type tensor<4xf32>, but the operands imply tensor<4xi1>
func.func @f(%x: tensor<4xf32>, %y: tensor<4xi1>) {
  %a = fusion.logical_and %x, %y : tensor<4xf32>, tensor<4xi1> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.where: the predicate must be i1, got tensor<4xf32>
func.func @f(%p: tensor<4xf32>, %x: tensor<4xf32>) {
  %a = fusion.where %p, %x, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.where: the predicate must be i1, got i32
func.func @f(%p: i32, %x: tensor<4xf32>) {
  %a = fusion.where %p, %x, %x : i32, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.where: expected at least one tensor operand
func.func @f(%p: i1, %s: f32) {
  %a = fusion.where %p, %s, %s : i1, f32, f32 -> tensor<f32>
  func.return
}

// -----

// CHECK: error: fusion.where: extents of dimension 0 do not broadcast (operand #0 (tensor<3xi1>): 3, operand #1 (tensor<4xf32>): 4, operand #2 (tensor<4xf32>): 4); only static size-1 dimensions broadcast
func.func @f(%p: tensor<3xi1>, %x: tensor<4xf32>) {
  %a = fusion.where %p, %x, %x : tensor<3xi1>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// Two scalars give their promoted type (nvFuser's where of scalars): i32 here, not i64.
// CHECK: error: fusion.where: result #0 has type tensor<4xi64>, but the operands imply tensor<4xi32>
func.func @f(%p: tensor<4xi1>, %si: i32) {
  %a = fusion.where %p, %si, %si : tensor<4xi1>, i32, i32 -> tensor<4xi64>
  func.return
}

// -----

// CHECK: error: fusion.neg: operand #0 (tensor<4xi8>) has element type i8; expected one of complex<f64>, complex<f32>, f64, f32, f16, bf16, i64, i32, i1
func.func @f(%x: tensor<4xi8>) {
  %a = fusion.neg %x : tensor<4xi8>
  func.return
}

// -----

// CHECK: error: fusion.add: result #0 has element type i16; expected one of complex<f64>, complex<f32>, f64, f32, f16, bf16, i64, i32, i1
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %a = fusion.add %x, %y : tensor<4xf32>, tensor<4xf32> -> tensor<4xi16>
  func.return
}

// -----

// CHECK: error: fusion.add: operand #1 has type i8; a scalar must be one of complex<f64>, complex<f32>, f64, f32, f16, bf16, i64, i32, i1, index
func.func @f(%x: tensor<4xf32>, %s: i8) {
  %a = fusion.add %x, %s : tensor<4xf32>, i8 -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.mul: operand #0 has type vector<4xf32>; a scalar must be one of complex<f64>, complex<f32>, f64, f32, f16, bf16, i64, i32, i1, index
func.func @f(%x: tensor<4xf32>, %v: vector<4xf32>) {
  %a = fusion.mul %v, %x : vector<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.exp: operand 'input' at position 0 does not verify:
// CHECK-NEXT: f32 should be of base attribute tensor
func.func @f(%s: f32) {
  %a = fusion.exp %s : f32
  func.return
}

// -----

// CHECK: error: fusion.add: result 'result' at position 0 does not verify:
// CHECK-NEXT: f32 should be of base attribute tensor
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.add %x, %x : tensor<4xf32>, tensor<4xf32> -> f32
  func.return
}

// -----

// CHECK: error: fusion.cast: result #0 has type tensor<5xf16>, but the operands imply tensor<4xf16>
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.cast %x : tensor<4xf32> to tensor<5xf16>
  func.return
}

// -----

// CHECK: error: fusion.cast: result #0 has element type ui8; expected one of complex<f64>, complex<f32>, f64, f32, f16, bf16, i64, i32, i1
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.cast %x : tensor<4xf32> to tensor<4xui8>
  func.return
}

// -----

// CHECK: error: fusion.set: result #0 has type tensor<?xf32>, but the operands imply tensor<4xf32>
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.set %x : tensor<4xf32> -> tensor<?xf32>
  func.return
}

// -----

// CHECK: error: fusion.set: result #0 has type tensor<4xbf16>, but the operands imply tensor<4xf32>
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.set %x : tensor<4xf32> -> tensor<4xbf16>
  func.return
}
