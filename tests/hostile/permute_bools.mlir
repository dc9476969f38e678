// expect: ParseError|VerifyError
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %y = fusion.permute %x [true, false] : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}
