// expect: ParseError|VerifyError
func.func @f(%x: tensor<2x3xf32>) -> tensor<?x?xf32> {
  %y = fusion.reshape %x [-1, -1] : tensor<2x3xf32> -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
