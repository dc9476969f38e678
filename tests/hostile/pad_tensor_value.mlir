// expect: VerifyError
func.func @f(%x: tensor<?x4xf32>, %t: tensor<f32>) -> tensor<?x6xf32> {
  %y = fusion.pad %x low [0, 1] high [0, 1] value %t : tensor<?x4xf32>, tensor<f32> -> tensor<?x6xf32>
  func.return %y : tensor<?x6xf32>
}
