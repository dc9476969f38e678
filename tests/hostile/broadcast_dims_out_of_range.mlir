// expect: VerifyError
func.func @f(%v: tensor<4xf32>) -> tensor<2x4xf32> {
  %y = fusion.broadcast_in_dim %v [2, 4] dims [2] : tensor<4xf32> -> tensor<2x4xf32>
  func.return %y : tensor<2x4xf32>
}
