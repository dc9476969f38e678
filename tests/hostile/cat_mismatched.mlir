// expect: VerifyError
func.func @f(%a: tensor<2x4xf32>, %b: tensor<3x5xf32>) -> tensor<5x4xf32> {
  %y = fusion.cat %a, %b dim 0 : tensor<2x4xf32>, tensor<3x5xf32> -> tensor<5x4xf32>
  func.return %y : tensor<5x4xf32>
}
