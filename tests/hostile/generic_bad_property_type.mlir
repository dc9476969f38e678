// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  %y = "fusion.sum"(%x) <{dims = "one"}> : (tensor<?x4xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
