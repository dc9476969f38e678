// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x?xf32> {
  %y = fusion.permute %x [0, 0] : tensor<?x4xf32> -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
