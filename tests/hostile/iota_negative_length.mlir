// expect: ParseError|VerifyError
func.func @f(%s: i64) -> tensor<?xi64> {
  %y = fusion.iota [-1] start %s step %s : i64, i64 -> tensor<?xi64>
  func.return %y : tensor<?xi64>
}
