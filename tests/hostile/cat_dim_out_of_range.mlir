// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %y = fusion.cat %x, %x dim 5 : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}
