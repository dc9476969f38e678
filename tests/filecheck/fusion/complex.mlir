// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// Complex element types (complex<f32>, complex<f64>) through the ops that take them:
// promotion as torch's (a complex operand makes the result complex, of the wider part),
// abs/real/imag give the parts' type, sums stay complex.

// CHECK-LABEL: func.func @complex_ops
func.func @complex_ops(%z: tensor<?x4xcomplex<f32>>, %w: tensor<?x4xcomplex<f64>>, %r: tensor<?x4xf64>, %p: tensor<?x4xi1>) {
  %c = complex.constant [3.0 : f64, 0.5 : f64] : complex<f64>
  // CHECK: %mul = fusion.mul %z, %c : tensor<?x4xcomplex<f32>>, complex<f64> -> tensor<?x4xcomplex<f32>>
  %mul = fusion.mul %z, %c : tensor<?x4xcomplex<f32>>, complex<f64> -> tensor<?x4xcomplex<f32>>
  // CHECK-NEXT: %add = fusion.add %z, %r : tensor<?x4xcomplex<f32>>, tensor<?x4xf64> -> tensor<?x4xcomplex<f64>>
  %add = fusion.add %z, %r : tensor<?x4xcomplex<f32>>, tensor<?x4xf64> -> tensor<?x4xcomplex<f64>>
  // CHECK-NEXT: %sub = fusion.sub %z, %w : tensor<?x4xcomplex<f32>>, tensor<?x4xcomplex<f64>> -> tensor<?x4xcomplex<f64>>
  %sub = fusion.sub %z, %w : tensor<?x4xcomplex<f32>>, tensor<?x4xcomplex<f64>> -> tensor<?x4xcomplex<f64>>
  // CHECK-NEXT: %div = fusion.div %z, %z : tensor<?x4xcomplex<f32>>
  %div = fusion.div %z, %z : tensor<?x4xcomplex<f32>>
  // CHECK-NEXT: %exp = fusion.exp %z : tensor<?x4xcomplex<f32>>
  %exp = fusion.exp %z : tensor<?x4xcomplex<f32>>
  // CHECK-NEXT: %rsqrt = fusion.rsqrt %w : tensor<?x4xcomplex<f64>>
  %rsqrt = fusion.rsqrt %w : tensor<?x4xcomplex<f64>>
  // CHECK-NEXT: %abs = fusion.abs %z : tensor<?x4xcomplex<f32>> -> tensor<?x4xf32>
  %abs = fusion.abs %z : tensor<?x4xcomplex<f32>> -> tensor<?x4xf32>
  // CHECK-NEXT: %re = fusion.real %w : tensor<?x4xcomplex<f64>> -> tensor<?x4xf64>
  %re = fusion.real %w : tensor<?x4xcomplex<f64>> -> tensor<?x4xf64>
  // CHECK-NEXT: %im = fusion.imag %z : tensor<?x4xcomplex<f32>> -> tensor<?x4xf32>
  %im = fusion.imag %z : tensor<?x4xcomplex<f32>> -> tensor<?x4xf32>
  // CHECK-NEXT: %sel = fusion.where %p, %z, %c : tensor<?x4xi1>, tensor<?x4xcomplex<f32>>, complex<f64> -> tensor<?x4xcomplex<f32>>
  %sel = fusion.where %p, %z, %c : tensor<?x4xi1>, tensor<?x4xcomplex<f32>>, complex<f64> -> tensor<?x4xcomplex<f32>>
  // CHECK-NEXT: %cast = fusion.cast %r : tensor<?x4xf64> to tensor<?x4xcomplex<f64>>
  %cast = fusion.cast %r : tensor<?x4xf64> to tensor<?x4xcomplex<f64>>
  // CHECK-NEXT: %sum = fusion.sum %z dims [1] : tensor<?x4xcomplex<f32>> -> tensor<?xcomplex<f32>>
  %sum = fusion.sum %z dims [1] : tensor<?x4xcomplex<f32>> -> tensor<?xcomplex<f32>>
  func.return
}
