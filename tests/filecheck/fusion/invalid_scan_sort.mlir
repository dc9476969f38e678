// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Scans.

// CHECK: error: fusion.cumsum: dim entry 2 is out of range for a tensor of rank 2
func.func @f(%x: tensor<3x5xf32>) {
  %a = fusion.cumsum %x dim 2 : tensor<3x5xf32> -> tensor<3x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.cumprod: cumprod needs a tensor of rank >= 1, got a 0-d tensor
func.func @f(%x: tensor<f32>) {
  %a = fusion.cumprod %x dim 0 : tensor<f32> -> tensor<f32>
  func.return
}

// -----

// CHECK: error: fusion.cumsum: result #0 has type tensor<3x5xi32>, but the operands imply tensor<3x5xi64>
func.func @f(%x: tensor<3x5xi32>) {
  %a = fusion.cumsum %x dim 1 : tensor<3x5xi32> -> tensor<3x5xi32>
  func.return
}

// -----

// CHECK: error: fusion.cummax: result #1 has type tensor<3x5xi32>, but the operands imply tensor<3x5xi64>
func.func @f(%x: tensor<3x5xf32>) {
  %v, %i = fusion.cummax %x dim 1 : tensor<3x5xf32> -> tensor<3x5xf32>, tensor<3x5xi32>
  func.return
}

// -----

// CHECK: error: fusion.cummin: result #0 has type tensor<3x5xf16>, but the operands imply tensor<3x5xf32>
func.func @f(%x: tensor<3x5xf32>) {
  %v, %i = fusion.cummin %x dim 0 : tensor<3x5xf32> -> tensor<3x5xf16>, tensor<3x5xi64>
  func.return
}

// -----

// Sorts.

// CHECK: error: fusion.argsort: dim entry -3 is out of range for a tensor of rank 2
func.func @f(%x: tensor<3x5xf32>) {
  %a = fusion.argsort %x dim -3 : tensor<3x5xf32> -> tensor<3x5xi64>
  func.return
}

// -----

// CHECK: error: fusion.argsort: result #0 has type tensor<3x5xf32>, but the operands imply tensor<3x5xi64>
func.func @f(%x: tensor<3x5xf32>) {
  %a = fusion.argsort %x dim 1 : tensor<3x5xf32> -> tensor<3x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.argsort: argsort sorts rows of at most 16384 f32 elements in one program; dimension 1 has 20000
func.func @f(%x: tensor<3x20000xf32>) {
  %a = fusion.argsort %x dim 1 : tensor<3x20000xf32> -> tensor<3x20000xi64>
  func.return
}

// -----

// CHECK: error: fusion.topk: topk sorts rows of at most 4096 i64 elements in one program; dimension 0 has 5000
func.func @f(%x: tensor<5000x2xi64>) {
  %v, %i = fusion.topk %x k 1 dim 0 : tensor<5000x2xi64> -> tensor<1x2xi64>, tensor<1x2xi64>
  func.return
}

// -----

// CHECK: error: fusion.topk: k = 6 is larger than dimension 1 (5)
func.func @f(%x: tensor<3x5xf32>) {
  %v, %i = fusion.topk %x k 6 dim 1 : tensor<3x5xf32> -> tensor<3x6xf32>, tensor<3x6xi64>
  func.return
}

// -----

// CHECK: error: fusion.topk: k must be non-negative, got -1
func.func @f(%x: tensor<3x5xf32>) {
  %v, %i = fusion.topk %x k -1 dim 1 : tensor<3x5xf32> -> tensor<3x1xf32>, tensor<3x1xi64>
  func.return
}

// -----

// CHECK: error: fusion.topk: result #0 has type tensor<3x5xf32>, but the operands imply tensor<3x2xf32>
func.func @f(%x: tensor<3x5xf32>) {
  %v, %i = fusion.topk %x k 2 dim 1 : tensor<3x5xf32> -> tensor<3x5xf32>, tensor<3x2xi64>
  func.return
}
