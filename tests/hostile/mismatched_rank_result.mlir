// expect: VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<4xf32> {
  %y = fusion.neg %x : tensor<?x4xf32> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
