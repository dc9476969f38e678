// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// The math, rounding, integer and bitwise ops (tests/test_math_ops.py runs them).

// Math functions keep a float type; integer and bool inputs give f32, as torch does.
// CHECK-LABEL: func.func @float_math
func.func @float_math(%x: tensor<?x4xf32>, %h: tensor<8xbf16>, %d: tensor<f64>, %i: tensor<3xi32>, %b: tensor<3xi1>) {
  // CHECK-NEXT: %acos = fusion.acos %x : tensor<?x4xf32>
  %acos = fusion.acos %x : tensor<?x4xf32>
  // CHECK-NEXT: %acosh = fusion.acosh %h : tensor<8xbf16>
  %acosh = fusion.acosh %h : tensor<8xbf16>
  // CHECK-NEXT: %asin = fusion.asin %d : tensor<f64>
  %asin = fusion.asin %d : tensor<f64>
  // CHECK-NEXT: %asinh = fusion.asinh %x : tensor<?x4xf32>
  %asinh = fusion.asinh %x : tensor<?x4xf32>
  // CHECK-NEXT: %atan = fusion.atan %h : tensor<8xbf16>
  %atan = fusion.atan %h : tensor<8xbf16>
  // CHECK-NEXT: %atanh = fusion.atanh %d : tensor<f64>
  %atanh = fusion.atanh %d : tensor<f64>
  // CHECK-NEXT: %cosh = fusion.cosh %x : tensor<?x4xf32>
  %cosh = fusion.cosh %x : tensor<?x4xf32>
  // CHECK-NEXT: %sinh = fusion.sinh %h : tensor<8xbf16>
  %sinh = fusion.sinh %h : tensor<8xbf16>
  // CHECK-NEXT: %tan = fusion.tan %d : tensor<f64>
  %tan = fusion.tan %d : tensor<f64>
  // CHECK-NEXT: %exp2 = fusion.exp2 %x : tensor<?x4xf32>
  %exp2 = fusion.exp2 %x : tensor<?x4xf32>
  // CHECK-NEXT: %expm1 = fusion.expm1 %h : tensor<8xbf16>
  %expm1 = fusion.expm1 %h : tensor<8xbf16>
  // CHECK-NEXT: %log2 = fusion.log2 %d : tensor<f64>
  %log2 = fusion.log2 %d : tensor<f64>
  // CHECK-NEXT: %log10 = fusion.log10 %x : tensor<?x4xf32>
  %log10 = fusion.log10 %x : tensor<?x4xf32>
  // CHECK-NEXT: %log1p = fusion.log1p %h : tensor<8xbf16>
  %log1p = fusion.log1p %h : tensor<8xbf16>
  // CHECK-NEXT: %erfc = fusion.erfc %d : tensor<f64>
  %erfc = fusion.erfc %d : tensor<f64>
  // CHECK-NEXT: %erfinv = fusion.erfinv %x : tensor<?x4xf32>
  %erfinv = fusion.erfinv %x : tensor<?x4xf32>
  // CHECK-NEXT: %erfcinv = fusion.erfcinv %h : tensor<8xbf16>
  %erfcinv = fusion.erfcinv %h : tensor<8xbf16>
  // CHECK-NEXT: %lgamma = fusion.lgamma %d : tensor<f64>
  %lgamma = fusion.lgamma %d : tensor<f64>
  // CHECK-NEXT: %acos_i = fusion.acos %i : tensor<3xi32> -> tensor<3xf32>
  %acos_i = fusion.acos %i : tensor<3xi32> -> tensor<3xf32>
  // CHECK-NEXT: %lgamma_b = fusion.lgamma %b : tensor<3xi1> -> tensor<3xf32>
  %lgamma_b = fusion.lgamma %b : tensor<3xi1> -> tensor<3xf32>
  // CHECK-NEXT: %erfcinv_i = fusion.erfcinv %i : tensor<3xi32> -> tensor<3xf32>
  %erfcinv_i = fusion.erfcinv %i : tensor<3xi32> -> tensor<3xf32>
  // CHECK-NEXT: func.return
  func.return
}

