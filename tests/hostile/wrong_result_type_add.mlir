// expect: VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xi32> {
  %y = fusion.add %x, %x : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xi32>
  func.return %y : tensor<?x4xi32>
}
