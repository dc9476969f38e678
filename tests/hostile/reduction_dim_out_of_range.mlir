// expect: VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?xf32> {
  %y = fusion.sum %x dims [2] : tensor<?x4xf32> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