// Rounding and sign keep the type (integers included); signbit gives i1; bitwise_not
// takes integers and i1.
// CHECK-LABEL: func.func @rounding_and_sign
func.func @rounding_and_sign(%x: tensor<?x4xf32>, %h: tensor<8xf16>, %i: tensor<3xi64>, %b: tensor<3xi1>) {
  // CHECK-NEXT: %ceil_x = fusion.ceil %x : tensor<?x4xf32>
  %ceil_x = fusion.ceil %x : tensor<?x4xf32>
  // CHECK-NEXT: %floor_h = fusion.floor %h : tensor<8xf16>
  %floor_h = fusion.floor %h : tensor<8xf16>
  // CHECK-NEXT: %round_x = fusion.round %x : tensor<?x4xf32>
  %round_x = fusion.round %x : tensor<?x4xf32>
  // CHECK-NEXT: %trunc_i = fusion.trunc %i : tensor<3xi64>
  %trunc_i = fusion.trunc %i : tensor<3xi64>
  // CHECK-NEXT: %frac_h = fusion.frac %h : tensor<8xf16>
  %frac_h = fusion.frac %h : tensor<8xf16>
  // CHECK-NEXT: %sign_b = fusion.sign %b : tensor<3xi1>
  %sign_b = fusion.sign %b : tensor<3xi1>
  // CHECK-NEXT: %bitwise_not_i = fusion.bitwise_not %i : tensor<3xi64>
  %bitwise_not_i = fusion.bitwise_not %i : tensor<3xi64>
  // CHECK-NEXT: %bitwise_not_b = fusion.bitwise_not %b : tensor<3xi1>
  %bitwise_not_b = fusion.bitwise_not %b : tensor<3xi1>
  // CHECK-NEXT: %signbit_x = fusion.signbit %x : tensor<?x4xf32> -> tensor<?x4xi1>
  %signbit_x = fusion.signbit %x : tensor<?x4xf32> -> tensor<?x4xi1>
  // CHECK-NEXT: %signbit_i = fusion.signbit %i : tensor<3xi64> -> tensor<3xi1>
  %signbit_i = fusion.signbit %i : tensor<3xi64> -> tensor<3xi1>
  // CHECK-NEXT: %signbit_b = fusion.signbit %b : tensor<3xi1>
  %signbit_b = fusion.signbit %b : tensor<3xi1> -> tensor<3xi1>
  // CHECK-NEXT: func.return
  func.return
}

// Binary math in the promoted type; atan2 of integers gives f32.
// CHECK-LABEL: func.func @binary_math
func.func @binary_math(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>, %h: tensor<1x4xbf16>, %i: tensor<?x4xi32>, %s: f64) {
  // CHECK-NEXT: %atan2 = fusion.atan2 %x, %y : tensor<?x4xf32>
  %atan2 = fusion.atan2 %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %nextafter = fusion.nextafter %x, %y : tensor<?x4xf32>
  %nextafter = fusion.nextafter %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %fmod = fusion.fmod %x, %y : tensor<?x4xf32>
  %fmod = fusion.fmod %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %remainder = fusion.remainder %x, %y : tensor<?x4xf32>
  %remainder = fusion.remainder %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %floor_divide = fusion.floor_divide %x, %y : tensor<?x4xf32>
  %floor_divide = fusion.floor_divide %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %atan2_int = fusion.atan2 %i, %i : tensor<?x4xi32>, tensor<?x4xi32> -> tensor<?x4xf32>
  %atan2_int = fusion.atan2 %i, %i : tensor<?x4xi32>, tensor<?x4xi32> -> tensor<?x4xf32>
  // CHECK-NEXT: %nextafter_bf16 = fusion.nextafter %h, %s : tensor<1x4xbf16>, f64 -> tensor<1x4xbf16>
  %nextafter_bf16 = fusion.nextafter %h, %s : tensor<1x4xbf16>, f64 -> tensor<1x4xbf16>
  // CHECK-NEXT: %fmod_mixed = fusion.fmod %h, %x : tensor<1x4xbf16>, tensor<?x4xf32> -> tensor<?x4xf32>
  %fmod_mixed = fusion.fmod %h, %x : tensor<1x4xbf16>, tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK-NEXT: %remainder_int = fusion.remainder %i, %i : tensor<?x4xi32>
  %remainder_int = fusion.remainder %i, %i : tensor<?x4xi32>
  // CHECK-NEXT: %floor_divide_int = fusion.floor_divide %s, %i : f64, tensor<?x4xi32> -> tensor<?x4xf32>
  %floor_divide_int = fusion.floor_divide %s, %i : f64, tensor<?x4xi32> -> tensor<?x4xf32>
  // CHECK-NEXT: func.return
  func.return
}

