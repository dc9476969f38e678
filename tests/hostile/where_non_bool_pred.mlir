// expect: VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = fusion.where %x, %x, %x : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
