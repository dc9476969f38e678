// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Complex values only go through the ops that take them.

// CHECK: error: fusion.lt: fusion.lt does not take complex values (tensor<4xcomplex<f32>>)
func.func @f(%z: tensor<4xcomplex<f32>>) {
  %a = fusion.lt %z, %z : tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>> -> tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.abs: result #0 has type tensor<4xcomplex<f32>>, but the operands imply tensor<4xf32>
func.func @f(%z: tensor<4xcomplex<f32>>) {
  %a = fusion.abs %z : tensor<4xcomplex<f32>>
  func.return
}

// -----

// CHECK: error: fusion.imag: fusion.imag takes a complex tensor, got tensor<4xf32>
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.imag %x : tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.max: fusion.max does not take complex values (tensor<4xcomplex<f64>>)
func.func @f(%z: tensor<4xcomplex<f64>>) {
  %a = fusion.max %z dims [0] : tensor<4xcomplex<f64>> -> tensor<complex<f64>>
  func.return
}