// Bitwise ops take integers and i1 (promoted as torch promotes); shifts and gcd integers.
// CHECK-LABEL: func.func @integer_ops
func.func @integer_ops(%i: tensor<?xi32>, %l: tensor<?xi64>, %b: tensor<?xi1>, %c: i64) {
  // CHECK-NEXT: %and = fusion.bitwise_and %i, %i : tensor<?xi32>
  %and = fusion.bitwise_and %i, %i : tensor<?xi32>
  // CHECK-NEXT: %or = fusion.bitwise_or %b, %b : tensor<?xi1>
  %or = fusion.bitwise_or %b, %b : tensor<?xi1>
  // CHECK-NEXT: %xor = fusion.bitwise_xor %i, %l : tensor<?xi32>, tensor<?xi64> -> tensor<?xi64>
  %xor = fusion.bitwise_xor %i, %l : tensor<?xi32>, tensor<?xi64> -> tensor<?xi64>
  // CHECK-NEXT: %or_bool_int = fusion.bitwise_or %b, %i : tensor<?xi1>, tensor<?xi32> -> tensor<?xi32>
  %or_bool_int = fusion.bitwise_or %b, %i : tensor<?xi1>, tensor<?xi32> -> tensor<?xi32>
  // CHECK-NEXT: %shl = fusion.bitwise_left_shift %i, %c : tensor<?xi32>, i64 -> tensor<?xi32>
  %shl = fusion.bitwise_left_shift %i, %c : tensor<?xi32>, i64 -> tensor<?xi32>
  // CHECK-NEXT: %shr = fusion.bitwise_right_shift %l, %l : tensor<?xi64>
  %shr = fusion.bitwise_right_shift %l, %l : tensor<?xi64>
  // CHECK-NEXT: %lshr = fusion.logical_right_shift %i, %i : tensor<?xi32>
  %lshr = fusion.logical_right_shift %i, %i : tensor<?xi32>
  // CHECK-NEXT: %gcd = fusion.gcd %c, %l : i64, tensor<?xi64> -> tensor<?xi64>
  %gcd = fusion.gcd %c, %l : i64, tensor<?xi64> -> tensor<?xi64>
  // CHECK-NEXT: func.return
  func.return
}

// triu and tril keep the type; the diagonal offset is an optional attribute (0 when absent).
// CHECK-LABEL: func.func @triangular
func.func @triangular(%x: tensor<?x4x5xf32>, %b: tensor<3x3xi1>) {
  // CHECK-NEXT: %u = fusion.triu %x {diagonal = 1 : i64} : tensor<?x4x5xf32>
  %u = fusion.triu %x {diagonal = 1 : i64} : tensor<?x4x5xf32>
  // CHECK-NEXT: %l = fusion.tril %u : tensor<?x4x5xf32>
  %l = fusion.tril %u : tensor<?x4x5xf32>
  // CHECK-NEXT: %lb = fusion.tril %b {diagonal = -2 : i64} : tensor<3x3xi1>
  %lb = fusion.tril %b {diagonal = -2 : i64} : tensor<3x3xi1>
  // CHECK-NEXT: func.return
  func.return
}
