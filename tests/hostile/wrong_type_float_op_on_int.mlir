// expect: VerifyError
func.func @f(%x: tensor<?x4xi32>) -> tensor<?x4xi32> {
  %y = fusion.exp %x : tensor<?x4xi32>
  func.return %y : tensor<?x4xi32>
}
