// expect: VerifyError
func.func @f(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  %y = fusion.reshape %x [4, 2] : tensor<2x3xf32> -> tensor<4x2xf32>
  func.return %y : tensor<4x2xf32>
}
