// expect: ParseError|VerifyError
func.func @f(%s: f32) -> tensor<4x4xf32> {
  %y = fusion.iota [4, 4] start %s step %s : f32, f32 -> tensor<4x4xf32>
  func.return %y : tensor<4x4xf32>
}
