// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// fusion.welford: what the verifier refuses.

// CHECK: error: fusion.welford: welford needs a floating-point input, got i32
func.func @f(%x: tensor<?x8xi32>) {
  %a, %m, %n = fusion.welford %x dims [1] : tensor<?x8xi32> -> tensor<?xi32>, tensor<?xi32>, tensor<?xi64>
  func.return
}

// -----

// CHECK: error: fusion.welford: result #0 has type tensor<?xf16>, but the operands imply tensor<?xf32>
func.func @f(%x: tensor<?x8xf16>) {
  %a, %m, %n = fusion.welford %x dims [1] : tensor<?x8xf16> -> tensor<?xf16>, tensor<?xf16>, tensor<?xi64>
  func.return
}

// -----

// CHECK: error: fusion.welford: result #2 has type tensor<?xi32>, but the operands imply tensor<?xi64>
func.func @f(%x: tensor<?x8xf32>) {
  %a, %m, %n = fusion.welford %x dims [1] : tensor<?x8xf32> -> tensor<?xf32>, tensor<?xf32>, tensor<?xi32>
  func.return
}

// -----

// CHECK: error: fusion.welford: result #0 has type tensor<8xf32>, but the operands imply tensor<?xf32>
func.func @f(%x: tensor<?x8xf32>) {
  %a, %m, %n = fusion.welford %x dims [-1] : tensor<?x8xf32> -> tensor<8xf32>, tensor<8xf32>, tensor<8xi64>
  func.return
}

// -----

// CHECK: error: fusion.welford: dims
func.func @f(%x: tensor<?x8xf32>) {
  %a, %m, %n = fusion.welford %x dims [2] : tensor<?x8xf32> -> tensor<?xf32>, tensor<?xf32>, tensor<?xi64>
  func.return
}
