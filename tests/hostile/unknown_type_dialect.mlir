// expect: ParseError
func.func @f(%x: !nosuch.t) {
  func.return
}
