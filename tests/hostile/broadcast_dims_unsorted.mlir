// expect: VerifyError
func.func @f(%v: tensor<4x1xf32>) -> tensor<3x4xf32> {
  %y = fusion.broadcast_in_dim %v [4, 3] dims [1, 0] : tensor<4x1xf32> -> tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}
