// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Reductions.

// CHECK: error: fusion.sum: dims entry 2 is out of range for a tensor of rank 2
func.func @f(%x: tensor<3x5xf32>) {
  %a = fusion.sum %x dims [2] : tensor<3x5xf32> -> tensor<3xf32>
  func.return
}

// -----

// CHECK: error: fusion.prod: dims entry -1 is repeated
func.func @f(%x: tensor<3x5xf32>) {
  %a = fusion.prod %x dims [1, -1] : tensor<3x5xf32> -> tensor<3xf32>
  func.return
}

// -----

// CHECK: error: fusion.sum: result #0 has type tensor<3xi32>, but the operands imply tensor<3xi64>
func.func @f(%x: tensor<3x5xi32>) {
  %a = fusion.sum %x dims [1] : tensor<3x5xi32> -> tensor<3xi32>
  func.return
}

// -----

// CHECK: error: fusion.prod: result #0 has type tensor<5xi1>, but the operands imply tensor<5xi64>
func.func @f(%x: tensor<3x5xi1>) {
  %a = fusion.prod %x dims [0] : tensor<3x5xi1> -> tensor<5xi1>
  func.return
}

// -----

// CHECK: error: fusion.sum: result #0 has type tensor<3xi64>, but the operands imply tensor<3xf32>
func.func @f(%x: tensor<3x5xf32>) {
  %a = fusion.sum %x dims [1] : tensor<3x5xf32> -> tensor<3xi64>
  func.return
}

// -----

// CHECK: error: fusion.sum: result #0 has type tensor<3x1xf32>, but the operands imply tensor<3xf32>
func.func @f(%x: tensor<3x5xf32>) {
  %a = fusion.sum %x dims [1] : tensor<3x5xf32> -> tensor<3x1xf32>
  func.return
}

// -----

// CHECK: error: fusion.max: result #0 has type tensor<3xf32>, but the operands imply tensor<3x1xf32>
func.func @f(%x: tensor<3x5xf32>) {
  %a = fusion.max %x dims [1] keepdim : tensor<3x5xf32> -> tensor<3xf32>
  func.return
}

// -----

// CHECK: error: fusion.min: result #0 has type tensor<3xi64>, but the operands imply tensor<3xi32>
func.func @f(%x: tensor<3x5xi32>) {
  %a = fusion.min %x dims [1] : tensor<3x5xi32> -> tensor<3xi64>
  func.return
}

// -----

// CHECK: error: fusion.min: dims entry -3 is out of range for a tensor of rank 2
func.func @f(%x: tensor<3x5xf32>) {
  %a = fusion.min %x dims [-3] : tensor<3x5xf32> -> tensor<3xf32>
  func.return
}

// -----

// CHECK: error: fusion.mean: mean needs a floating-point input, got i32
func.func @f(%x: tensor<3x5xi32>) {
  %a = fusion.mean %x dims [1] : tensor<3x5xi32> -> tensor<3xf32>
  func.return
}

// -----

// CHECK: error: fusion.mean: result #0 has type tensor<3xf32>, but the operands imply tensor<3xf16>
func.func @f(%x: tensor<3x5xf16>) {
  %a = fusion.mean %x dims [1] : tensor<3x5xf16> -> tensor<3xf32>
  func.return
}

// -----

// CHECK: error: fusion.var_mean: var_mean needs a floating-point input, got i64
func.func @f(%x: tensor<3x5xi64>) {
  %v, %m = fusion.var_mean %x dims [1] correction 1 : tensor<3x5xi64> -> tensor<3xi64>, tensor<3xi64>
  func.return
}

// -----

// CHECK: error: fusion.var_mean: correction -1 is negative
func.func @f(%x: tensor<3x5xf32>) {
  %v, %m = fusion.var_mean %x dims [1] correction -1 : tensor<3x5xf32> -> tensor<3xf32>, tensor<3xf32>
  func.return
}

// -----

// CHECK: error: fusion.var_mean: dims entry 0 is repeated
func.func @f(%x: tensor<3x5xf32>) {
  %v, %m = fusion.var_mean %x dims [0, 0] correction 0 : tensor<3x5xf32> -> tensor<5xf32>, tensor<5xf32>
  func.return
}

// -----

// CHECK: error: fusion.var_mean: result #1 has type tensor<3xf32>, but the operands imply tensor<3x1xf32>
func.func @f(%x: tensor<3x5xf32>) {
  %v, %m = fusion.var_mean %x dims [1] correction 1 keepdim : tensor<3x5xf32> -> tensor<3x1xf32>, tensor<3xf32>
  func.return
}

// -----

// CHECK: error: fusion.var_mean: result #0 has type tensor<3xf16>, but the operands imply tensor<3xf32>
func.func @f(%x: tensor<3x5xf32>) {
  %v, %m = fusion.var_mean %x dims [1] correction 1 : tensor<3x5xf32> -> tensor<3xf16>, tensor<3xf32>
  func.return
}

// -----

// max and min have no identity: a static empty reduced dimension is an error
// (torch raises too); a dynamic one is checked at run time (fusion-allocate's
// alloc.check, tests/filecheck/passes/fusion-allocate/checks.mlir).
// CHECK: invalid_reduction.mlir:[[# @LINE + 2]]:3: error: fusion.max: cannot reduce dimension 1 of extent 0: max has no identity (torch raises too)
func.func @f(%x: tensor<?x0xf32>) {
  %y = fusion.max %x dims [1] : tensor<?x0xf32> -> tensor<?xf32>
  func.return
}

// -----

// Even when the result is empty.
// CHECK: invalid_reduction.mlir:[[# @LINE + 2]]:3: error: fusion.min: cannot reduce dimension 0 of extent 0: min has no identity (torch raises too)
func.func @f(%x: tensor<0x0xf32>) {
  %y = fusion.min %x dims [0] keepdim : tensor<0x0xf32> -> tensor<1x0xf32>
  func.return
}
