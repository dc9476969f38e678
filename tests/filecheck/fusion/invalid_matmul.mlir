// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Matrix products: matmul and linear.

// CHECK: error: fusion.matmul: matmul operands must have rank >= 1
func.func @f(%x: tensor<f32>, %y: tensor<4xf32>) {
  %a = fusion.matmul %x, %y : tensor<f32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.matmul: matmul: contracted extents 4 and 5 differ
func.func @f(%x: tensor<3x4xf32>, %y: tensor<5x6xf32>) {
  %a = fusion.matmul %x, %y : tensor<3x4xf32>, tensor<5x6xf32> -> tensor<3x6xf32>
  func.return
}

// -----

// CHECK: error: fusion.matmul: matmul: contracted extents 4 and 5 differ
func.func @f(%x: tensor<4xf32>, %y: tensor<5xf32>) {
  %a = fusion.matmul %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<f32>
  func.return
}

// -----

// CHECK: error: fusion.matmul: matmul: contracted extents 4 and 5 differ
func.func @f(%x: tensor<?x4xf32>, %y: tensor<5xf32>) {
  %a = fusion.matmul %x, %y : tensor<?x4xf32>, tensor<5xf32> -> tensor<?xf32>
  func.return
}

// -----

// CHECK: error: fusion.matmul: matmul: contracted extents 3 and 4 differ
func.func @f(%x: tensor<3xf32>, %y: tensor<2x4x6xf32>) {
  %a = fusion.matmul %x, %y : tensor<3xf32>, tensor<2x4x6xf32> -> tensor<2x6xf32>
  func.return
}

// -----

// CHECK: error: fusion.matmul: extents of dimension 0 do not broadcast (lhs batch: 2, rhs batch: 3); only static size-1 dimensions broadcast
func.func @f(%x: tensor<2x3x4xf32>, %y: tensor<3x4x6xf32>) {
  %a = fusion.matmul %x, %y : tensor<2x3x4xf32>, tensor<3x4x6xf32> -> tensor<2x3x6xf32>
  func.return
}

// -----

// CHECK: error: fusion.matmul: matmul operands must share one element type: operand #0 is f32, operand #1 is bf16
func.func @f(%x: tensor<3x4xf32>, %y: tensor<4x6xbf16>) {
  %a = fusion.matmul %x, %y : tensor<3x4xf32>, tensor<4x6xbf16> -> tensor<3x6xf32>
  func.return
}

// -----

// CHECK: error: fusion.matmul: matmul needs a floating-point input, got i32
func.func @f(%x: tensor<3x4xi32>, %y: tensor<4x6xi32>) {
  %a = fusion.matmul %x, %y : tensor<3x4xi32>, tensor<4x6xi32> -> tensor<3x6xi32>
  func.return
}

// -----

// CHECK: error: fusion.matmul: result #0 has type tensor<?x4xf32>, but the operands imply tensor<?x6xf32>
func.func @f(%x: tensor<?x4xf32>, %y: tensor<4x6xf32>) {
  %a = fusion.matmul %x, %y : tensor<?x4xf32>, tensor<4x6xf32> -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.linear: linear input must have rank >= 1
func.func @f(%x: tensor<f32>, %w: tensor<4x1xf32>) {
  %a = fusion.linear %x, %w : tensor<f32>, tensor<4x1xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.linear: linear weight must have rank 1 or 2, got 3
func.func @f(%x: tensor<?x32xf32>, %w: tensor<2x64x32xf32>) {
  %a = fusion.linear %x, %w : tensor<?x32xf32>, tensor<2x64x32xf32> -> tensor<?x64xf32>
  func.return
}

// -----

// CHECK: error: fusion.linear: linear weight must have rank 1 or 2, got 0
func.func @f(%x: tensor<?x32xf32>, %w: tensor<f32>) {
  %a = fusion.linear %x, %w : tensor<?x32xf32>, tensor<f32> -> tensor<?xf32>
  func.return
}

// -----

// CHECK: error: fusion.linear: linear: contracted extents 16 and 32 differ
func.func @f(%x: tensor<?x16xf32>, %w: tensor<64x32xf32>) {
  %a = fusion.linear %x, %w : tensor<?x16xf32>, tensor<64x32xf32> -> tensor<?x64xf32>
  func.return
}

// -----

// CHECK: error: fusion.linear: bias shape 32 does not match the weight's out features 64
func.func @f(%x: tensor<?x32xf32>, %w: tensor<64x32xf32>, %b: tensor<32xf32>) {
  %a = fusion.linear %x, %w, %b : tensor<?x32xf32>, tensor<64x32xf32>, tensor<32xf32> -> tensor<?x64xf32>
  func.return
}

// -----

// CHECK: error: fusion.linear: bias shape 1 does not match the weight's out features scalar
func.func @f(%x: tensor<?x32xf32>, %w: tensor<32xf32>, %b: tensor<1xf32>) {
  %a = fusion.linear %x, %w, %b : tensor<?x32xf32>, tensor<32xf32>, tensor<1xf32> -> tensor<?xf32>
  func.return
}

// -----

// CHECK: error: fusion.linear: linear operands must share one element type: operand #0 is f32, operand #2 is f16
func.func @f(%x: tensor<?x32xf32>, %w: tensor<64x32xf32>, %b: tensor<64xf16>) {
  %a = fusion.linear %x, %w, %b : tensor<?x32xf32>, tensor<64x32xf32>, tensor<64xf16> -> tensor<?x64xf32>
  func.return
}

// -----

// CHECK: error: fusion.linear: linear needs a floating-point input, got i64
func.func @f(%x: tensor<?x32xi64>, %w: tensor<64x32xi64>) {
  %a = fusion.linear %x, %w : tensor<?x32xi64>, tensor<64x32xi64> -> tensor<?x64xi64>
  func.return
}

// -----

// CHECK: error: fusion.linear: result #0 has type tensor<?x32xf32>, but the operands imply tensor<?x64xf32>
func.func @f(%x: tensor<?x32xf32>, %w: tensor<64x32xf32>) {
  %a = fusion.linear %x, %w : tensor<?x32xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  func.return
}
