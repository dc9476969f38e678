// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = fusion.neg %x : tensor<?x8xf32>
  func.return %y : tensor<?x4xf32>
}
