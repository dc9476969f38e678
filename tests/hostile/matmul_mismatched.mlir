// expect: VerifyError
func.func @f(%a: tensor<3x4xf32>, %b: tensor<5x6xf32>) -> tensor<3x6xf32> {
  %y = fusion.matmul %a, %b : tensor<3x4xf32>, tensor<5x6xf32> -> tensor<3x6xf32>
  func.return %y : tensor<3x6xf32>
}
