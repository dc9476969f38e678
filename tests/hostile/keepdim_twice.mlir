// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x1xf32> {
  %y = fusion.sum %x dims [1] keepdim keepdim : tensor<?x4xf32> -> tensor<?x1xf32>
  func.return %y : tensor<?x1xf32>
}
