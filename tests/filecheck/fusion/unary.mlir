// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// Every unary elementwise op, in the short form (one type) and the long form.

// CHECK-LABEL: func.func @unary_same_type
func.func @unary_same_type(%x: tensor<?x4xf32>, %h: tensor<8xbf16>, %d: tensor<f64>) {
  // CHECK-NEXT: %neg = fusion.neg %x : tensor<?x4xf32>
  %neg = fusion.neg %x : tensor<?x4xf32>
  // CHECK-NEXT: %abs = fusion.abs %x : tensor<?x4xf32>
  %abs = fusion.abs %x : tensor<?x4xf32>
  // CHECK-NEXT: %exp = fusion.exp %x : tensor<?x4xf32>
  %exp = fusion.exp %x : tensor<?x4xf32>
  // CHECK-NEXT: %log = fusion.log %x : tensor<?x4xf32>
  %log = fusion.log %x : tensor<?x4xf32>
  // CHECK-NEXT: %sqrt = fusion.sqrt %x : tensor<?x4xf32>
  %sqrt = fusion.sqrt %x : tensor<?x4xf32>
  // CHECK-NEXT: %rsqrt = fusion.rsqrt %h : tensor<8xbf16>
  %rsqrt = fusion.rsqrt %h : tensor<8xbf16>
  // CHECK-NEXT: %reciprocal = fusion.reciprocal %h : tensor<8xbf16>
  %reciprocal = fusion.reciprocal %h : tensor<8xbf16>
  // CHECK-NEXT: %tanh = fusion.tanh %h : tensor<8xbf16>
  %tanh = fusion.tanh %h : tensor<8xbf16>
  // CHECK-NEXT: %sigmoid = fusion.sigmoid %h : tensor<8xbf16>
  %sigmoid = fusion.sigmoid %h : tensor<8xbf16>
  // CHECK-NEXT: %sin = fusion.sin %d : tensor<f64>
  %sin = fusion.sin %d : tensor<f64>
  // CHECK-NEXT: %cos = fusion.cos %d : tensor<f64>
  %cos = fusion.cos %d : tensor<f64>
  // CHECK-NEXT: %erf = fusion.erf %d : tensor<f64>
  %erf = fusion.erf %d : tensor<f64>
  // CHECK-NEXT: %relu = fusion.relu %d : tensor<f64>
  %relu = fusion.relu %d : tensor<f64>
  // CHECK-NEXT: %logical_not = fusion.logical_not %x : tensor<?x4xf32> -> tensor<?x4xi1>
  %logical_not = fusion.logical_not %x : tensor<?x4xf32> -> tensor<?x4xi1>
  // CHECK-NEXT: func.return
  func.return
}

// The long form with equal types prints in the short form.
// CHECK-LABEL: func.func @long_form_equal_types
func.func @long_form_equal_types(%x: tensor<2x3xf16>) {
  // CHECK-NEXT: %a = fusion.neg %x : tensor<2x3xf16>
  %a = fusion.neg %x : tensor<2x3xf16> -> tensor<2x3xf16>
  // CHECK-NEXT: %b = fusion.exp %a {tag = "kept"} : tensor<2x3xf16>
  %b = fusion.exp %a {tag = "kept"} : tensor<2x3xf16>
  func.return
}

// Integer and bool ops on integer tensors keep the type; math functions of
// integer and bool tensors give f32 (torch's rule).
// CHECK-LABEL: func.func @integer_inputs
func.func @integer_inputs(%i: tensor<4xi32>, %l: tensor<?xi64>, %b: tensor<4xi1>) {
  // CHECK-NEXT: %neg = fusion.neg %i : tensor<4xi32>
  %neg = fusion.neg %i : tensor<4xi32>
  // CHECK-NEXT: %abs = fusion.abs %l : tensor<?xi64>
  %abs = fusion.abs %l : tensor<?xi64>
  // CHECK-NEXT: %relu = fusion.relu %i : tensor<4xi32>
  %relu = fusion.relu %i : tensor<4xi32>
  // CHECK-NEXT: %exp = fusion.exp %i : tensor<4xi32> -> tensor<4xf32>
  %exp = fusion.exp %i : tensor<4xi32> -> tensor<4xf32>
  // CHECK-NEXT: %log = fusion.log %l : tensor<?xi64> -> tensor<?xf32>
  %log = fusion.log %l : tensor<?xi64> -> tensor<?xf32>
  // CHECK-NEXT: %sqrt = fusion.sqrt %b : tensor<4xi1> -> tensor<4xf32>
  %sqrt = fusion.sqrt %b : tensor<4xi1> -> tensor<4xf32>
  // CHECK-NEXT: %rsqrt = fusion.rsqrt %i : tensor<4xi32> -> tensor<4xf32>
  %rsqrt = fusion.rsqrt %i : tensor<4xi32> -> tensor<4xf32>
  // CHECK-NEXT: %reciprocal = fusion.reciprocal %i : tensor<4xi32> -> tensor<4xf32>
  %reciprocal = fusion.reciprocal %i : tensor<4xi32> -> tensor<4xf32>
  // CHECK-NEXT: %tanh = fusion.tanh %l : tensor<?xi64> -> tensor<?xf32>
  %tanh = fusion.tanh %l : tensor<?xi64> -> tensor<?xf32>
  // CHECK-NEXT: %sigmoid = fusion.sigmoid %b : tensor<4xi1> -> tensor<4xf32>
  %sigmoid = fusion.sigmoid %b : tensor<4xi1> -> tensor<4xf32>
  // CHECK-NEXT: %sin = fusion.sin %i : tensor<4xi32> -> tensor<4xf32>
  %sin = fusion.sin %i : tensor<4xi32> -> tensor<4xf32>
  // CHECK-NEXT: %cos = fusion.cos %i : tensor<4xi32> -> tensor<4xf32>
  %cos = fusion.cos %i : tensor<4xi32> -> tensor<4xf32>
  // CHECK-NEXT: %erf = fusion.erf %l : tensor<?xi64> -> tensor<?xf32>
  %erf = fusion.erf %l : tensor<?xi64> -> tensor<?xf32>
  // CHECK-NEXT: %not_i = fusion.logical_not %i : tensor<4xi32> -> tensor<4xi1>
  %not_i = fusion.logical_not %i : tensor<4xi32> -> tensor<4xi1>
  // CHECK-NEXT: %not_b = fusion.logical_not %b : tensor<4xi1>
  %not_b = fusion.logical_not %b : tensor<4xi1>
  func.return
}
