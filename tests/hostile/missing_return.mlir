// expect: VerifyError
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.neg %x : tensor<4xf32>
}
