// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  %y = fusion.squeeze %x dims [1] : tensor<?x4xf32> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
