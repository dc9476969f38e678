// expect: ParseError
func.func @f(%x: tensor<?x4>) {
  func.return
}
