// expect: ParseError|VerifyError
func.func @f(%s: f32) -> tensor<?x4xf32> {
  %y = fusion.full %s [18446744073709551616, 4] : f32 -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
