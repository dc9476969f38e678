// expect: VerifyError
func.func @f(%s: i8) -> tensor<4xi32> {
  %y = fusion.full %s [4] : i8 -> tensor<4xi32>
  func.return %y : tensor<4xi32>
}
