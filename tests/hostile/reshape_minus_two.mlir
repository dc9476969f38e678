// expect: ParseError|VerifyError
func.func @f(%x: tensor<2x3xf32>) -> tensor<?x3xf32> {
  %y = fusion.reshape %x [-2, 3] : tensor<2x3xf32> -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}
