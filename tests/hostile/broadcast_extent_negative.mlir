// expect: ParseError|VerifyError
func.func @f(%v: tensor<4xf32>) -> tensor<?x4xf32> {
  %y = fusion.broadcast_in_dim %v [-5, 4] dims [1] : tensor<4xf32> -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
