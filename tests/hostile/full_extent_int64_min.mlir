// expect: ParseError|VerifyError
func.func @f(%s: f32) -> tensor<?x4xf32> {
  %y = "fusion.full"(%s) <{static_sizes = array<i64: -9223372036854775808, 4>}> : (f32) -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
