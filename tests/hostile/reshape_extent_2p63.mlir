// expect: ParseError|VerifyError
func.func @f(%x: tensor<2x3xf32>) -> tensor<9223372036854775807x6xf32> {
  %y = fusion.reshape %x [9223372036854775807, 6] : tensor<2x3xf32> -> tensor<9223372036854775807x6xf32>
  func.return %y : tensor<9223372036854775807x6xf32>
}
