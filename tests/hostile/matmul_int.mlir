// expect: VerifyError
func.func @f(%a: tensor<3x4xi32>, %b: tensor<4x6xi32>) -> tensor<3x6xi32> {
  %y = fusion.matmul %a, %b : tensor<3x4xi32>, tensor<4x6xi32> -> tensor<3x6xi32>
  func.return %y : tensor<3x6xi32>
}
