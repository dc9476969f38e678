// expect: ParseError|VerifyError
func.func @f(%s: f32) -> tensor<?x4xf32> {
  %y = fusion.full %s [-3, 4] : f32 -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
