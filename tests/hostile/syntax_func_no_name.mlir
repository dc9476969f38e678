// expect: ParseError
func.func (%x: tensor<4xf32>) {
  func.return
}
