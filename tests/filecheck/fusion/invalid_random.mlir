// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// fusion.rand and fusion.randn: what the verifier refuses.

// CHECK: error: fusion.rand: rand produces floating-point elements (f16, bf16, f32, f64), got i32
func.func @f(%s: i64) {
  %a = fusion.rand %s, %s [4] : tensor<4xi32>
  func.return
}

// -----

// CHECK: error: fusion.randn: randn produces floating-point elements (f16, bf16, f32, f64), got i1
func.func @f(%s: i64) {
  %a = fusion.randn %s, %s [4] : tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.rand: result #0 has type tensor<4x5xf32>, but the operands imply tensor<4x4xf32>
func.func @f(%s: i64) {
  %a = fusion.rand %s, %s [4, 4] : tensor<4x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.rand: sizes: extent -3 is negative
func.func @f(%s: i64) {
  %a = fusion.rand %s, %s [-3, 4] : tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.randn: sizes: 1 dynamic entries but 0 values
func.func @f(%s: i64) {
  %a = "fusion.randn"(%s, %s) <{static_sizes = array<i64: -9223372036854775808, 4>}> : (i64, i64) -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.rand: sizes: extent -2 (a constant) is negative
func.func @f(%s: i64) {
  %m = arith.constant -2 : index
  %a = fusion.rand %s, %s [%m, 4] : tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.rand: operand 'seed' at position 0 does not verify
func.func @f(%s: i32) {
  %a = "fusion.rand"(%s, %s) <{static_sizes = array<i64: 4>}> : (i32, i32) -> tensor<4xf32>
  func.return
}
